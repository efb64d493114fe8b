"""Numbers in prose are claims: every quantity an answer states is bound to a verified value.

``extract`` finds quantities in Markdown with their positions, ``bind`` matches them against the
values a verification record declares, ``check_corpus`` does both for every answer.
"""

from __future__ import annotations

from .bind import AnswerClaims, Binding, Declared, bind_answer
from .check import ClaimsReport, check_answer_text, check_corpus
from .extract import Marker, Quantity, extract, strip_markers

__all__ = [
    "AnswerClaims",
    "Binding",
    "ClaimsReport",
    "Declared",
    "Marker",
    "Quantity",
    "bind_answer",
    "check_answer_text",
    "check_corpus",
    "extract",
    "strip_markers",
]
