"""``qbank claims`` output: every quantity with its status and binding, then a summary per answer."""

from __future__ import annotations

import json

from .check import ClaimsReport, binding_json


def render_claims(report: ClaimsReport) -> str:
    """A table of quantities (position, text, parsed, status, bound value) and per-answer summaries."""
    lines: list[str] = []
    for a in report.answers:
        for b in a.bindings:
            j = binding_json(a.path, b)
            where = f"{a.path}:{j['line']}:{j['col']}"
            bound = ", ".join(f"{v['name']} = {v['shown']}" for v in j["bound"])
            extra = bound or (f"({b.reason})" if b.reason else "")
            lines.append(f"{where:<36} {j['text']:<24} {j['parsed']:<24} {j['status']:<11} {extra}".rstrip())
        s = a.summary()
        lines.append(
            f"{a.path}: {s['quantities']} quantities, {s['bound']} bound, {s['exempt']} exempt, {s['unbound']} unbound"
            + ("" if a.verified else " (no verification record)")
        )
    t = report.totals()
    concepts = sum(1 for a in report.answers if a.path.endswith("concepts.yaml"))
    fields = sum(1 for a in report.answers if a.path.startswith("questions/") and not a.path.endswith("concepts.yaml"))
    answers = len(report.answers) - concepts - fields
    texts = f"{answers} answers" + (f", {concepts} concept explanations" if concepts else "")
    texts += f", {fields} question fields" if fields else ""
    lines.append(
        f"total: {t['quantities']} quantities in {texts}, {t['bound']} bound, "
        f"{t['exempt']} exempt, {t['unbound']} unbound"
    )
    return "\n".join(lines) + "\n"


def render_claims_json(report: ClaimsReport, problems: list[dict[str, object]]) -> str:
    """The JSON document: answers with their quantities, totals, exemptions and problems."""
    return json.dumps({**report.to_json(), "problems": problems}, indent=2, ensure_ascii=False) + "\n"
