"""Premium that sells itself: a free one-line summary per sealed section (counted and checked as public text),
shown on the locked placeholder, and one unlock call to action per page."""

from __future__ import annotations

import shutil
from pathlib import Path

from qbank.corpus import load_corpus
from qbank.paywall.encrypt import placeholder
from qbank.pipeline import duplicated_problems

from ..conftest import CASES, make_site_repo

PREMIUM = "The outlier channel of the value cache saturates first when the calibration window skips the long tail"


def test_placeholder_shows_the_summary_and_only_the_first_carries_the_call_to_action() -> None:
    first = placeholder("1", "Rounding <a>", "h", 120, "f.json", "/pricing/", summary="What it holds & why", first=True)
    later = placeholder("2", "More", None, 80, "f.json", "/pricing/", summary="Another line", first=False)
    assert '<p class="qb-locked__summary">What it holds &amp; why</p>' in first
    assert "qb-unlock-open" in first and ">Get a key</a>" in first and 'href="/pricing/"' in first
    assert "qb-unlock-open" not in later and "Get a key" not in later and "Another line" in later
    assert "6-month" not in first + later  # the offer's terms live on the pricing page, from shop.yaml


def test_a_premium_question_needs_one_summary_per_section(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(CASES / "site", content)
    q = content / "questions" / "kv-fp8.yaml"
    text = q.read_text()
    q.write_text(text[: text.index("premium_summaries:")])
    _, report = load_corpus(make_site_repo(tmp_path / "repo", content))
    found = [(p.path, p.code) for p in report.problems]
    assert found == [("questions/kv-fp8.yaml", "premium-summary-count")]


def test_a_summary_repeating_premium_text_is_a_positioned_error(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(CASES / "site", content)
    fp8 = content / "answers" / "kv-fp8.md"
    fp8.write_text(fp8.read_text().replace("SECRET-PREMIUM-FP8-ROUNDING:", PREMIUM + ". SECRET-PREMIUM-FP8-ROUNDING:"))
    q = content / "questions" / "kv-fp8.yaml"
    lines = q.read_text().split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("premium_summaries:")) + 1
    lines[at] = f'  - "{PREMIUM[:150]}"'
    q.write_text("\n".join(lines))
    corpus, report = load_corpus(make_site_repo(tmp_path / "repo", content))
    assert report.errors == 0, [p.text() for p in report.problems]
    problems = duplicated_problems(corpus)
    assert [(p.path, p.line, p.code) for p in problems] == [("questions/kv-fp8.yaml", at + 1, "premium-duplicated")]


def test_no_placeholder_field_can_open_an_element() -> None:
    hostile = '"><img src=x onerror=alert(1)>'
    out = placeholder(hostile, "H " + hostile, hostile, 10, hostile, "/p?a=1&b=" + hostile, summary=hostile)
    assert "<img" not in out and "onerror=alert(1)>" not in out
    assert out.count("<section") == 1 and out.count("</section>") == 1
    # the section's id and data attribute, the file, the heading's id and text, the summary, the link
    assert out.count('&#34;&gt;&lt;img src=x onerror=alert(1)&gt;') == 7
    assert 'href="/p?a=1&amp;b=' in out
