"""The content model: catalog (topics, companies, concepts) and questions, strict pydantic models."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SLUG_MAX = 80
TEASER_MIN = 70
TEASER_MAX = 320
SHORT_TITLE_MAX = 60
DESCRIPTION_MIN = 70
DESCRIPTION_MAX = 160


def check_slug(value: str) -> str:
    """Lowercase letters, digits and single hyphens; nothing that can name another folder."""
    if len(value) > SLUG_MAX or not SLUG_RE.match(value):
        raise PydanticCustomError(
            "bad-slug",
            "'{value}' is not a valid slug: use lowercase letters, digits and single hyphens "
            "(at most {max} characters)",
            {"value": value, "max": SLUG_MAX},
        )
    return value


def check_teaser(value: str) -> str:
    """One paragraph, long enough to hook a reader and short enough for a search snippet."""
    text = value.strip()
    if "\n\n" in text:
        raise PydanticCustomError("teaser-paragraph", "the teaser must be a single paragraph", {})
    if not TEASER_MIN <= len(text) <= TEASER_MAX:
        raise PydanticCustomError(
            "teaser-length",
            "the teaser is {n} characters; keep it between {lo} and {hi} so search snippets show it whole",
            {"n": len(text), "lo": TEASER_MIN, "hi": TEASER_MAX},
        )
    return text


def check_short_title(value: str) -> str:
    """The page's ``<title>``: one line, short enough that search results show it whole."""
    text = " ".join(value.split())
    if not text:
        raise PydanticCustomError("empty-text", "this text must not be empty", {})
    if len(text) > SHORT_TITLE_MAX:
        raise PydanticCustomError(
            "short-title-length",
            "the short title is {n} characters; search results show about {hi}, keep it at most {hi}",
            {"n": len(text), "hi": SHORT_TITLE_MAX},
        )
    return text


def check_description(value: str) -> str:
    """The meta description: one line, whole words, the length a search snippet shows."""
    text = " ".join(value.split())
    if not DESCRIPTION_MIN <= len(text) <= DESCRIPTION_MAX:
        raise PydanticCustomError(
            "description-length",
            "the description is {n} characters; keep it between {lo} and {hi} so search snippets show it whole",
            {"n": len(text), "lo": DESCRIPTION_MIN, "hi": DESCRIPTION_MAX},
        )
    if text.endswith(("…", "...")):
        raise PydanticCustomError("description-cut", "the description ends in an ellipsis: write it whole", {})
    return text


SUMMARY_MIN = 30
SUMMARY_MAX = 200


def check_summary(value: str) -> str:
    """A premium section's free one-line summary: what the section holds, in words of its own."""
    text = " ".join(value.split())
    if not SUMMARY_MIN <= len(text) <= SUMMARY_MAX:
        raise PydanticCustomError(
            "premium-summary-length",
            "the summary is {n} characters; one line of {lo} to {hi} says what the section holds",
            {"n": len(text), "lo": SUMMARY_MIN, "hi": SUMMARY_MAX},
        )
    return text


def check_text(value: str) -> str:
    """Non-blank text, stripped."""
    if not value.strip():
        raise PydanticCustomError("empty-text", "this text must not be empty", {})
    return value.strip()


Slug = Annotated[str, AfterValidator(check_slug)]
Text = Annotated[str, AfterValidator(check_text)]
ShortTitle = Annotated[str, AfterValidator(check_short_title)]
SummaryLine = Annotated[str, AfterValidator(check_summary)]
Description = Annotated[str, AfterValidator(check_description)]


class Strict(BaseModel):
    """Base: strict types, unknown keys are errors, immutable after load."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Topic(Strict):
    """A track of the interview loop, e.g. Speculative & Constrained Decoding."""

    slug: Slug = Field(description="URL name of the topic")
    title: Text = Field(description="Display title")
    short_title: ShortTitle = Field(description="The topic page's <title> in search results (at most 60 characters)")
    description: Description = Field(description="The topic page's meta description (70-160 characters, whole words)")
    scope: Text = Field(description="One paragraph: what the track covers")
    order: int = Field(ge=0, description="Position among topics, ascending")


class Round(Strict):
    """One round of a company's interview process."""

    topic: Slug = Field(description="Topic slug the round tests")
    note: str = Field(default="", description="What this round is known to stress at this company")


class Company(Strict):
    """A company whose interview loop the site documents, with where that information comes from."""

    slug: Slug = Field(description="URL name of the company")
    name: Text = Field(description='Display name, e.g. "xAI (SpaceXSI)"')
    short_title: ShortTitle = Field(description="The company page's <title> in search results (at most 60 characters)")
    description: Description = Field(
        description="The company page's meta description (70-160 characters, whole words)"
    )
    roles: list[Text] = Field(min_length=1, description="Roles the questions prepare for")
    looks_for: Text = Field(description="What the company looks for in this loop")
    process: list[Round] = Field(min_length=1, description="Interview rounds in order")
    source: Text = Field(description="Where the process information comes from")
    checked: dt.date = Field(description="When the source was last checked")


class Concept(Strict):
    """A concept that questions teach and that gets a page of its own."""

    slug: Slug = Field(description="URL name of the concept")
    title: Text = Field(description="Display title")
    short_title: ShortTitle = Field(description="The concept page's <title> in search results (at most 60 characters)")
    description: Description = Field(
        description="The concept page's meta description (70-160 characters, whole words)"
    )
    summary: Text = Field(description="One or two sentences")
    explanation: str = Field(
        default="",
        description="The concept explained in Markdown (definition, the formula that matters, links): at least "
        "~150 words of the page's own. Without it the concept page is noindex and out of the sitemap.",
    )
    worked_example: Slug | None = Field(
        default=None,
        description="The question whose verification script the explanation's worked numbers bind to (a question "
        "that names this concept); required with an explanation, whose numbers are claims like an answer's",
    )


class VerifySettings(Strict):
    """Per-question settings for its verification script."""

    timeout: int = Field(default=120, ge=1, le=3600, description="Whole-script timeout in seconds")


RETIRED_FIELDS: dict[str, tuple[str, str]] = {
    "votes": (
        "votes-hand-typed",
        "'votes' is not accepted: no reader voted, so a count typed here would be a false number on the site; "
        "order questions with 'editorial_rank' (the editors' order, shown as such)",
    ),
}
"""Fields the content once had and must not have again: the key, its problem code and why."""

Access = Literal["free", "premium"]
Kind = Literal["derivation", "design", "code-drill", "concept"]

PUBLIC_TEXT_FIELDS = ("title", "short_title", "description", "teaser")
"""A question's own texts that every page listing it shows in clear: the h1, the <title>, the meta description,
the list teaser (their numbers are claims; none may repeat premium text)."""


class Question(Strict):
    """One interview question; its slug is its file name, its answer and verification follow by convention."""

    title: Text = Field(max_length=300, description="The question as an interviewer asks it (the page's h1)")
    short_title: ShortTitle = Field(description="The page's <title> in search results (at most 60 characters)")
    description: Description = Field(
        description="The page's meta description (70-160 characters, whole words; free text only)"
    )
    teaser: Annotated[str, AfterValidator(check_teaser)] = Field(
        description="One-paragraph hook shown under the h1 and on lists"
    )
    topic: Slug = Field(description="Topic slug")
    companies: list[Slug] = Field(default_factory=list, description="Companies the question is tagged to")
    difficulty: int = Field(ge=1, le=5, description="1 (warm-up) to 5 (hardest)")
    editorial_rank: int = Field(
        ge=1,
        description="Editorial rank: the editors' order of importance within the topic, 1 first (not reader votes)",
    )
    access: Access = Field(description="free or premium")
    kind: Kind = Field(description="derivation, design, code-drill or concept")
    concepts: list[Slug] = Field(default_factory=list, description="Concept slugs")
    related: list[Slug] = Field(default_factory=list, description="Related question slugs")
    premium_summaries: list[SummaryLine] = Field(
        default_factory=list,
        description="One free line per premium section of the answer, in order: what the section holds, in "
        "other words than the section (public: shown on the locked section and searched for premium text)",
    )
    verify: VerifySettings = Field(default_factory=VerifySettings, description="Verification settings")


class TopicList(Strict):
    """``questions/_catalog/topics.yaml``."""

    topics: list[Topic] = Field(min_length=1)


class CompanyList(Strict):
    """``questions/_catalog/companies.yaml``."""

    companies: list[Company] = Field(default_factory=list)


class ConceptList(Strict):
    """``questions/_catalog/concepts.yaml``."""

    concepts: list[Concept] = Field(default_factory=list)


SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "question": Question,
    "topics": TopicList,
    "companies": CompanyList,
    "concepts": ConceptList,
}
