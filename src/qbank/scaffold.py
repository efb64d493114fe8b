"""`qbank new question`: the three files of a new question, valid as created (pure: returns text)."""

from __future__ import annotations

from dataclasses import dataclass

from .corpus import CATALOG, Corpus, suggest
from .model import check_slug
from .problems import Problem, error

KINDS = ("derivation", "design", "code-drill", "concept")

QUESTION = """\
# yaml-language-server: $schema=../schemas/question.schema.json
title: "TODO: the question as an interviewer would ask it?"
short_title: "TODO: the page's title in search results"
description: >-
  TODO: the meta description search results show, a sentence of whole words, free text only.
teaser: >-
  TODO: one short paragraph that makes a reader want the answer. It is shown on lists and as the
  page's meta description, so say something concrete; its numbers bind to the script's values.
topic: {topic}
companies: [{companies}]
difficulty: 3
editorial_rank: 1000
access: {access}
kind: {kind}
concepts: []
related: []
{summaries}"""

PREMIUM_SUMMARIES = """\
premium_summaries:
  - "TODO: one free line per premium section: what it holds, in other words than the section"
"""

ANSWER_FREE = """\
## The model

TODO: set up the model the way you would at a whiteboard. Every number you state must come from
`verify/{slug}.py`: this example states the input, 8 GPUs, and the value the script derives from it,
16 GPUs.

## What to measure

TODO: what you would measure to confirm the answer, and the failure case.
"""

ANSWER_PREMIUM = """
/// premium
## The full derivation

TODO: the deeper part of the answer. Everything between `/// premium` and `///` is encrypted at build
and shown only to readers with a license.
///
"""

SCRIPT = """\
# %% [markdown]
# # {title}
# Every input carries its source; every number the answer states is derived here.

# %%
from qbank.verify import check, claim, given

gpus = given("example_gpus", 8, unit="GPUs", source="TODO: cite the source of this input")

# %%
doubled = claim("example_doubled", 2 * gpus, unit="GPUs")
check(doubled > gpus, "the example claim is larger than its input")
"""


@dataclass(frozen=True)
class NewQuestion:
    """What to create: repository-relative path -> file text."""

    files: dict[str, str]


def new_question(
    corpus: Corpus,
    slug: str,
    topic: str,
    company: str | None = None,
    kind: str = "derivation",
    access: str = "premium",
) -> tuple[NewQuestion | None, list[Problem]]:
    """The files of a new question, or the problems that stop it (bad or taken slug, unknown refs)."""
    problems: list[Problem] = []
    qrel = corpus.question_path(slug)
    try:
        check_slug(slug)
    except ValueError as exc:
        problems.append(error(qrel, 0, 0, "bad-slug", str(exc)))
    else:
        taken = [
            rel for rel in (qrel, corpus.answer_path(slug), corpus.verify_path(slug)) if (corpus.root / rel).exists()
        ]
        if taken:
            problems.append(error(taken[0], 1, 1, "slug-exists", f"a question named {slug!r} already exists"))
    if topic not in corpus.topics:
        problems.append(
            error(
                f"{CATALOG}/topics.yaml",
                1,
                1,
                "unknown-topic",
                f"unknown topic {topic!r}{suggest(topic, list(corpus.topics))}",
            )
        )
    if company is not None and company not in corpus.companies:
        problems.append(
            error(
                f"{CATALOG}/companies.yaml",
                1,
                1,
                "unknown-company",
                f"unknown company {company!r}{suggest(company, list(corpus.companies))}",
            )
        )
    if kind not in KINDS:
        problems.append(error(qrel, 0, 0, "field-value", f"kind must be one of {', '.join(KINDS)}"))
    if problems:
        return None, problems
    answer = ANSWER_FREE.format(slug=slug) + (ANSWER_PREMIUM if access == "premium" else "")
    files = {
        qrel: QUESTION.format(
            topic=topic, companies=company or "", access=access, kind=kind,
            summaries=PREMIUM_SUMMARIES if access == "premium" else "",
        ),
        corpus.answer_path(slug): answer,
        corpus.verify_path(slug): SCRIPT.format(title=slug.replace("-", " ").capitalize()),
    }
    return NewQuestion(files), []
