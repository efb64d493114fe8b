"""Company pages: the companies index, one page per company, and company×topic pages."""

from __future__ import annotations

from ..corpus import Corpus
from ..model import DESCRIPTION_MAX, DESCRIPTION_MIN, SHORT_TITLE_MAX
from . import practice
from .common import (
    COMPANIES,
    HOME,
    Page,
    call_to_action,
    company_path,
    company_topic_path,
    disclaimer,
    faq,
    free_count,
    make_page,
    question_items,
)
from .hubs import (
    CATALOG_COMPANIES,
    CATALOG_TOPICS,
    by_rank,
    first_role,
    items_of,
    qsources,
    round_target,
    tagged,
    topic_order,
)
from .seo import PageMeta, item_list
from .settings import Settings
from .templating import fragment
from .text import counts, fit, md_escape, plural, rel


def companies_index(corpus: Corpus, settings: Settings) -> Page:
    """All companies whose loops the site documents."""
    src = COMPANIES
    body = ["# Companies", "", "Interview loops documented from cited sources, round by round.", ""]
    for c in corpus.companies.values():
        n = len(tagged(corpus, c.slug))
        body += [
            f"## [{md_escape(c.name)}]({rel(src, company_path(c.slug))})",
            "",
            f"{', '.join(c.roles)} · {plural(len(c.process), 'round')} · {plural(n, 'tagged question')}",
            "",
            c.looks_for,
            "",
        ]
    if not corpus.companies:
        body.append("_No company loops documented yet._")
    body += [
        "## How a loop is documented",
        "",
        "A company is listed only when its interview process has a source that can be cited: a public listing, "
        "a job description or a published account. Each company page names that source and the day it was last "
        "checked, and lists the rounds in the order the source gives them, with what each round is known to "
        "stress at that company.",
        "",
        "Each round links to the questions that prepare it. Where the editors have tagged some of a topic's "
        "questions to a company, the round gets a page of its own with those questions first; where every "
        "question of the topic applies equally, the round links to the topic page instead of repeating it.",
        "",
        "Tags are an editorial judgement about what a round is likely to test, not a leak of any company's "
        "questions. Nothing on these pages comes from an interviewer, and no company has reviewed or endorsed "
        "them.",
        "",
    ]
    meta = PageMeta(
        path=src,
        title="LLM inference engineer interview loops by company",
        description=fit(
            (
                "Interview loops for LLM inference engineer roles: "
                + (", ".join(c.name for c in corpus.companies.values()) or "none yet")
                + ", round by round from cited sources, with tagged questions.",
                f"Interview loops for LLM inference engineer roles at {plural(len(corpus.companies), 'company')}"
                ", round by round from cited sources, with tagged questions.",
            ),
            DESCRIPTION_MAX,
            DESCRIPTION_MIN,
        ),
        crumbs=(("Home", HOME), ("Companies", src)),
        jsonld=(item_list("Companies", [(c.name, company_path(c.slug)) for c in corpus.companies.values()], settings),),
        kind="index",
        sources=(CATALOG_COMPANIES, *qsources(corpus, list(corpus.questions))),
    )
    return make_page(meta, "\n".join(body))


def company_page(corpus: Corpus, slug: str, settings: Settings) -> Page:
    """A company hub: role, what it looks for, its rounds in order, its questions as teasers, FAQ."""
    c = corpus.companies[slug]
    src = company_path(slug)
    role = first_role(corpus, slug)
    slugs = tagged(corpus, slug)
    body = [
        f"# {c.name} {role} interview questions",
        "",
        f"**What {c.name} looks for** · {c.looks_for}",
        "",
        "## The interview process, round by round",
        "",
    ]
    for i, rnd in enumerate(c.process, start=1):
        if rnd.topic not in corpus.topics:
            continue
        title = corpus.topics[rnd.topic].title
        note = f": {rnd.note}" if rnd.note else ""
        body.append(f"{i}. [{md_escape(title)}]({rel(src, round_target(corpus, slug, rnd.topic, settings))}){note}")
    body += [
        "",
        fragment("source.html.j2", source=c.source, checked=c.checked.isoformat()),
        "",
        practice.practice_links(corpus, src, company=slug),
        "",
        f"## Questions tagged to {c.name}",
        "",
        counts(len(slugs), free_count(corpus, slugs)),
        "",
        question_items(corpus, src, slugs),
        f"## {c.name} interview FAQ",
        "",
        faq(
            [
                (
                    f"What is the {c.name} {role} interview process?",
                    f"{plural(len(c.process), 'round')}, in this order: "
                    + ", ".join(corpus.topics[r.topic].title for r in c.process if r.topic in corpus.topics)
                    + ".",
                ),
                (f"What does {c.name} look for in inference engineers?", c.looks_for),
            ]
        ),
        call_to_action(src, f"Prepare the whole {c.name} {role} loop: Premium unlocks every answer.", settings.shop),
        disclaimer(c.name),
    ]
    meta = PageMeta(
        path=src,
        title=c.short_title,
        description=c.description,
        crumbs=(("Home", HOME), ("Companies", COMPANIES), (c.name, src)),
        jsonld=(item_list(f"{c.name} questions", items_of(corpus, slugs), settings),),
        kind="company",
        sources=(CATALOG_COMPANIES, CATALOG_TOPICS, *qsources(corpus, slugs)),
    )
    return make_page(meta, "\n".join(body))


def company_topic_page(corpus: Corpus, company: str, topic: str, settings: Settings) -> Page:
    """A company×topic page: tagged questions first, then the track's other questions in editorial rank."""
    c = corpus.companies[company]
    t = corpus.topics[topic]
    src = company_topic_path(company, topic)
    role = first_role(corpus, company)
    note = next(r.note for r in c.process if r.topic == topic)
    mine = by_rank(corpus, tagged(corpus, company, topic))
    more = by_rank(corpus, [s for s in topic_order(corpus, topic) if s not in mine])
    others = [r.topic for r in c.process if r.topic != topic and r.topic in corpus.topics]
    body = [
        f"# {c.name} {t.title} interview questions",
        "",
        f"{t.title} is one round of the {c.name} {role} loop. {note} Questions tagged to {c.name} come first, "
        f"then the rest of the {t.title} track in editorial rank (the editors' order, not reader votes).",
        "",
        f"**What {c.name} looks for here** · {c.looks_for} "
        f"[The full {c.name} interview process]({rel(src, company_path(company))}).",
        "",
        f"## {t.title} questions tagged to {c.name}",
        "",
        counts(len(mine), free_count(corpus, mine)),
        "",
        question_items(corpus, src, mine),
    ]
    if more:  # a company×topic page exists only when the topic has questions beyond the tagged ones
        body += [
            f"## More {t.title} questions for this loop",
            "",
            f"In editorial rank. Not tagged to {c.name}; they cover the same ground.",
            "",
            counts(len(more), free_count(corpus, more)),
            "",
            question_items(corpus, src, more),
        ]
    body += [
        f"## {c.name} {t.title} FAQ",
        "",
        faq(
            [
                (
                    f"What {t.title} questions does {c.name} ask?",
                    "Questions tagged to it here: "
                    + "; ".join(f'"{corpus.questions[s].title}"' for s in mine[:3])
                    + f". What the round stresses: {note}",
                ),
                (
                    f"How should I prepare for the {c.name} {t.title} round?",
                    f"Work the tagged questions first, then the free ones in the {t.title} track, and size "
                    "every answer with numbers before arguing a design.",
                ),
            ]
        ),
        f"## Other {c.name} interview rounds",
        "",
    ]
    body += [
        f"- [{md_escape(corpus.topics[o].title)}]({rel(src, round_target(corpus, company, o, settings))})"
        for o in others
    ]
    body += ["", practice.practice_links(corpus, src, topic=topic, company=company)]
    body += [
        "",
        call_to_action(
            src, f"{t.title} is one round. Premium unlocks every answer across the {c.name} loop.", settings.shop
        ),
        disclaimer(c.name),
    ]
    meta = PageMeta(
        path=src,
        title=fit(
            (f"{c.name} {t.title} interview questions", f"{c.name} {t.title} questions", f"{c.name}: {t.short_title}"),
            SHORT_TITLE_MAX,
        ),
        description=fit(
            (
                f"{c.name} {role} {t.title} round: {note} Tagged questions with worked answers.",
                f"{c.name} {t.title} round: {note}",
                f"{c.name} {role} {t.title} round: {t.description}",
            ),
            DESCRIPTION_MAX,
            DESCRIPTION_MIN,
        ),
        crumbs=(("Home", HOME), ("Companies", COMPANIES), (c.name, company_path(company)), (t.title, src)),
        jsonld=(item_list(f"{c.name} {t.title} questions", items_of(corpus, mine + more), settings),),
        kind="company-topic",
        sources=(CATALOG_COMPANIES, CATALOG_TOPICS, *qsources(corpus, mine + more)),
    )
    return make_page(meta, "\n".join(body))
