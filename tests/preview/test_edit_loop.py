"""The serve loop's memoized re-check: a save that introduces a problem reports it (terminal and banner), a save
that fixes it clears it, and each kind of file re-runs what depends on it (``qbank.preview.serve.rebuild``)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from qbank.memo import Memo
from qbank.pipeline import check_all
from qbank.preview import close_session, open_session
from qbank.preview.serve import Rebuild, rebuild

from ..conftest import CASES, make_site_repo

URL = "http://127.0.0.1:8000/"
BASE = "base-question"


class Loop:
    """The serve loop in process: a site repository, its session and the preview folder."""

    def __init__(self, root: Path, site: Path) -> None:
        self.root, self.site = root, site

    def save(self, rel: str, old: str, new: str) -> Rebuild:
        """Replace ``old`` by ``new`` in one file, then rebuild as the watcher would."""
        path = self.root / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        return self.rebuild()

    def rebuild(self) -> Rebuild:
        """One rebuild; the memoized report must equal a fresh check's."""
        result = rebuild(self.root, self.site, URL)
        assert result.failure is None, result.failure
        assert texts(result) == [p.text() for p in check_all(self.root)[1].sorted()]
        return result

    def banner(self, slug: str) -> str:
        """The preview banner of a question page ('' when there is none)."""
        html = (self.site / "questions" / slug / "index.html").read_text(encoding="utf-8")
        m = re.search(r'<div class="qb-preview-banner".*?</div>', html, re.DOTALL)
        return m.group(0) if m else ""


def texts(result: Rebuild) -> list[str]:
    """The rebuild's problems as the terminal prints them."""
    return [p.text() for p in result.report.sorted()]


def codes(result: Rebuild, path: str) -> set[str]:
    """The problem codes of one file."""
    return {p.code for p in result.report.problems if p.path == path}


def open_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> Iterator[Loop]:
    root = make_site_repo(tmp_path / "repo", CASES / case)
    monkeypatch.chdir(root)
    logging.getLogger("mkdocs").setLevel(logging.ERROR)
    open_session(root)
    try:
        yield Loop(root, tmp_path / "site")
    finally:
        close_session(root)


@pytest.fixture
def base_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Loop]:
    """tests/cases/base (one premium question whose answer binds two numbers) as a site, built once."""
    yield from open_loop(tmp_path, monkeypatch, "base")


@pytest.fixture
def site_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Loop]:
    """tests/cases/site (six questions, six scripts) as a site."""
    yield from open_loop(tmp_path, monkeypatch, "site")


def test_a_number_that_stops_binding_is_reported_then_cleared(base_loop: Loop) -> None:
    answer = f"answers/{BASE}.md"
    first = base_loop.rebuild()
    assert not codes(first, answer), texts(first)
    broken = base_loop.save(answer, "holds 160 vectors", "holds 161 vectors")
    assert codes(broken, answer), texts(broken)
    assert answer in base_loop.banner(BASE)
    fixed = base_loop.save(answer, "holds 161 vectors", "holds 160 vectors")
    assert not codes(fixed, answer), texts(fixed)
    assert base_loop.banner(BASE) == "" or answer not in base_loop.banner(BASE)


def test_a_number_in_a_question_field_is_bound_on_each_save(base_loop: Loop) -> None:
    rel = f"questions/{BASE}.yaml"
    first = base_loop.rebuild()
    broken = base_loop.save(rel, "of one request at long context?", "of one request at 4096 layers?")
    assert codes(broken, rel) - codes(first, rel), texts(broken)
    fixed = base_loop.save(rel, "of one request at 4096 layers?", "of one request at long context?")
    assert codes(fixed, rel) == codes(first, rel), texts(fixed)


def test_a_catalog_edit_re_checks_the_references_to_it(base_loop: Loop) -> None:
    rel = "questions/_catalog/concepts.yaml"
    qrel = f"questions/{BASE}.yaml"
    first = base_loop.rebuild()
    assert "unknown-concept" not in codes(first, qrel)
    renamed = base_loop.save(rel, "- slug: kv-cache\n", "- slug: kv-cache-renamed\n")
    assert "unknown-concept" in codes(renamed, qrel), texts(renamed)
    assert "unknown-concept" in base_loop.banner(BASE)
    back = base_loop.save(rel, "- slug: kv-cache-renamed\n", "- slug: kv-cache\n")
    assert "unknown-concept" not in codes(back, qrel), texts(back)


def test_premium_text_repeated_in_a_free_part_is_reported_then_cleared(base_loop: Loop) -> None:
    answer = f"answers/{BASE}.md"
    secret = "Quantized blocks shrink seventeen lanterns across every quiet orchard before the harvest moon rises."
    base_loop.save(answer, "Multiply it out.", f"Multiply it out. {secret}")
    clean = base_loop.rebuild()  # the premium text changed: new fingerprints, nothing free repeats them
    assert "premium-duplicated" not in codes(clean, answer), texts(clean)
    leaked = base_loop.save(answer, "per token.", f"per token. {secret}")
    assert "premium-duplicated" in codes(leaked, answer), texts(leaked)
    assert "premium-duplicated" in base_loop.banner(BASE)
    fixed = base_loop.save(answer, f"per token. {secret}", "per token.")
    assert "premium-duplicated" not in codes(fixed, answer), texts(fixed)


def test_a_script_edit_re_runs_that_script_alone(site_loop: Loop, monkeypatch: pytest.MonkeyPatch) -> None:
    from qbank.verify import runner

    ran: list[str] = []
    run_script = runner.run_script

    def recording(root: Path, path: Path, *args: object, **kwargs: object) -> object:
        ran.append(path.stem)
        return run_script(root, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "run_script", recording)
    site_loop.rebuild()
    assert len(ran) == 6, ran  # a cold cache: every script
    ran.clear()
    site_loop.save("answers/kv-budget.md", "same budget.", "same budget. An edit.")
    assert ran == []
    site_loop.save("verify/kv-budget.py", '"the fixture script runs")', '"the fixture script still runs")')
    assert ran == ["kv-budget"]
    ran.clear()
    broken = site_loop.save("verify/kv-budget.py", "check(2 * 2 == 4,", "check(2 * 2 == 5,")
    assert ran == ["kv-budget"] and codes(broken, "verify/kv-budget.py"), texts(broken)
    assert "verify/kv-budget.py" in site_loop.banner("kv-budget")
    fixed = site_loop.save("verify/kv-budget.py", "check(2 * 2 == 5,", "check(2 * 2 == 4,")
    assert not codes(fixed, "verify/kv-budget.py"), texts(fixed)


def test_an_unchanged_save_reuses_every_question_page(site_loop: Loop) -> None:
    from qbank.preview import current

    site_loop.rebuild()
    memo = current(site_loop.root).pages
    assert memo.rendered == 6
    site_loop.rebuild()
    assert memo.rendered == 0
    site_loop.save("answers/kv-budget.md", "same budget.", "same budget. FRESH-EDIT-7731.")
    assert memo.rendered == 1
    assert "FRESH-EDIT-7731" in (site_loop.site / "questions" / "kv-budget" / "index.html").read_text()
    # a title is shown on other question pages (related, next in track): every question page renders again
    site_loop.save("questions/kv-fp8.yaml", "title: \"", "title: \"Retitled, ")
    assert memo.rendered == 6


def test_memoized_check_matches_a_fresh_one_after_a_catalog_edit(tiny_repo: Path) -> None:
    memo = Memo()
    fresh = [p.text() for p in check_all(tiny_repo)[1].sorted()]
    assert [p.text() for p in check_all(tiny_repo, memo=memo)[1].sorted()] == fresh
    topics = tiny_repo / "questions" / "_catalog" / "topics.yaml"
    topics.write_text(topics.read_text() + "  - {bad: item}\n")
    edited = [p.text() for p in check_all(tiny_repo, memo=memo)[1].sorted()]
    assert edited == [p.text() for p in check_all(tiny_repo)[1].sorted()] and edited != fresh


def test_listing_pages_stay_through_an_answer_edit_and_follow_a_title_or_catalog_edit(site_loop: Loop) -> None:
    from qbank.preview import current

    site_loop.rebuild()
    memo = current(site_loop.root).pages
    topic = site_loop.site / "topics" / "kv-cache" / "index.html"
    home = site_loop.site / "index.html"
    company = site_loop.site / "companies" / "xai" / "index.html"
    written = topic.stat().st_mtime_ns
    site_loop.save("answers/kv-budget.md", "same budget.", "same budget. FRESH-EDIT-4410.")
    assert memo.listings_rendered == 0 and topic.stat().st_mtime_ns == written  # kept, not written again
    site_loop.save("questions/kv-fp8.yaml", 'title: "', 'title: "RETITLED-2207 ')
    assert memo.listings_rendered > 0
    assert "RETITLED-2207" in topic.read_text(encoding="utf-8")
    assert "RETITLED-2207" in home.read_text(encoding="utf-8")  # the editors' picks list every question here
    site_loop.save("questions/_catalog/companies.yaml", "looks_for: Deep", "looks_for: LOOKS-FOR-3391 Deep")
    assert "LOOKS-FOR-3391" in company.read_text(encoding="utf-8")
