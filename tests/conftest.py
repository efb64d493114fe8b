"""Shared fixtures: a tiny valid corpus copied into a temporary repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CASES = Path(__file__).parent / "cases"
REPO = Path(__file__).resolve().parents[1]
CASE_IGNORE = shutil.ignore_patterns(".qbank", "site", "__pycache__")
"""What a copy of a case folder leaves behind: local caches and builds made by running qbank inside it."""


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Path:
    """A copy of tests/cases/base: two topics, one company, one premium question."""
    root = tmp_path / "repo"
    shutil.copytree(CASES / "base", root, ignore=CASE_IGNORE)
    return root
