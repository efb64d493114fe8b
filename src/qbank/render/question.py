"""Question pages: tags, the free answer, premium sections (placeholders or paywall blocks), derivation."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from ..answers import FreeText, PremiumSection
from ..corpus import Corpus
from ..seal.regions import wrap
from .common import (
    HOME,
    PRICING,
    TOPICS,
    Page,
    call_to_action,
    concept_path,
    make_page,
    question_path,
    topic_path,
)
from .derivation import Derivation, latest
from .hubs import company_target, memo, topic_order
from .kernel_table import kernel_table
from .seo import PageMeta, absolute
from .settings import BRAND, Settings
from .templating import fragment
from .text import approx_words, md_escape, rel, strip_markers

PREMIUM_CLASS = "qb-premium"
PREMIUM_SELECTOR = "." + PREMIUM_CLASS
PREVIEW_CLASS = "qb-preview-premium"
"""Premium shown in `qbank serve`: a class the paywall neither seals nor matches (no ``qb-premium`` in it)."""


TRY_FIRST = "Try it first: work out your own answer, then open the worked one"
DERIVATION_LEGEND = (
    "How to read it: this is the question's verification script as it ran. Lines with `given` or `fact` are "
    "inputs, each with its cited source; every other value is derived from them in code; `claim` names a "
    "derived value that a number in the answer must match, and a false `check` fails verification, so the "
    "site is not built."
)
"""The one-paragraph legend above an executed derivation."""
DERIVATION_SUMMARY = (
    "The verification script as it ran: each input with its cited source, each derived value, and the checks "
    "that bind the numbers in the answer."
)
"""The free line on a premium question's sealed derivation (the same for every question: it names no content)."""
DERIVATION_FOLD = "The script as it ran: inputs, derived values, checks"
"""The summary of the fold that holds the derivation itself, under its heading and legend: closed, the browser
neither styles nor lays it out at load (a phone's blocking time, bench/lighthouse.py), and it stays in the HTML for
search engines."""


def locked_placeholder(heading: str, n_words: int, index: int, pricing_href: str, summary: str = "") -> str:
    """Markdown for a locked premium section: its heading, its approximate length and the call to action.

    ``pricing_href`` is a link mkdocs resolves (e.g. ``../pricing.md`` from a question page). The paywall
    reuses this function for what readers see before they unlock a section.
    """
    heading = strip_markers(heading).strip()  # a number in a section's heading may carry its binding
    return fragment(
        "locked-section.md.j2",
        premium_class=PREMIUM_CLASS,
        heading_md=Markup(heading),  # the answer's own Markdown heading, as the free sections are
        heading=heading,
        index=index,
        n_words=n_words,
        summary=summary,
        pricing_href=pricing_href,
    )


def locked_notice_html(n_words: int, pricing_url: str) -> str:
    """The same notice as HTML, for the paywall to place inside a ``.qb-premium`` element after rendering."""
    return fragment("locked-notice.html.j2", n_words=n_words, pricing_url=pricing_url)


def premium_block(heading: str, markdown: str, index: int, token: str, summary: str = "") -> str:
    """The paywall contract: one premium section in full, between region markers the sealer cuts at build time.

    Everything between the markers is sealed whatever HTML it holds (see ``qbank.seal.regions``).
    """
    return wrap(token, "premium", index, strip_markers(markdown), strip_markers(heading).strip(), summary)


def free_block(markdown: str, index: int, token: str) -> str:
    """A free contributor part (answer text, a free derivation): published after the sanitizer."""
    return wrap(token, "free", index, strip_markers(markdown))


def preview_block(heading: str, markdown: str, index: int, token: str) -> str:
    """`qbank serve` only: a premium section shown in full under a clear marker (never sealed, never built)."""
    heading = strip_markers(heading).strip()
    region = Markup(wrap(token, "preview", index, strip_markers(markdown), heading))
    return fragment("preview-section.md.j2", preview_class=PREVIEW_CLASS, index=index, heading=heading, region=region)


def _section(heading: str, markdown: str, index: int, src: str, settings: Settings, summary: str = "") -> str:
    if settings.preview:
        return preview_block(heading, markdown, index, settings.seal_token)
    if settings.paywall:
        return premium_block(heading, markdown, index, settings.seal_token, summary)
    return locked_placeholder(heading, approx_words(markdown), index, rel(src, PRICING), summary)


def _demote(markdown: str) -> str:
    """Derivation Markdown sits under the page's h1: its headings start at h3."""
    out = []
    for line in markdown.splitlines():
        if line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            if hashes <= 6 and line[hashes:hashes + 1] == " ":
                line = "#" * min(6, hashes + 2) + line[hashes:]
        out.append(line)
    return "\n".join(out)


def _derivation(d: Derivation, premium: bool, index: int, src: str, settings: Settings) -> str:
    """The executed derivation and the kernel checks: for a premium question, all of it is one premium
    section (check names, devices and times come from the premium script, so they stay in the seal). On a free
    question the script itself is folded under its heading and legend (``DERIVATION_FOLD``); the heading, the
    legend and the fold are this site's, outside the contributor region the sanitizer cuts to its allowlist."""
    kernels = ["## Kernel checks", "", *kernel_table(d.kernels), ""] if d.kernels else []
    legend = ["## Executed derivation", "", DERIVATION_LEGEND, "{: .qb-legend }", ""]
    script = _demote(d.markdown or "").strip()  # demoted: its headings sit under the page's h1
    if premium:
        parts = [*legend, script, ""] if d.markdown else []
        heading = "Executed derivation" if d.markdown else "Kernel checks"
        return _section(heading, "\n".join(parts + kernels), index, src, settings, DERIVATION_SUMMARY)
    out: list[str] = []
    if d.markdown:
        out += [*legend, fragment("derivation-fold-open.md.j2", summary=DERIVATION_FOLD), ""]
        out += [free_block(script, 1000 + index, settings.seal_token), "", "</details>", ""]
    if kernels:
        out.append(free_block("\n".join(kernels), 2000 + index, settings.seal_token))
    return "\n".join(out)


def next_in_track(corpus: Corpus, slug: str) -> str | None:
    """The question after this one in its topic's order (easiest first, then editorial rank), if any."""
    order = topic_order(corpus, corpus.questions[slug].topic)
    i = order.index(slug)
    return order[i + 1] if i + 1 < len(order) else None


def nearest_in_topic(corpus: Corpus, topic: str, difficulty: int) -> list[str]:
    """A topic's questions, closest in difficulty first, then by editorial rank and slug; remembered per
    (topic, difficulty), so each question page filters a sorted list instead of sorting its topic again
    (sorting per page was quadratic in the bank's size)."""
    return memo(corpus, ("nearest", topic, difficulty), lambda: sorted(
        topic_order(corpus, topic),
        key=lambda s: (abs(corpus.questions[s].difficulty - difficulty), corpus.questions[s].editorial_rank, s),
    ))


def related(corpus: Corpus, slug: str, settings: Settings) -> list[str]:
    """Related questions: the declared ones first, then the same topic's closest in difficulty."""
    q = corpus.questions[slug]
    out = [r for r in q.related if r in corpus.questions]
    taken = {slug, *out}
    near: list[str] = []
    for s in nearest_in_topic(corpus, q.topic, q.difficulty):
        if len(out) + len(near) >= settings.related_max:
            break
        if s not in taken:
            near.append(s)
    return (out + near)[: settings.related_max]


def question_page(corpus: Corpus, slug: str, settings: Settings, lastmod: dict[str, str] | None = None) -> Page:
    """One question page."""
    q = corpus.questions[slug]
    src = question_path(slug)
    topic = corpus.topics[q.topic]
    premium = q.access == "premium"
    tags = [f"[{md_escape(topic.title)}]({rel(src, topic_path(q.topic))})"]
    tags += [
        f"[{md_escape(corpus.companies[c].name)}]({rel(src, company_target(corpus, c, q.topic, settings))})"
        for c in q.companies
        if c in corpus.companies
    ]
    tags += [f"difficulty {q.difficulty}/5", "Premium" if premium else "Free"]
    body = [f"# {q.title}", "", q.teaser, "{: .qb-lead }", "", " · ".join(tags), "{: .qb-tags }", ""]
    answer = corpus.answers.get(slug)
    index = 0
    if answer is not None:
        fold = not premium and answer.parts and all(isinstance(p, FreeText) for p in answer.parts)
        if fold:
            # "try it first": folded for readers, in the HTML for search engines (<details> content is indexed)
            body += [fragment("try-first-open.md.j2", summary=TRY_FIRST)]
        for n, part in enumerate(answer.parts):
            if isinstance(part, FreeText):
                body += [free_block(part.markdown, n, settings.seal_token), ""]
            elif isinstance(part, PremiumSection):
                index += 1
                summary = q.premium_summaries[index - 1] if index <= len(q.premium_summaries) else ""
                body.append(_section(part.heading, part.markdown, index, src, settings, summary))
        if fold:
            body += ["</details>", ""]
    derivation = latest(corpus.root, slug)
    if derivation is not None:
        body.append(_derivation(derivation, premium, index + 1, src, settings))
        index += 1 if premium else 0
    nxt = next_in_track(corpus, slug)
    if nxt is not None:
        after = corpus.questions[nxt]
        body += [
            f"**Next in {md_escape(topic.title)}:** [{md_escape(after.short_title)}]({rel(src, question_path(nxt))}) "
            f"· difficulty {after.difficulty}/5",
            '{: .qb-next data-pagefind-ignore="all" }',  # navigation, not this page's text (search, below)
            "",
        ]
    if q.concepts:
        # site chrome stays out of the search index: a heading every question repeats, another question's title
        # in the track link, the placeholder's buttons, all add posting entries to the commonest words of the
        # index (a first query at 5,000 questions fetched 8 KB more for them; bench/search.py) and false hits
        body += ['## Concepts {: data-pagefind-ignore="all" }', ""]
        body += [
            f"- [{md_escape(corpus.concepts[c].title)}]({rel(src, concept_path(c))})"
            for c in q.concepts
            if c in corpus.concepts
        ]
        body.append("")
    rel_slugs = related(corpus, slug, settings)
    if rel_slugs:
        body += ['## Related questions {: data-pagefind-ignore="all" }', "",
                 '<div class="qb-list" data-pagefind-ignore="all" markdown="1">', ""]
        body += [f"- [{md_escape(corpus.questions[r].title)}]({rel(src, question_path(r))})" for r in rel_slugs]
        body += ["", "</div>", ""]
    if premium and not settings.paywall:
        # with the paywall, the first locked section carries the page's one call to action
        body.append(
            call_to_action(src, "This answer continues in Premium, with every other worked answer.", settings.shop)
        )
    dates = lastmod or {}
    sources = (corpus.question_path(slug), corpus.answer_path(slug), corpus.verify_path(slug))
    modified = max((dates[p] for p in sources if p in dates), default=None)
    article: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "TechArticle",
        "headline": q.title,
        "description": q.description,
        "url": absolute(settings, src),
        "mainEntityOfPage": absolute(settings, src),
        "about": topic.title,
        "proficiencyLevel": "Expert" if q.difficulty >= 4 else "Beginner" if q.difficulty <= 1 else "Intermediate",
        "isAccessibleForFree": not premium,
        "publisher": {"@type": "Organization", "name": BRAND, "url": settings.base},
    }
    if modified:
        article["dateModified"] = modified
    if index:
        article["hasPart"] = [
            {"@type": "WebPageElement", "isAccessibleForFree": False, "cssSelector": PREMIUM_SELECTOR}
        ]
    meta = PageMeta(
        path=src,
        title=q.short_title,
        description=q.description,
        crumbs=(("Home", HOME), ("Topics", TOPICS), (topic.title, topic_path(q.topic)), (q.short_title, src)),
        jsonld=(article,),
        kind="question",
        sources=sources,
    )
    return make_page(meta, "\n".join(body))


__all__ = ["free_block", "locked_placeholder", "premium_block", "question_page"]
