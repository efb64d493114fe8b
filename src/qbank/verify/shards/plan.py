"""The shard plan: recorded run times from the cache index, the shard count from ``pyproject.toml``, and the
plan file a CI setup job writes once and every shard job reads (so all shards split the same way)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .partition import estimates, loads, partition

PLAN_VERSION = 1
CONFIG_KEY = "verify-shards"
"""``[tool.qbank] verify-shards = N`` in ``pyproject.toml``: how many CI machines verify in parallel."""


class PlanError(ValueError):
    """A plan that does not fit this repository or this request (usage error)."""


def shard_count(root: Path) -> int:
    """N from ``[tool.qbank] verify-shards`` of the repository's ``pyproject.toml`` (1 when unset)."""
    import tomllib

    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return 1
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PlanError(f"pyproject.toml: cannot read [tool.qbank] {CONFIG_KEY}: {exc}") from exc
    value = data.get("tool", {}).get("qbank", {}).get(CONFIG_KEY, 1)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 256:
        raise PlanError(f"pyproject.toml: [tool.qbank] {CONFIG_KEY} must be an integer from 1 to 256, got {value!r}")
    return value


def make_plan(slugs: list[str], recorded: dict[str, float], n: int) -> dict[str, Any]:
    """The plan for these scripts: N shards balanced by their recorded run times (the cache index's
    ``Index.durations``), with each shard's estimated seconds."""
    seconds = estimates(slugs, recorded)
    shards = partition(seconds, n)
    known = sum(1 for s in slugs if s in recorded)
    return {
        "version": PLAN_VERSION,
        "n": n,
        "recorded": known,
        "shards": shards,
        "seconds": [round(x, 3) for x in loads(seconds, shards)],
    }


def read_plan(path: Path) -> dict[str, Any]:
    """A plan file written by :func:`make_plan` (``qbank verify --write-plan``)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PlanError(f"{path}: cannot read the shard plan: {exc}") from exc
    ok = (
        isinstance(data, dict)
        and data.get("version") == PLAN_VERSION
        and isinstance(data.get("n"), int)
        and isinstance(data.get("shards"), list)
        and len(data["shards"]) == data["n"]
        and all(isinstance(s, list) and all(isinstance(x, str) for x in s) for s in data["shards"])
    )
    if not ok:
        raise PlanError(f"{path}: not a shard plan (version {PLAN_VERSION}: n and n lists of slugs)")
    return dict(data)


def select(
    slugs: list[str], shard: tuple[int, int], recorded: dict[str, float], plan: dict[str, Any] | None
) -> list[str]:
    """The scripts of shard K of N (in ``slugs`` order): from the plan when given, else planned here from the
    recorded run times. A plan must cover exactly these scripts: one made for another commit is refused."""
    k, n = shard
    if plan is None:
        plan = make_plan(slugs, recorded, n)
    elif plan["n"] != n:
        raise PlanError(f"--shard {k}/{n}: the plan has {plan['n']} shards")
    else:
        planned = [s for part in plan["shards"] for s in part]
        if len(planned) != len(set(planned)):
            raise PlanError("the shard plan lists a script twice")
        extra, missing = set(planned) - set(slugs), set(slugs) - set(planned)
        if extra or missing:
            said = [f"not in the plan: {', '.join(sorted(missing))}"] if missing else []
            said += [f"no such script: {', '.join(sorted(extra))}"] if extra else []
            raise PlanError(f"the shard plan is for other scripts ({'; '.join(said)})")
    mine = set(plan["shards"][k - 1])
    return [s for s in slugs if s in mine]


def describe(plan: dict[str, Any]) -> str:
    """One line per shard: its scripts and estimated seconds."""
    total = sum(map(len, plan["shards"]))
    lines = [f"{plan['n']} shards, {total} scripts ({plan.get('recorded', 0)} with a recorded run time; "
             "the others estimated)"]
    for k, (part, secs) in enumerate(zip(plan["shards"], plan["seconds"], strict=True), start=1):
        lines.append(f"shard {k}/{plan['n']}: {len(part)} script{'' if len(part) == 1 else 's'}, {secs:.1f} s")
    return "\n".join(lines)
