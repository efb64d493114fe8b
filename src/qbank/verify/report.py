"""Verification reports: JSON (also the bundle a shard hands to ``--merge``) and a Markdown table."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from .engine import VerifyRun
from .outcomes import problem_json


def to_json(run: VerifyRun, with_entries: bool = True) -> dict[str, Any]:
    """The report as data; with the entries of scripts that ran, so that shard reports can be merged."""
    counts = Counter(r["outcome"] for r in run.results)
    data: dict[str, Any] = {
        "device": run.device,
        "summary": {"scripts": len(run.results), "ran": run.ran, "cached": len(run.results) - run.ran, **counts},
        "results": run.results,
        "problems": [problem_json(p) for p in run.report.sorted()],
    }
    if with_entries:
        data["entries"] = run.entries
    return data


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(run: VerifyRun) -> str:
    """A Markdown table: outcome, duration, cache hit or why it ran, device, claims and checks per script."""
    counts = Counter(r["outcome"] for r in run.results)
    head = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    lines = [
        f"### qbank verify: {len(run.results)} scripts, {run.ran} ran, {len(run.results) - run.ran} cached ({head})",
        "",
        "| script | outcome | duration | cache | device | claims | checks | note |",
        "| --- | --- | ---: | --- | --- | ---: | ---: | --- |",
    ]
    for r in run.results:
        cache = "hit" if r["cache"] == "hit" else f"ran: {r.get('reason') or 'miss'}"
        lines.append(
            f"| `{r['slug']}` | {r['outcome']} | {r['duration']:.2f} s | {_cell(cache)} | {r['device']} "
            f"| {r['claims']} | {r['checks']} | {_cell(r.get('message') or '')} |"
        )
    return "\n".join(lines) + "\n"


def append_step_summary(text: str) -> Path | None:
    """Append to ``$GITHUB_STEP_SUMMARY`` when running in GitHub Actions."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(text + "\n")
    return Path(target)
