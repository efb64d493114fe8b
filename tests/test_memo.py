"""A memo kept between checks (as `qbank serve` keeps one) gives the reports a fresh check gives."""

from __future__ import annotations

import os
from pathlib import Path

from qbank.claims.extract import _extracted
from qbank.memo import Memo
from qbank.pipeline import check_all


def texts(root: Path, memo: Memo | None) -> list[str]:
    """The problems of a check as text lines."""
    return [p.text() for p in check_all(root, memo=memo)[1].sorted()]


def test_memoized_checks_match_fresh_ones_across_edits(tiny_repo: Path) -> None:
    memo = Memo()
    assert texts(tiny_repo, memo) == texts(tiny_repo, None)
    assert memo.loaded
    files = len(memo.loaded)
    # answers' extraction is kept by text (extract's own cache): an unchanged answer is not extracted again
    misses = _extracted.cache_info().misses
    assert texts(tiny_repo, memo) == texts(tiny_repo, None)
    assert _extracted.cache_info().misses == misses and _extracted.cache_info().hits > 0

    question = tiny_repo / "questions" / "base-question.yaml"
    original = question.read_text()
    question.write_text(original.replace("difficulty:", "difficulty: [", 1))
    broken = texts(tiny_repo, memo)
    assert broken == texts(tiny_repo, None)
    assert any("questions/base-question.yaml" in t and ": error: " in t for t in broken)
    question.write_text(original)
    assert texts(tiny_repo, memo) == texts(tiny_repo, None)

    answer = tiny_repo / "answers" / "base-question.md"
    answer.write_text(answer.read_text() + "\nThe cluster has 977 GPUs.\n")
    assert texts(tiny_repo, memo) == texts(tiny_repo, None)
    assert any("977 GPUs" in t for t in texts(tiny_repo, memo))
    # one kept parse a file, however often it was saved (a server that runs for days does not grow)
    assert len(memo.loaded) == files


def test_a_same_size_rewrite_with_a_new_mtime_is_parsed_again(tiny_repo: Path) -> None:
    memo = Memo()
    question = tiny_repo / "questions" / "base-question.yaml"
    before = texts(tiny_repo, memo)
    original = question.read_text()
    swapped = original.replace("difficulty: 2", "difficulty: 9") if "difficulty: 2" in original else None
    assert swapped is not None, original
    question.write_text(swapped)  # same size, new content
    st = question.stat()
    os.utime(question, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    after = texts(tiny_repo, memo)
    assert after == texts(tiny_repo, None) and after != before
