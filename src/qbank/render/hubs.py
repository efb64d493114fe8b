"""Hub pages: home, topic and company indexes, topic, company and company×topic pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..corpus import CATALOG, Corpus
from ..model import DESCRIPTION_MAX, DESCRIPTION_MIN
from . import practice
from .common import (
    HOME,
    TOPICS,
    Page,
    call_to_action,
    company_path,
    company_topic_path,
    concept_path,
    faq,
    free_count,
    make_page,
    question_items,
    question_path,
    topic_path,
)
from .seo import PageMeta, item_list
from .settings import Settings
from .text import counts, fit, md_escape, plural, rel

T = TypeVar("T")
CATALOG_TOPICS = f"{CATALOG}/topics.yaml"
CATALOG_COMPANIES = f"{CATALOG}/companies.yaml"
CATALOG_CONCEPTS = f"{CATALOG}/concepts.yaml"


def qsources(corpus: Corpus, slugs: list[str]) -> tuple[str, ...]:
    """Repository paths of these questions' YAML files (a hub's sitemap sources)."""
    return tuple(corpus.question_path(s) for s in slugs)


def by_rank(corpus: Corpus, slugs: list[str]) -> list[str]:
    """Editors' order: editorial rank first (1 = the editors' first pick), then easiest first."""
    return sorted(slugs, key=lambda s: (corpus.questions[s].editorial_rank, corpus.questions[s].difficulty, s))


def items_of(corpus: Corpus, slugs: list[str]) -> list[tuple[str, str]]:
    """(title, page path) of questions, for an ItemList."""
    return [(corpus.questions[s].title, question_path(s)) for s in slugs]


def first_role(corpus: Corpus, company: str) -> str:
    """The role a company's pages are titled with."""
    return corpus.companies[company].roles[0]


_MEMO: dict[object, Any] = {}


def memo(corpus: Corpus, key: object, compute: Callable[[], T]) -> T:
    """Remember a derived list for the corpus being rendered: question pages ask for the same lists
    (a topic's order, a company's tagged questions) a thousand times, and recomputing them is quadratic.
    Rendering never mutates the corpus; a new corpus object clears the memo."""
    if _MEMO.get("corpus") is not corpus:
        _MEMO.clear()
        _MEMO["corpus"] = corpus
    if key not in _MEMO:
        _MEMO[key] = compute()
    value: T = _MEMO[key]
    return value


def topic_order(corpus: Corpus, topic: str) -> list[str]:
    """``Corpus.topic_questions``, remembered."""
    return list(memo(corpus, ("topic", topic), lambda: corpus.topic_questions(topic)))


def tagged(corpus: Corpus, company: str, topic: str | None = None) -> list[str]:
    """Questions tagged to a company (optionally within one topic), in topic order."""
    return list(memo(corpus, ("tagged", company, topic), lambda: _tagged(corpus, company, topic)))


def _tagged(corpus: Corpus, company: str, topic: str | None) -> list[str]:
    slugs = [s for s, q in corpus.questions.items() if company in q.companies and (topic is None or q.topic == topic)]
    order = {t: corpus.topics[t].order for t in corpus.topics}
    return sorted(slugs, key=lambda s: (order.get(corpus.questions[s].topic, 0), corpus.questions[s].difficulty, s))


def company_topics(corpus: Corpus, company: str, settings: Settings) -> list[str]:
    """Topics whose company×topic page has distinct content: enough tagged questions, a company-specific note,
    and a different list from the topic page's (when the company is tagged on every question of the topic, the
    topic page already says it all, and the company's rounds link there)."""
    return list(memo(corpus, ("ct", company, settings), lambda: _company_topics(corpus, company, settings)))


def _company_topics(corpus: Corpus, company: str, settings: Settings) -> list[str]:
    out: list[str] = []
    for rnd in corpus.companies[company].process:
        if rnd.topic not in corpus.topics or rnd.topic in out:
            continue
        mine = len(tagged(corpus, company, rnd.topic))
        if (
            settings.ct_min_tagged <= mine < len(topic_order(corpus, rnd.topic))
            and len(rnd.note.strip()) >= settings.ct_min_note_chars
        ):
            out.append(rnd.topic)
    return out


def round_target(corpus: Corpus, company: str, topic: str, settings: Settings) -> str:
    """Where a company's round links: its company×topic page when one exists, the topic hub otherwise."""
    if topic in company_topics(corpus, company, settings):
        return company_topic_path(company, topic)
    return topic_path(topic)


def company_target(corpus: Corpus, company: str, topic: str, settings: Settings) -> str:
    """Where a company tag on a topic's page links: its company×topic page, else the company hub."""
    if topic in company_topics(corpus, company, settings):
        return company_topic_path(company, topic)
    return company_path(company)


def home(corpus: Corpus, settings: Settings) -> Page:
    """The home page: what the site is, why its numbers hold, topics, companies and the editors' picks."""
    src = HOME
    topics = sorted(corpus.topics.values(), key=lambda t: t.order)
    top = by_rank(corpus, list(corpus.questions))[: settings.home_top]
    body = [
        "# LLM inference engineer interview questions",
        "",
        "Interview questions on serving large language models, each with a worked answer argued the way a "
        "senior inference engineer argues at a whiteboard: sizes, bandwidths and latencies, not slogans.",
        "",
        "## Why the numbers hold",
        "",
        "Every number in an answer is bound to a value that a verification script derives from cited inputs "
        "(model configs, GPU datasheets). The site is built only when every script passes and every number in "
        "the prose matches its derived value; kernel snippets are run against a reference, on a GPU where one "
        f"is available. [How the site works]({rel(src, 'about.md')}).",
        "",
        "## Topics",
        "",
        counts(len(corpus.questions), free_count(corpus, list(corpus.questions))),
        "",
    ]
    for t in topics:
        n = len(topic_order(corpus, t.slug))
        body.append(f"- [{md_escape(t.title)}]({rel(src, topic_path(t.slug))}) · {plural(n, 'question')}")
    body += ["", "## Companies", ""]
    for c in corpus.companies.values():
        n = len(tagged(corpus, c.slug))
        body.append(f"- [{md_escape(c.name)}]({rel(src, company_path(c.slug))}) · {', '.join(c.roles)} · "
                    f"{plural(n, 'tagged question')}")
    if not corpus.companies:
        body.append("_No company loops documented yet._")
    body += [
        "",
        "## Editors' picks",
        "",
        "Ordered by editorial rank: the editors' choice of where to start, not reader votes.",
        "",
        question_items(corpus, src, top),
    ]
    with_free = sum(1 for t in topics if free_count(corpus, topic_order(corpus, t.slug)))
    lead = (
        f"Free questions in {with_free} of {plural(len(topics), 'topic')} show the depth; "
        "Premium unlocks every answer."
    )
    body += [practice.home_link(corpus, src)]  # the practice hub, when the repository has practice content
    body += [call_to_action(src, lead, settings.shop)]
    items = [(t.title, topic_path(t.slug)) for t in topics] + [
        (c.name, company_path(c.slug)) for c in corpus.companies.values()
    ]
    meta = PageMeta(
        path=src,
        title="LLM inference interview questions with worked answers",
        description=fit(
            (
                f"{plural(len(corpus.questions), 'interview question')} for LLM inference engineers across "
                f"{plural(len(topics), 'topic')}, with worked answers whose every number is re-derived by code.",
                f"Interview questions for LLM inference engineers across {plural(len(topics), 'topic')}, "
                "with worked answers whose every number is re-derived by code.",
            ),
            DESCRIPTION_MAX,
            DESCRIPTION_MIN,
        ),
        crumbs=(("Home", HOME),),
        jsonld=(item_list("Topics and companies", items, settings),),
        kind="home",
        sources=(CATALOG_TOPICS, CATALOG_COMPANIES, *qsources(corpus, list(corpus.questions))),
    )
    return make_page(meta, "\n".join(body))


def topics_index(corpus: Corpus, settings: Settings) -> Page:
    """All topics with their scope and counts, and every concept."""
    src = TOPICS
    topics = sorted(corpus.topics.values(), key=lambda t: t.order)
    body = ["# Interview topics", "", "The tracks of an LLM inference engineer interview loop.", ""]
    for t in topics:
        slugs = topic_order(corpus, t.slug)
        body += [
            f"## [{md_escape(t.title)}]({rel(src, topic_path(t.slug))})",
            "",
            t.scope,
            "",
            counts(len(slugs), free_count(corpus, slugs)),
            "",
        ]
    if corpus.concepts:
        body += ["## Concepts", ""]
        body += [f"- [{md_escape(c.title)}]({rel(src, concept_path(c.slug))})" for c in corpus.concepts.values()]
    meta = PageMeta(
        path=src,
        title="LLM inference interview topics",
        description=fit(
            (
                f"The {plural(len(topics), 'track')} of an LLM inference engineer interview, from "
                f"{topics[0].title} to {topics[-1].title}, with every question and concept of each.",
                f"The {plural(len(topics), 'track')} of an LLM inference engineer interview, with every "
                "question and concept of each track.",
            ),
            DESCRIPTION_MAX,
            DESCRIPTION_MIN,
        ),
        crumbs=(("Home", HOME), ("Topics", src)),
        jsonld=(item_list("Interview topics", [(t.title, topic_path(t.slug)) for t in topics], settings),),
        kind="index",
        sources=(CATALOG_TOPICS, CATALOG_CONCEPTS, *qsources(corpus, list(corpus.questions))),
    )
    return make_page(meta, "\n".join(body))


def topic_page(corpus: Corpus, slug: str, settings: Settings) -> Page:
    """A topic hub: scope, questions easiest first, counts, concepts, companies and an FAQ."""
    topic = corpus.topics[slug]
    src = topic_path(slug)
    slugs = topic_order(corpus, slug)
    free = free_count(corpus, slugs)
    concept_slugs = sorted({c for s in slugs for c in corpus.questions[s].concepts if c in corpus.concepts})
    companies = [c for c in corpus.companies.values() if any(r.topic == slug for r in c.process)]
    body = [
        f"# {topic.title} interview questions",
        "",
        topic.scope,
        "",
        "## Questions, easiest first",
        "",
        counts(len(slugs), free),
        "",
        question_items(corpus, src, slugs),
    ]
    if concept_slugs:
        body += ["## Concepts in this track", ""]
        body += [
            f"- [{md_escape(corpus.concepts[c].title)}]({rel(src, concept_path(c))}): {corpus.concepts[c].summary}"
            for c in concept_slugs
        ]
        body.append("")
    if companies:
        body += ["## Companies that test it", ""]
        for c in companies:
            target = company_target(corpus, c.slug, slug, settings)
            body.append(f"- [{md_escape(c.name)}]({rel(src, target)}) · {', '.join(c.roles)}")
        body.append("")
    body += [practice.practice_links(corpus, src, topic=slug)]
    top = by_rank(corpus, slugs)[:3]
    examples = "; ".join(f'"{corpus.questions[s].title}"' for s in top)
    body += [
        f"## {topic.title} FAQ",
        "",
        faq(
            [
                (
                    f"What {topic.title} questions come up in inference interviews?",
                    (f"The editors' first picks here: {examples}. " if examples else "")
                    + f"The track covers: {topic.scope}",
                ),
                (
                    f"How many {topic.title} questions are free?",
                    f"{free} of {plural(len(slugs), 'question')} are free to read in full; Premium unlocks the "
                    "rest, derivations included.",
                ),
            ]
        ),
        call_to_action(src, f"Unlock every {topic.title} answer with Premium.", settings.shop),
    ]
    meta = PageMeta(
        path=src,
        title=topic.short_title,
        description=topic.description,
        crumbs=(("Home", HOME), ("Topics", TOPICS), (topic.title, src)),
        jsonld=(item_list(f"{topic.title} questions", items_of(corpus, slugs), settings),),
        kind="topic",
        sources=(CATALOG_TOPICS, CATALOG_CONCEPTS, *qsources(corpus, slugs)),
    )
    return make_page(meta, "\n".join(body))
