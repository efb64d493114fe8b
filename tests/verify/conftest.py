"""Fixtures for the verification engine: a tiny repository with scripts, questions and the facts file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ..conftest import CASES, REPO

VERIFY_CASES = CASES / "verify"
QUESTION = """title: How big is the KV cache of one request at long context?
teaser: >-
  Layers, KV heads, head size and bytes per value multiply into a number that decides how many
  requests fit on a GPU. Work it out for a real model.
topic: kv-cache
difficulty: 2
editorial_rank: 990
access: free
kind: derivation
short_title: "KV cache of one request"
description: "The KV cache of one request at long context, sized from layers, heads, head size and bytes."
"""


def add_script(root: Path, slug: str, text: str, timeout: int | None = None) -> Path:
    """Write ``verify/<slug>.py`` and a question for it (with ``verify.timeout`` when given)."""
    path = root / "verify" / f"{slug}.py"
    path.write_text(text, encoding="utf-8")
    extra = f"verify:\n  timeout: {timeout}\n" if timeout else ""
    (root / "questions" / f"{slug}.yaml").write_text(QUESTION + extra, encoding="utf-8")
    return path


@pytest.fixture
def vrepo(tmp_path: Path) -> Path:
    """The base corpus with the real facts file and no cache."""
    root = tmp_path / "repo"
    shutil.copytree(CASES / "base", root)
    (root / "verify" / "_lib").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "verify" / "_lib" / "facts.yaml", root / "verify" / "_lib" / "facts.yaml")
    return root
