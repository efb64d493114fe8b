"""Fixtures for the claims tests: answers with their recorded values, from the repo and the claims case."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from qbank.claims.bind import Declared
from qbank.claims.values import record_values

from ..conftest import CASES, REPO

CLAIMS_CASE = CASES / "claims"


@dataclass(frozen=True)
class RecordedAnswer:
    """An answer's Markdown and the values its script recorded."""

    slug: str
    path: str
    text: str
    values: list[Declared] | None


def run_script(root: Path, slug: str, tmp: Path) -> dict[str, Any] | None:
    """Run a verification script once, for real, and read the record it writes."""
    out = tmp / f"{slug}.json"
    env = {**os.environ, "QBANK_VERIFY_OUT": str(out), "QBANK_DEVICE": "cpu"}
    if (root / "verify" / "_lib" / "facts.yaml").is_file():
        env["QBANK_FACTS"] = str(root / "verify" / "_lib" / "facts.yaml")
    subprocess.run(
        [sys.executable, str(root / "verify" / f"{slug}.py")],
        cwd=tmp,
        env=env,
        check=False,
        capture_output=True,
        timeout=300,
    )
    return json.loads(out.read_text()) if out.exists() else None


def recorded(root: Path, tmp: Path) -> list[RecordedAnswer]:
    """Every answer under ``root`` with its values: the store's latest record if any, else one real run."""
    try:
        store: Any = importlib.import_module("qbank.verify.store")
    except ImportError:
        store = None
    slugs = sorted(p.stem for p in (root / "answers").glob("*.md") if not p.name.startswith("_"))

    def one(slug: str) -> RecordedAnswer:
        record = store.latest_record(root, slug) if store is not None else None
        if record is None and (root / "verify" / f"{slug}.py").is_file():
            record = run_script(root, slug, tmp)
        text = (root / "answers" / f"{slug}.md").read_text(encoding="utf-8")
        return RecordedAnswer(slug, f"answers/{slug}.md", text, record_values(record))

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, slugs))


@pytest.fixture(scope="session")
def claims_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny base corpus plus the realistic claims case (a 1M-token KV cache answer and its script)."""
    root = tmp_path_factory.mktemp("claims") / "repo"
    shutil.copytree(CASES / "base", root)
    shutil.copytree(CLAIMS_CASE, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="session")
def recorded_answers(claims_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> list[RecordedAnswer]:
    """The repository's answers and the claims case's answer, each with its recorded values."""
    tmp = tmp_path_factory.mktemp("records")
    case = [a for a in recorded(claims_repo, tmp) if a.slug in {p.stem for p in (CLAIMS_CASE / "answers").iterdir()}]
    repo = recorded(REPO, tmp) if (REPO / "answers").is_dir() else []
    return case + repo
