"""sitemap.xml from git dates: indexable pages only, lastmod per page's sources, stable across runs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from qbank.render.seo import PageMeta
from qbank.render.settings import Settings
from qbank.render.sitemap import git_lastmod, parse_git_log, robots_txt, sitemap_xml


def git(root: Path, *args: str, date: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def test_parse_git_log_keeps_newest_date() -> None:
    out = "\x1e2026-03-02\n\nquestions/a.yaml\n\x1e2026-01-05\n\nquestions/a.yaml\nanswers/a.md\n"
    assert parse_git_log(out) == {"questions/a.yaml": "2026-03-02", "answers/a.md": "2026-01-05"}


def test_lastmod_from_real_git_history(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "questions").mkdir(parents=True)
    git(root, "init", "-q", date="2026-01-01T00:00:00Z")
    git(root, "config", "user.email", "t@example.org", date="2026-01-01T00:00:00Z")
    git(root, "config", "user.name", "t", date="2026-01-01T00:00:00Z")
    (root / "questions" / "a.yaml").write_text("a: 1\n")
    (root / "questions" / "b.yaml").write_text("b: 1\n")
    git(root, "add", "-A", date="2026-01-05T10:00:00Z")
    git(root, "commit", "-qm", "one", date="2026-01-05T10:00:00Z")
    (root / "questions" / "b.yaml").write_text("b: 2\n")
    git(root, "commit", "-qam", "two", date="2026-02-07T10:00:00Z")
    (root / "questions" / "a.yaml").write_text("a: uncommitted\n")  # not in git: does not move the date
    dates = git_lastmod(root)
    assert dates == {"questions/a.yaml": "2026-01-05", "questions/b.yaml": "2026-02-07"}
    pages = [
        PageMeta("questions/a.md", "A", "a", (("A", "questions/a.md"),), sources=("questions/a.yaml",)),
        PageMeta("index.md", "H", "h", (("Home", "index.md"),), sources=("questions/a.yaml", "questions/b.yaml")),
        PageMeta("hidden.md", "X", "x", (("X", "hidden.md"),), indexable=False, sources=("questions/b.yaml",)),
        PageMeta("new.md", "N", "n", (("N", "new.md"),), sources=("site_src/new.md",)),
    ]
    xml = sitemap_xml(pages, dates, Settings())
    assert "<loc>https://qbank.example/</loc>\n    <lastmod>2026-02-07</lastmod>" in xml
    assert "<loc>https://qbank.example/questions/a/</loc>\n    <lastmod>2026-01-05</lastmod>" in xml
    assert "<loc>https://qbank.example/new/</loc>\n  </url>" in xml  # never committed: no lastmod at all
    assert "hidden" not in xml
    assert xml == sitemap_xml(list(reversed(pages)), git_lastmod(root), Settings())


def test_outside_git_there_are_no_dates(tmp_path: Path) -> None:
    assert git_lastmod(tmp_path) == {}


def test_robots_points_at_sitemap() -> None:
    assert robots_txt(Settings(site_url="https://a.test")).endswith("Sitemap: https://a.test/sitemap.xml\n")
