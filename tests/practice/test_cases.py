"""Broken practice content under tests/cases/invalid/practice: each case declares the problems it must produce.

A test case (``*.yaml``) replaces the practice corpus's tests; a drill case (a folder) is the corpus's
drill with some files replaced (or deleted), checked through the sandbox like `qbank check` does.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from qbank.corpus import load_corpus
from qbank.practice.check import check_practice
from qbank.problems import Level

from ..conftest import CASES

CASE_DIR = CASES / "invalid" / "practice"
EXPECT_RE = re.compile(r"(?:(?P<path>\S+\.\w+)\s+)?(?P<line>\d+):(?P<col>\d+)\s+(?P<code>[a-z0-9-]+)")


def invalid_tests() -> list[Path]:
    return sorted(CASE_DIR.glob("*.yaml"))


def drill_cases() -> list[Path]:
    return sorted(p for p in (CASE_DIR / "drills").iterdir() if p.is_dir())


def _errors(root: Path, run: bool) -> set[tuple[str, int, int, str]]:
    corpus, _ = load_corpus(root)
    _bank, problems = check_practice(root, corpus, run=run)
    return {(p.path, p.line, p.col, p.code) for p in problems if p.level is Level.ERROR}


def test_the_practice_corpus_itself_is_clean(practice_repo: Path) -> None:
    assert _errors(practice_repo, run=True) == set()


@pytest.mark.parametrize("case", invalid_tests(), ids=lambda p: p.name)
def test_invalid_test_case(case: Path, practice_repo: Path) -> None:
    for old in (practice_repo / "practice").glob("*.yaml"):
        old.unlink()
    rel = f"practice/{case.name}"
    (practice_repo / rel).write_bytes(case.read_bytes())
    header = case.read_text().split("\n")[1]
    assert header.startswith("# expect:"), case
    want = {(m.group("path") or rel, int(m.group("line")), int(m.group("col")), m.group("code"))
            for m in EXPECT_RE.finditer(header)}
    assert want
    assert _errors(practice_repo, run=False) == want


@pytest.mark.parametrize("case", drill_cases(), ids=lambda p: p.name)
def test_invalid_drill_case(case: Path, practice_repo: Path) -> None:
    drills = practice_repo / "drills"
    (only,) = [p for p in drills.iterdir() if p.is_dir()]
    target = drills / case.name
    only.rename(target)
    lines = (case / "expect").read_text().splitlines()[1:]
    for line in lines:
        if line.startswith("delete:"):
            (target / line.split(":", 1)[1].strip()).unlink()
    for f in case.iterdir():
        if f.name != "expect":
            shutil.copy(f, target / f.name)
    want = {(m.group("path"), int(m.group("line")), int(m.group("col")), m.group("code"))
            for line in lines for m in [EXPECT_RE.fullmatch(line.strip())] if m}
    assert want
    assert _errors(practice_repo, run=True) == want
