"""Practice content checks for `qbank check` and `qbank build`: load, cross-check, run the drills' tests."""

from __future__ import annotations

import re
from pathlib import Path

from ..corpus import Corpus
from ..problems import Problem
from .drills import check_drills
from .load import Bank, cross_check, load_bank


def check_practice(
    root: Path, corpus: Corpus, *, run: bool = True, trust_local: bool = False
) -> tuple[Bank, list[Problem]]:
    """Every problem of ``practice/`` and ``drills/``; with ``run``, drills' tests run behind the sandbox."""
    bank, problems = load_bank(root)
    problems += cross_check(root, corpus, bank)
    if run and bank.drills:
        problems += check_drills(root, bank, trust_local=trust_local)
    return bank, problems


_UNUSED = re.compile(r"^claim '([^']+)' is never stated")


def keyed_claims_used(problems: list[Problem], bank: Bank) -> list[Problem]:
    """The claims checker's problems less ``claim-unused`` for claims a practice key states to readers."""
    used = {(f"verify/{k.question}.py", k.claim) for k in bank.keys.values()}
    out = []
    for p in problems:
        m = _UNUSED.match(p.message) if p.code == "claim-unused" else None
        if m and (p.path, m.group(1)) in used:
            continue
        out.append(p)
    return out
