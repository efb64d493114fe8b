"""Shared fixtures: a tiny valid corpus copied into a temporary repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CASES = Path(__file__).parent / "cases"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Path:
    """A copy of tests/cases/base: two topics, one company, one premium question."""
    root = tmp_path / "repo"
    shutil.copytree(CASES / "base", root)
    return root
