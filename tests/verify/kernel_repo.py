"""A one-script copy of the repository's verification inputs, verified for real: what the kernel tests share."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from qbank.verify import store
from qbank.verify.engine import VerifyConfig, verify

from ..conftest import REPO


def repo_with(tmp_path: Path, slug: str) -> Path:
    """A copy of the repository's verification inputs for one script (the script, its question, the facts and
    the shared ``verify/_lib`` modules, where several scripts keep their kernels)."""
    root = tmp_path / "repo"
    (root / "verify" / "_lib").mkdir(parents=True)
    (root / "questions").mkdir()
    shutil.copy(REPO / "verify" / f"{slug}.py", root / "verify")
    shutil.copy(REPO / "questions" / f"{slug}.yaml", root / "questions")
    for lib in [REPO / "verify" / "_lib" / "facts.yaml", *(REPO / "verify" / "_lib").glob("*.py")]:
        shutil.copy(lib, root / "verify" / "_lib")
    return root


def run(root: Path, slug: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Verify ``slug`` on the CPU in the sandbox: its result and the record the store kept."""
    result = verify(root, VerifyConfig(slugs=[slug], device="cpu")).results[0]
    entry = store.read_entry(root, slug)
    assert entry is not None
    return result, entry["record"]
