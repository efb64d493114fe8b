"""Preview banners and the preview flag: what a page shows, and who may turn the flag on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qbank import preview
from qbank.problems import Report, error, warning


def report_of(*problems: Any) -> Report:
    """A report holding these problems."""
    report = Report()
    report.extend(problems)
    return report


def session_with(report: Report, root: Path) -> preview.Session:
    """A session as the serve loop leaves it after a check."""
    session = preview.Session(root=root)
    session.report, session.grouped = report, preview.by_slug(report)
    return session


def test_a_question_page_banner_lists_its_files_problems_with_positions(tmp_path: Path) -> None:
    report = report_of(
        error("answers/a.md", 3, 1, "premium-unclosed", "premium block is never closed"),
        warning("verify/a.py", 7, 1, "claim-unused", "claim 'x' <is> never stated"),
        error("answers/b.md", 1, 1, "claim-unbound", "other question"),
        error("questions/_catalog/topics.yaml", 2, 3, "yaml-syntax", "catalog"),
    )
    session = session_with(report, tmp_path)
    page = preview.banner_for(session, "questions/a.md")
    assert "1 error, 1 warning in this question" in page
    assert "answers/a.md:3:1" in page and "[premium-unclosed]" in page
    assert "verify/a.py:7:1" in page and "&lt;is&gt;" in page  # messages are escaped
    assert "answers/b.md" not in page and "topics.yaml" not in page
    assert preview.banner_for(session, "questions/c.md") == ""
    assert preview.banner_for(session, "topics/index.md") == ""
    home = preview.banner_for(session, "index.md")
    assert "3 errors, 1 warning in 4 files" in home and "topics.yaml:2:3" in home


def test_the_home_banner_lists_the_first_problems_and_counts_all(tmp_path: Path) -> None:
    many = [error(f"answers/q{i:03d}.md", 1, 1, "claim-unbound", "n") for i in range(preview.SHOWN_LIMIT + 5)]
    home = preview.home_banner(report_of(*many))
    assert home.count("<li") == preview.SHOWN_LIMIT
    assert "and 5 more" in home and f"{len(many)} errors" in home
    assert preview.home_banner(Report()) == ""


def test_the_flag_needs_a_serve_session(tmp_path: Path) -> None:
    config: dict[str, Any] = {"extra": {"qbank": {"home_top": 3}}}
    assert preview.session_for(config, tmp_path) is None  # no flag: a normal build
    preview.set_flag(config)
    assert config["extra"]["qbank"] == {"home_top": 3, "preview": True}
    with pytest.raises(preview.PreviewFlagError):
        preview.session_for(config, tmp_path)
    session = preview.open_session(tmp_path)
    try:
        assert preview.session_for(config, tmp_path) is session
    finally:
        preview.close_session(tmp_path)
    with pytest.raises(preview.PreviewFlagError):
        preview.session_for(config, tmp_path)
