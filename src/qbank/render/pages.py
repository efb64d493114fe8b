"""Generated pages as data: a path under the docs folder and its Markdown."""

from __future__ import annotations

from dataclasses import dataclass

from ..corpus import Corpus


@dataclass(frozen=True)
class Page:
    """One generated page."""

    path: str
    markdown: str


def home(corpus: Corpus) -> Page:
    """The home page: what the site is, its topics and companies."""
    lines = [
        "# LLM inference engineer interview questions",
        "",
        "Worked answers argued the way a senior serving engineer argues at a whiteboard; every number "
        "in them is re-derived by a verification script before the site is built.",
        "",
        "## Topics",
        "",
    ]
    for topic in sorted(corpus.topics.values(), key=lambda t: t.order):
        n = len(corpus.topic_questions(topic.slug))
        lines.append(f"- **{topic.title}** · {n} question{'s' if n != 1 else ''}")
    if corpus.companies:
        lines += ["", "## Companies", ""]
        lines += [f"- **{c.name}** · {', '.join(c.roles)}" for c in corpus.companies.values()]
    return Page("index.md", "\n".join(lines) + "\n")


def render_pages(corpus: Corpus) -> list[Page]:
    """Every generated page of the site."""
    return [home(corpus)]
