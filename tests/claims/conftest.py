"""Fixtures for the claims tests: answers with their recorded values, from the repo and the claims case."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from qbank.claims.bind import Declared
from qbank.claims.values import record_values

from ..conftest import CASE_IGNORE, CASES

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
    # on the CPU Triton kernels run through the interpreter, as the runner sets it for every CPU run
    # and shared kernels import from verify/_lib, which the runner puts on the path
    env = {**os.environ, "QBANK_VERIFY_OUT": str(out), "QBANK_DEVICE": "cpu", "TRITON_INTERPRET": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(root / "verify" / "_lib"), env.get("PYTHONPATH", "")] if p)
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


def recorded_answer(root: Path, slug: str, tmp: Path) -> RecordedAnswer:
    """One answer with the values its script records when run now, for real, into ``tmp``.

    Never the store's cached record under ``root`` (a developer's ``.qbank``): a verify-script regression
    must fail here as it does in a clean clone, not hide behind a record from before it.
    """
    record = run_script(root, slug, tmp) if (root / "verify" / f"{slug}.py").is_file() else None
    text = (root / "answers" / f"{slug}.md").read_text(encoding="utf-8")
    return RecordedAnswer(slug, f"answers/{slug}.md", text, record_values(record))


def answer_slugs(root: Path) -> list[str]:
    """Slugs of the answers under ``root``."""
    folder = root / "answers"
    return sorted(p.stem for p in folder.glob("*.md") if not p.name.startswith("_")) if folder.is_dir() else []


@pytest.fixture(scope="session")
def claims_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny base corpus plus the realistic claims case (a 1M-token KV cache answer and its script)."""
    root = tmp_path_factory.mktemp("claims") / "repo"
    shutil.copytree(CASES / "base", root, ignore=CASE_IGNORE)
    shutil.copytree(CLAIMS_CASE, root, dirs_exist_ok=True, ignore=CASE_IGNORE)
    return root
