"""Pieces shared by hub and question pages: question lists, paths, call to action, disclaimer."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from ..corpus import Corpus
from ..offer.model import Shop, offer_line
from .seo import PageMeta, crumbs_markdown
from .templating import fragment
from .text import md_escape, rel, strip_markers, yaml_str

HOME = "index.md"
TOPICS = "topics/index.md"
COMPANIES = "companies/index.md"
PRICING = "pricing.md"


def topic_path(slug: str) -> str:
    """Docs path of a topic hub."""
    return f"topics/{slug}.md"


def company_path(slug: str) -> str:
    """Docs path of a company hub."""
    return f"companies/{slug}/index.md"


def company_topic_path(company: str, topic: str) -> str:
    """Docs path of a company×topic page."""
    return f"companies/{company}/{topic}.md"


def question_path(slug: str) -> str:
    """Docs path of a question page."""
    return f"questions/{slug}.md"


def concept_path(slug: str) -> str:
    """Docs path of a concept page."""
    return f"concepts/{slug}.md"


def free_count(corpus: Corpus, slugs: list[str]) -> int:
    """How many of these questions are free."""
    return sum(1 for s in slugs if corpus.questions[s].access == "free")


def question_items(corpus: Corpus, src: str, slugs: list[str]) -> str:
    """A list of questions as teasers, linked from page ``src``."""
    out = [
        fragment(
            "question-item.md.j2",
            title_md=Markup(md_escape(corpus.questions[slug].title)),
            href=rel(src, question_path(slug)),
            access=corpus.questions[slug].access,
            access_label="Free" if corpus.questions[slug].access == "free" else "Premium",
            difficulty=corpus.questions[slug].difficulty,
            teaser=corpus.questions[slug].teaser,
        )
        for slug in slugs
    ]
    if not out:
        return "_No questions yet._\n"
    return fragment("question-list.md.j2", items=Markup("\n".join(out)))


def call_to_action(src: str, lead: str, shop: Shop | None) -> str:
    """The page's one premium call to action: the lead, a link to the pricing page and the offer line."""
    offer = offer_line(shop) if shop is not None else ""
    return fragment("call-to-action.md.j2", lead=lead, href=rel(src, PRICING), offer=offer)


def disclaimer(name: str) -> str:
    """The not-affiliated line for a company page."""
    return fragment("disclaimer.html.j2", name=name)


def faq(items: list[tuple[str, str]]) -> str:
    """Collapsible questions and answers for readers (no FAQPage markup)."""
    blocks = []
    for i, (question, answer) in enumerate(items):
        marker = "???+" if i == 0 else "???"
        body = "\n".join("    " + line if line else "" for line in answer.strip().split("\n"))
        blocks.append(f'{marker} question "{question.replace(chr(34), chr(39))}"\n\n{body}\n')
    return "\n".join(blocks)


@dataclass(frozen=True)
class Page:
    """One generated page."""

    path: str
    markdown: str
    meta: PageMeta


def make_page(meta: PageMeta, body: str) -> Page:
    """Assemble front matter, visible breadcrumbs and the body (claim markers removed) into one page."""
    # the title here is what the theme's header shows once the h1 scrolls away (not a URL-made one)
    front = f"---\ntitle: {yaml_str(meta.title)}\ndescription: {yaml_str(meta.description)}\n---\n\n"
    text = crumbs_markdown(meta.path, meta.crumbs) + "\n" + strip_markers(body).strip() + "\n"
    return Page(meta.path, front + text, meta)
