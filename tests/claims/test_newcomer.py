"""A newcomer's first command passes: the real scaffold, on a copy of the real repository, through the real check.

Whatever the grammar reads next, the answer ``qbank new question`` writes must bind (its placeholder once said
"half", an unbound number, and failed ``qbank check`` on day one).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONTENT = ("questions", "answers", "verify", "schemas", "paywall", "mkdocs.yml", "pyproject.toml", "claims.lock")


def _qbank(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "qbank.cli", *args]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600, check=False)


def test_the_scaffold_passes_the_real_check_on_the_real_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for part in CONTENT:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, root / part, ignore=shutil.ignore_patterns("__pycache__", ".qbank"))
        elif src.is_file():
            shutil.copy2(src, root / part)
    slug = "newcomer-first-question"
    made = _qbank(root, "new", "question", "--root", str(root), "--slug", slug, "--topic", "speculative-decoding")
    assert made.returncode == 0, made.stdout + made.stderr
    # the scaffold's numbers join the committed lock, so the check below finds it current
    assert f"numbers of answers/{slug}.md locked" in made.stdout, made.stdout
    assert f"answers/{slug}.md " in (root / "claims.lock").read_text(encoding="utf-8")
    ran = _qbank(root, "verify", "--root", str(root), slug)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # only the new files are reported (the rest of the copy has no verification records of its own)
    checked = _qbank(root, "check", "--root", str(root), "--no-verify", f"answers/{slug}.md", f"verify/{slug}.py")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = checked.stdout + checked.stderr
    assert re.search(r"(?m)^0 errors, ", out), out
    assert "[claim" not in out, out  # every number of the scaffold bound, none unread
