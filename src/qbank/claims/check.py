"""The claims stage over a corpus: extract and bind every answer, and the data ``qbank claims`` shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..corpus import Corpus
from ..memo import Memo
from ..problems import Problem
from . import values as values_module
from .bind import AnswerClaims, Binding, bind_answer
from .concepts import check_concepts
from .embedded import ValuesFor
from .extract import extract
from .fields import check_fields
from .held import held_numbers
from .kept import keep_binding, kept_binding, values_by_stamp
from .match import Declared, shown


@dataclass
class ClaimsReport:
    """Every answer's bindings and all claims problems."""

    answers: list[AnswerClaims] = field(default_factory=list)

    @property
    def problems(self) -> list[Problem]:
        """All problems of all answers."""
        return [p for a in self.answers for p in a.problems]

    def totals(self) -> dict[str, int]:
        """Summed per-answer summaries."""
        keys = ("quantities", "bound", "exempt", "unbound")
        sums = dict.fromkeys(keys, 0)
        for a in self.answers:
            for k, v in a.summary().items():
                sums[k] += v
        return sums

    def exemptions(self) -> list[dict[str, Any]]:
        """Every exemption with its reason and position."""
        return [
            {
                "path": a.path,
                "line": b.quantity.line,
                "col": b.quantity.col,
                "text": b.quantity.text,
                "reason": b.reason,
            }
            for a in self.answers
            for b in a.bindings
            if b.status == "exempt"
        ]

    def to_json(self) -> dict[str, Any]:
        """The ``qbank claims --format json`` document."""
        return {
            "answers": [
                {
                    "slug": a.slug,
                    "path": a.path,
                    "verified": a.verified,
                    "summary": a.summary(),
                    "quantities": [binding_json(a.path, b) for b in a.bindings],
                }
                for a in self.answers
            ],
            "totals": self.totals(),
            "exemptions": self.exemptions(),
        }


def binding_json(path: str, b: Binding) -> dict[str, Any]:
    """One quantity as JSON: where, what was written, how it parsed, what it is bound to."""
    q, f = b.quantity, b.quantity.found
    reading = b.reading or f.lo[0]
    return {
        "path": path,
        "line": q.line,
        "col": q.col,
        "text": " ".join(q.text.split()),
        "context": q.context,
        "rule": f.rule,
        "parsed": f.canonical(),
        "value": reading.mantissa * reading.mult,
        "unit": reading.unit or None,
        "base_value": reading.base,
        "dimension": reading.dimension,
        "relation": f.relation,
        "approx": f.approx,
        "status": b.status,
        "bound": [
            {"name": v.name, "kind": v.kind, "value": v.value, "unit": v.unit, "shown": shown(reading, v)}
            for v in b.values
        ],
        "reason": b.reason,
    }


def check_answer_text(slug: str, path: str, text: str, values: list[Declared] | None) -> AnswerClaims:
    """Extract and bind one answer's Markdown against its values (None: no record)."""
    quantities, orphans = extract(text)
    return bind_answer(slug, path, quantities, orphans, values, held=held_numbers(text, quantities))


def check_corpus(corpus: Corpus, values: ValuesFor | None = None, memo: Memo | None = None) -> ClaimsReport:
    """Bind every answer and concept explanation against its script's latest record (or ``values(root, slug)``).

    Extraction is kept by text (``extract``). With a ``memo`` (`qbank serve`), each script's values are kept by
    its stored entry's stamp and an answer or a question's fields are bound again only when their text or values
    changed (``claims.kept``); without one, every answer is bound again.
    """
    if values is None:
        values = values_module.values_for if memo is None else values_by_stamp(memo)
    report = ClaimsReport()
    for slug in sorted(corpus.answers):
        answer = corpus.answers[slug]
        found = values(corpus.root, slug)
        result = kept_binding(memo, answer.path, answer.text, found) if memo is not None else None
        if result is None:
            result = check_answer_text(slug, answer.path, answer.text, found)
            if memo is not None:
                keep_binding(memo, answer.path, answer.text, found, result)
        report.answers.append(result)
    # concept explanations after the answers: their worked numbers bind to their worked example's values
    report.answers.extend(check_concepts(corpus, values))
    # and a question's own fields (title, description, teaser...): the first numbers a reader sees
    report.answers.extend(check_fields(corpus, values, memo))
    return report
