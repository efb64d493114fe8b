"""The practice content model: tests (``practice/<slug>.yaml``) and drills (``drills/<slug>/drill.yaml``)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from ..model import Access, Slug, Strict, Text, check_teaser
from ..units import lookup

CLAIM_REF_RE = re.compile(r"^([a-z0-9]+(?:-[a-z0-9]+)*):([A-Za-z_][A-Za-z0-9_]*)$")
ITEMS_MIN = 8
ITEMS_MAX = 15


def check_claim_ref(value: str) -> str:
    """``question-slug:claim_name``: the verification script and the value it declares."""
    if not CLAIM_REF_RE.match(value):
        raise PydanticCustomError(
            "practice-claim-ref",
            "'{value}' is not a claim reference: write 'question-slug:claim_name'",
            {"value": value},
        )
    return value


def check_unit(value: str) -> str:
    """A unit the claims checker knows (``""`` for a plain number)."""
    if value and lookup(value) is None:
        raise PydanticCustomError("practice-unit", "unknown unit '{value}'", {"value": value})
    return value


ClaimRef = Annotated[str, AfterValidator(check_claim_ref)]
Unit = Annotated[str, AfterValidator(check_unit)]


class NumericItem(Strict):
    """A number the reader computes; the key is a value a verification script declares."""

    kind: Literal["numeric"]
    prompt: Text = Field(description="The question, with every input the reader needs")
    answer: ClaimRef = Field(description="'question-slug:claim_name' of the verified value that is the key")
    unit: Unit = Field(description="The unit the reader answers in (shown next to the input); '' for a plain number")
    precision: float = Field(gt=0, description="The step the reader rounds to, in `unit`; accepted within half a step")
    explanation: Text = Field(description="How to get there (shown in the review)")


class Option(Strict):
    """One option of a single-choice item."""

    text: Text
    correct: bool = False
    why: str = Field(default="", description="Why this option is wrong (required for every distractor)")

    @model_validator(mode="after")
    def _distractor_says_why(self) -> Option:
        if not self.correct and not self.why.strip():
            raise PydanticCustomError(
                "practice-why-missing",
                "distractor '{text}' needs a 'why' (the reason it is wrong)",
                {"text": self.text},
            )
        return self


class ChoiceItem(Strict):
    """Single choice (``choice``) or a 'which regime' call (``regime``); every distractor says why it is wrong."""

    kind: Literal["choice", "regime"]
    prompt: Text
    options: list[Option] = Field(min_length=2, max_length=6)
    explanation: Text
    see: Slug | None = Field(default=None, description="Question slug of the worked answer")
    evidence: list[ClaimRef] = Field(default_factory=list, description="Verified values the review shows as evidence")

    @model_validator(mode="after")
    def _one_correct(self) -> ChoiceItem:
        if sum(o.correct for o in self.options) != 1:
            raise PydanticCustomError(
                "practice-choice-key", "a single-choice item needs exactly one correct option", {}
            )
        return self


class OrderItem(Strict):
    """Put these in order (shown shuffled); ``order`` is the key."""

    kind: Literal["order"]
    prompt: Text
    order: list[Text] = Field(min_length=3, max_length=7, description="The entries in the correct order")
    explanation: Text
    see: Slug | None = None
    evidence: list[ClaimRef] = Field(default_factory=list)


Item = Annotated[NumericItem | ChoiceItem | OrderItem, Field(discriminator="kind")]


class PracticeTest(Strict):
    """A timed practice test for one topic or one company's loop."""

    title: Text = Field(max_length=120)
    teaser: Annotated[str, AfterValidator(check_teaser)]
    topic: Slug | None = Field(default=None, description="The topic it drills (a topic test)")
    company: Slug | None = Field(default=None, description="The company loop it rehearses (a loop test)")
    minutes: int = Field(ge=1, le=120, description="Time limit")
    access: Access
    items: list[Item] = Field(min_length=ITEMS_MIN, max_length=ITEMS_MAX)

    @model_validator(mode="after")
    def _names_target(self) -> PracticeTest:
        if self.topic is None and self.company is None:
            raise PydanticCustomError("practice-target", "a practice test names its topic or its company loop", {})
        return self


class Drill(Strict):
    """A code drill: the statement here; starter, tests and solutions in files beside this one."""

    title: Text = Field(max_length=120)
    teaser: Annotated[str, AfterValidator(check_teaser)]
    topic: Slug
    companies: list[Slug] = Field(default_factory=list)
    difficulty: int = Field(ge=1, le=5)
    statement: Text = Field(description="Markdown: the task, the signature, the invariants")
    see: Slug | None = Field(default=None, description="Question slug of the worked answer")


DRILL_FILES = ("starter.py", "public_tests.py", "edge_tests.py", "reference.py", "wrong.py")
"""Beside ``drill.yaml``: what the reader starts from, the free tests, the sealed edge cases and
reference, and a known-wrong solution the edge cases must fail (never published)."""

PRACTICE_SCHEMAS: dict[str, type[Strict]] = {"practice": PracticeTest, "drill": Drill}
