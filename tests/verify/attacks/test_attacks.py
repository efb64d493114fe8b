"""The attack suite: every hostile case is contained (its code reported, nothing outside changed, no leak)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from .conftest import CASES, alive, cleanup, codes, load_case, run_stage, setup, snapshot

NAMES = sorted(p.name for p in CASES.iterdir() if (p / "case.yaml").is_file())
# as "user": root drops to an unprivileged user for the run; a suite already running as a user runs each case
# once, as itself (its "root" run is the user run), rather than skipping a duplicate
PARAMS = [(n, who) for n in NAMES for who in load_case(n)["as"] if who != "user" or os.geteuid() == 0]


@pytest.mark.parametrize(("name", "who"), PARAMS, ids=[f"{n}-{w}" for n, w in PARAMS])
def test_attack_is_contained(name: str, who: str) -> None:
    as_user = who == "user"
    atk = setup(name, as_user)
    evidence = Path("/tmp") / f"qbank-attack-{name}"
    evidence.unlink(missing_ok=True)
    try:
        if atk.spec.get("refused_statically"):
            # first wall: the static check refuses the script before it runs ...
            report = run_stage(atk, as_user)
            refused = [r for r in report.get("results", []) if r["message"].startswith("not run: the static check")]
            assert refused, f"{name}: the static check let it run: {report.get('results')}"
            assert all(r["sandbox"] is None for r in refused)
            # ... second wall: with the static check off, the sandbox contains it
            report = run_stage(atk, as_user, static_check=False)
        else:
            report = run_stage(atk, as_user)
        assert report, f"no JSON report (exit {atk.returncode}): {atk.stderr[-2000:]}"
        got = codes(report)
        missing = set(load_case(name)["expect"]) - got
        assert not missing, f"{name}: expected {missing}, got {got}: {report.get('results')}"
        time.sleep(0.2)
        assert alive(atk) == [], "a process of the attack is still alive"
        after = snapshot(atk)
        changed = {k for k in set(after) | set(atk.before) if after.get(k) != atk.before.get(k)}
        assert changed == set(), f"changed outside the run folder: {sorted(changed)}"
        assert not evidence.exists(), f"{evidence} was created"
        assert not (atk.repo / "pwned-by-attack").exists()
        # another question's cache entry and derivation (the hostile kv-budget's own record holds its source)
        poisoned = [
            p
            for p in (atk.repo / ".qbank").rglob("*")
            if p.is_file() and not p.name.startswith("kv-budget") and b"poisoned" in p.read_bytes()
        ]
        assert poisoned == []
        if atk.spec["canaries_absent"]:
            texts = {"stdout": atk.stdout, "stderr": atk.stderr}
            for folder in (atk.repo / ".qbank", atk.repo / "site"):
                for p in folder.rglob("*") if folder.exists() else []:
                    if p.is_file() and p.name != "canary":
                        texts[str(p)] = p.read_bytes().decode("utf-8", "replace")
            leaks = [(where, c) for where, text in texts.items() for c in atk.canaries if c in text]
            assert leaks == [], f"canaries leaked: {leaks}"
    finally:
        cleanup(atk)
        evidence.unlink(missing_ok=True)
