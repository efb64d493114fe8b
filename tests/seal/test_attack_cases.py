"""The seal's build-stage attack cases (tests/verify/attacks/cases/seal-*), run through the real CLI.

Each case overlays the tiny site corpus, runs its stage with ``--format json`` and asserts the expected
problem codes; then an independent grep of ``site/`` (``grep -a -r`` and ``zgrep``, not the scanner under
test) finds none of the case's canary words, and the injected markup is gone from the built pages.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..conftest import CASES, make_site_repo

CASE_DIR = Path(__file__).parents[1] / "verify" / "attacks" / "cases"
SEAL_CASES = sorted(p.name for p in CASE_DIR.glob("seal-*"))
CANARY_RE = re.compile(rb"SEAL(?:CANARY|INJECT)\w*")


def overlay(tmp: Path, case: str) -> Path:
    content = tmp / "content"
    shutil.copytree(CASES / "site", content)
    shutil.copytree(CASE_DIR / case, content, dirs_exist_ok=True)
    (content / "case.yaml").unlink()
    return make_site_repo(tmp / "repo", content)


def canaries(case: str) -> set[bytes]:
    found: set[bytes] = set()
    for p in (CASE_DIR / case).rglob("*"):
        if p.is_file() and p.name != "case.yaml":
            found.update(CANARY_RE.findall(p.read_bytes()))
    return found


def run_stage(root: Path, stage: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "qbank.cli", stage, "--format", "json", "--root", str(root)]
    if stage == "build":
        args.append("--no-links")
    return subprocess.run(args, capture_output=True, text=True, env=os.environ.copy(), timeout=300)


def grep_site(site: Path, word: bytes) -> list[str]:
    """Files of ``site`` holding ``word``: plain grep for every file, zgrep for gzip ones."""
    hits = subprocess.run(["grep", "-r", "-l", "-a", word.decode(), str(site)], capture_output=True, text=True)
    out = hits.stdout.split()
    for gz in site.rglob("*.gz"):
        z = subprocess.run(["zgrep", "-l", "-a", word.decode(), str(gz)], capture_output=True, text=True)
        out += z.stdout.split()
    return out


@pytest.mark.parametrize("case", SEAL_CASES)
def test_seal_attack_case(tmp_path: Path, case: str) -> None:
    spec = yaml.safe_load((CASE_DIR / case / "case.yaml").read_text())
    root = overlay(tmp_path, case)
    run = run_stage(root, spec["stage"])
    codes = {p["code"] for p in json.loads(run.stdout or "{}").get("problems", [])} if run.stdout.strip() else set()
    assert set(spec["expect"]) <= codes, (codes, run.stderr[-2000:])
    words = canaries(case)
    assert words, "a case plants canary words"
    for w in words:
        assert w.decode() not in run.stdout + run.stderr, f"{w!r} in the command's output"
    if spec["stage"] == "build" and not spec["expect"]:
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        site = root / "site"
        assert (site / "questions").is_dir()
        for w in words:
            assert grep_site(site, w) == [], f"{w!r} published"
        # injected markup is gone: no phishing origin, no <style>/<meta>/<form>/handler from the answer
        assert grep_site(site, b"phish.example") == []
        html = (site / "questions" / "kv-budget" / "index.html").read_text()
        page = html[html.index("<article") : html.index("</article>")]  # the theme's own search form is outside
        for bad in ("http-equiv=\"refresh\"", "onclick=", "javascript:", "<form", "<iframe", "qb-locked md-button"):
            assert bad not in page, bad
    if spec["expect"]:
        assert run.returncode == 1
        assert not (root / "site").exists()
