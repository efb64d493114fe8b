"""Practice pages: the hub of all tests and drills, one page per test and per drill, and the links hubs show.

Authors' Markdown (a drill's statement) goes through a free region, so the sanitizer sees it like any
answer text; a premium test's items and keys, and a drill's edge-case tests and reference solution,
go through a premium region, sealed at build exactly like a premium section. The widgets around them
are this module's own markup, from Jinja templates with autoescape.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from ..corpus import Corpus
from ..model import DESCRIPTION_MAX, DESCRIPTION_MIN, SHORT_TITLE_MAX
from ..practice.load import Bank, cross_check, load_bank
from ..practice.model import ChoiceItem, NumericItem, OrderItem, PracticeTest
from ..practice.pyodide import served_bytes
from ..seal.regions import wrap
from .common import HOME, Page, make_page, question_path
from .question import locked_placeholder, preview_block
from .seo import PageMeta, item_list
from .settings import Settings
from .templating import fragment
from .text import fit, md_escape, plural, rel, url_of

HUB = "practice/index.md"
PRACTICE_REGION = 3000
"""Region indexes of practice pages start here (question pages use small ones)."""


@cache
def _env() -> Environment:
    return Environment(
        loader=PackageLoader("qbank.render", "templates/practice"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        keep_trailing_newline=True,
    )


def practice_test_path(slug: str) -> str:
    """Docs-relative path of a test's page."""
    return f"practice/{slug}.md"


def drill_page_path(slug: str) -> str:
    """Docs-relative path of a drill's page."""
    return f"practice/drills/{slug}.md"


_BANKS: dict[int, tuple[Corpus, Bank]] = {}


def bank_for(corpus: Corpus) -> Bank:
    """The corpus's practice bank with keys resolved (loaded once per corpus object)."""
    held = _BANKS.get(id(corpus))
    if held is None or held[0] is not corpus:
        bank, _ = load_bank(corpus.root)
        cross_check(corpus.root, corpus, bank)
        _BANKS.clear()
        _BANKS[id(corpus)] = (corpus, bank)
        return bank
    return held[1]


def _url(src: str, dst_md: str) -> str:
    """A page URL relative to another page's URL (for links the browser builds, outside Markdown)."""
    here = url_of(src).strip("/").split("/") if url_of(src).strip("/") else []
    there = url_of(dst_md).strip("/")
    return "../" * len(here) + (there + "/" if there else "")


def _shuffled(n: int, seed: str) -> list[int]:
    order = list(range(n))
    random.Random(seed).shuffle(order)
    if order == sorted(order):
        order = order[1:] + order[:1]
    return order


def practice_test_data(bank: Bank, slug: str) -> dict[str, Any]:
    """Items and keys of a test as the page's script takes them (pure over the bank)."""
    test = bank.tests[slug]
    src = practice_test_path(slug)
    items: list[dict[str, Any]] = []
    for i, item in enumerate(test.items):
        see: str | None = None
        entry: dict[str, Any] = {"kind": item.kind, "prompt": item.prompt, "explanation": item.explanation}
        if isinstance(item, NumericItem):
            key = bank.key_of(slug, i, item.answer)
            see = key.question
            entry.update(unit=item.unit, precision=item.precision, key=key.value, source=item.answer)
        elif isinstance(item, ChoiceItem):
            see = item.see
            entry.update(options=[{"text": o.text, "why": o.why} for o in item.options],
                         key=next(j for j, o in enumerate(item.options) if o.correct))
        elif isinstance(item, OrderItem):
            see = item.see
            shown = _shuffled(len(item.order), f"{slug}:{i}")
            entry.update(entries=[item.order[j] for j in shown], key=[shown.index(j) for j in range(len(item.order))])
        if isinstance(item, (ChoiceItem, OrderItem)) and item.evidence:
            keys = [bank.key_of(slug, i, r) for r in item.evidence]
            entry["evidence"] = [{"ref": k.ref, "value": k.value, "unit": k.unit} for k in keys]
        if see:
            entry["see"] = _url(src, question_path(see))
        items.append(entry)
    return {"slug": slug, "title": test.title, "minutes": test.minutes, "items": items}


def _target(corpus: Corpus, test: PracticeTest) -> str:
    if test.company and test.company in corpus.companies:
        return f"the {corpus.companies[test.company].name} loop"
    if test.topic and test.topic in corpus.topics:
        return corpus.topics[test.topic].title
    return "practice"


def _sealed(heading: str, markdown: str, index: int, src: str, settings: Settings) -> str:
    if settings.preview:
        return preview_block(heading, markdown, index, settings.seal_token)
    if settings.paywall:
        return wrap(settings.seal_token, "premium", index, markdown, heading)
    return locked_placeholder(heading, 10, index, rel(src, "pricing.md"))


def practice_test_page(corpus: Corpus, bank: Bank, slug: str, settings: Settings) -> Page:
    """One practice test: the widget, and its items and keys (sealed for a premium test)."""
    test = bank.tests[slug]
    src = practice_test_path(slug)
    data = practice_test_data(bank, slug)
    free = test.access == "free"
    widget = _env().get_template("test.html.j2").render(
        slug=slug, topic=test.topic or "", minutes=test.minutes, n_items=len(test.items), access=test.access,
        data=json.dumps(data, separators=(",", ":"), ensure_ascii=False) if free else "",
    )
    body = [f"# {md_escape(test.title)}", "", md_escape(test.teaser), "{: .qb-lead }", "", widget]
    if not free:
        payload = "```json\n" + json.dumps(data, indent=1, ensure_ascii=False) + "\n```"
        body += ["", _sealed("Test items", payload, PRACTICE_REGION, src, settings)]
    if free:  # the prompts as text of the page's own, folded so that a timed attempt starts unread
        body += ["", "## What this test asks", "", fragment("practice-items-open.md.j2", n=len(test.items)), "",
                 *(f"{i}. {md_escape(' '.join(item.prompt.split()))}" for i, item in enumerate(test.items, 1)),
                 "", "</details>"]
    links = sorted({f"- [{md_escape(corpus.questions[q].title)}]({rel(src, question_path(q))})"
                    for q in _questions_of(bank, slug) if q in corpus.questions})
    if links and free:
        body += ["", "## Worked answers behind this test", "", *links]
    meta = PageMeta(
        path=src,
        title=fit((f"{test.title}: a timed practice test", f"{test.title}: practice test", test.title),
                  SHORT_TITLE_MAX),
        description=fit((test.teaser, f"{test.title}: a timed practice test with answer keys computed by the "
                         "verification scripts behind the worked answers."), DESCRIPTION_MAX, DESCRIPTION_MIN),
        crumbs=(("Home", HOME), ("Practice", HUB), (test.title, src)),
        kind="practice-test",
        # a free test's prompts are text of its own (the build's thin-page check holds it to the threshold); a
        # premium test's items are sealed, so its page has only its teaser and stays out of the index
        indexable=free,
        sources=(f"practice/{slug}.yaml",),
    )
    return make_page(meta, "\n".join(body))


def _questions_of(bank: Bank, slug: str) -> set[str]:
    out: set[str] = set()
    for i, item in enumerate(bank.tests[slug].items):
        if isinstance(item, NumericItem):
            out.add(bank.key_of(slug, i, item.answer).question)
        elif item.see:
            out.add(item.see)
    return out


def drill_page(corpus: Corpus, bank: Bank, slug: str, settings: Settings) -> Page:
    """One drill: statement and public tests (free), editor and Run; edge cases and reference sealed."""
    drill = bank.drills[slug]
    files = bank.drill_sources[slug]
    src = drill_page_path(slug)
    size = served_bytes(corpus.root)
    widget = _env().get_template("drill.html.j2").render(
        slug=slug, topic=drill.topic, starter=files["starter.py"],
        rows=min(30, max(10, files["starter.py"].count("\n") + 3)),
        pyodide_mb=f"{size / 1e6:.1f}" if size else "?",
    )
    statement = wrap(settings.seal_token, "free", PRACTICE_REGION, drill.statement)
    public = "```python\n" + files["public_tests.py"].rstrip() + "\n```"
    sealed = (
        "## Edge-case tests\n\n```python\n" + files["edge_tests.py"].rstrip() + "\n```\n\n"
        "## Reference solution\n\n```python\n" + files["reference.py"].rstrip() + "\n```"
    )
    body = [f"# {md_escape(drill.title)}", "", md_escape(drill.teaser), "{: .qb-lead }", "", "## The task", "",
            statement, "", "## Your attempt", "", widget, "", "## Public tests", "",
            '<div class="qbp-public" markdown="1">', "", public, "", "</div>", "",
            _sealed("Edge-case tests", sealed, PRACTICE_REGION + 1, src, settings)]
    if drill.see and drill.see in corpus.questions:
        body += ["", "## The worked answer", "",
                 f"[{md_escape(corpus.questions[drill.see].title)}]({rel(src, question_path(drill.see))})"]
    meta = PageMeta(
        path=src,
        title=fit((f"{drill.title}: a code drill", drill.title), SHORT_TITLE_MAX),
        description=fit((drill.teaser, f"{drill.title}: a code drill you edit and test in the page, in Python, "
                         "with edge-case tests."), DESCRIPTION_MAX, DESCRIPTION_MIN),
        crumbs=(("Home", HOME), ("Practice", HUB), (drill.title, src)),
        kind="practice-drill",
        sources=(f"drills/{slug}/drill.yaml",),
    )
    return make_page(meta, "\n".join(body))


def _test_line(corpus: Corpus, bank: Bank, slug: str, src: str) -> str:
    t = bank.tests[slug]
    tag = "free" if t.access == "free" else "premium"
    return (f"- [{md_escape(t.title)}]({rel(src, practice_test_path(slug))}) · {plural(len(t.items), 'item')} · "
            f"{t.minutes} min · {tag}")


def _drill_line(bank: Bank, slug: str, src: str) -> str:
    d = bank.drills[slug]
    return f"- [{md_escape(d.title)}]({rel(src, drill_page_path(slug))}) · difficulty {d.difficulty}"


def practice_links(corpus: Corpus, src: str, *, topic: str | None = None, company: str | None = None) -> str:
    """A hub's "Practice" section ("" when it has none): a topic's tests and drills, a company's loop tests
    and drills, or on a company×topic page the topic's tests and the drills tagged to both."""
    bank = bank_for(corpus)
    if topic is not None:
        tests = [s for s, t in sorted(bank.tests.items()) if t.topic == topic]
    else:
        tests = [s for s, t in sorted(bank.tests.items()) if t.company == company]
    drills = [s for s, d in sorted(bank.drills.items())
              if (topic is None or d.topic == topic) and (company is None or company in d.companies)]
    if not tests and not drills:
        return ""
    lines = ["## Practice", ""]
    lines += [_test_line(corpus, bank, s, src) for s in tests]
    lines += [_drill_line(bank, s, src) for s in drills]
    lines += ["", f"[All practice tests and drills]({rel(src, HUB)})"]
    return "\n".join(lines) + "\n"


def home_link(corpus: Corpus, src: str) -> str:
    """The home page's way into the practice hub ("" when there is no practice content)."""
    bank = bank_for(corpus)
    if not bank.tests and not bank.drills:
        return ""
    return (f"\n## Practice\n\n[{plural(len(bank.tests), 'timed practice test')} and "
            f"{plural(len(bank.drills), 'code drill')}]({rel(src, HUB)}), taken in the page: answer keys are values "
            "the verification scripts computed, drills run their tests in your browser.\n")


def hub_page(corpus: Corpus, bank: Bank, settings: Settings) -> Page:
    """Every test, by topic and company loop, every drill, and the reader's progress on this device."""
    src = HUB
    tests, drills = sorted(bank.tests), sorted(bank.drills)
    free = sum(bank.tests[s].access == "free" for s in tests)
    topics = {t: {"title": corpus.topics[t].title, "tests": n} for t, n in _per_topic(bank).items()
              if t in corpus.topics}
    body = [
        "# Practice tests and code drills",
        "",
        f"{plural(len(tests), 'timed test')} ({free} free) and {plural(len(drills), 'code drill')} whose tests run "
        "in your browser. Every numeric answer key is a value a verification script computed in this site's build.",
        "{: .qb-lead }",
        "",
        _env().get_template("hub.html.j2").render(topics=json.dumps(topics, separators=(",", ":"))),
    ]
    loops = [s for s in tests if bank.tests[s].company]
    if loops:
        body += ["", "## Company loops", ""] + [_test_line(corpus, bank, s, src) for s in loops]
    for topic in sorted(corpus.topics, key=lambda t: corpus.topics[t].order):
        mine = [s for s in tests if bank.tests[s].topic == topic and not bank.tests[s].company]
        if mine:
            body += ["", f"## {md_escape(corpus.topics[topic].title)}", ""]
            body += [_test_line(corpus, bank, s, src) for s in mine]
    if drills:
        body += ["", "## Code drills", ""] + [_drill_line(bank, s, src) for s in drills]
    items = [(bank.tests[s].title, practice_test_path(s)) for s in tests] + [(bank.drills[s].title, drill_page_path(s))
                                                                     for s in drills]
    meta = PageMeta(
        path=src,
        title="Practice tests and code drills for inference interviews",
        description=fit((f"{plural(len(tests), 'timed practice test')} and {plural(len(drills), 'code drill')} "
                         "for LLM inference engineers, with answer keys computed by verification scripts.",
                         f"{plural(len(tests), 'practice test')} and {plural(len(drills), 'code drill')} "
                         "with keys computed by verification scripts."), DESCRIPTION_MAX, DESCRIPTION_MIN),
        crumbs=(("Home", HOME), ("Practice", src)),
        jsonld=(item_list("Practice tests and code drills", items, settings),),
        kind="practice-hub",
        sources=tuple(f"practice/{s}.yaml" for s in tests) + tuple(f"drills/{s}/drill.yaml" for s in drills),
    )
    return make_page(meta, "\n".join(body))


def _per_topic(bank: Bank) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in bank.tests.values():
        if t.topic:
            out[t.topic] = out.get(t.topic, 0) + 1
    return out


def practice_pages(corpus: Corpus, settings: Settings) -> list[Page]:
    """The hub, every test page and every drill page (nothing when the repository has no practice content)."""
    bank = bank_for(corpus)
    if not bank.tests and not bank.drills:
        return []
    pages = [hub_page(corpus, bank, settings)]
    pages += [practice_test_page(corpus, bank, s, settings) for s in sorted(bank.tests) if _keys_complete(bank, s)]
    pages += [drill_page(corpus, bank, s, settings) for s in sorted(bank.drills)]
    return pages


def _keys_complete(bank: Bank, slug: str) -> bool:
    """A test renders only with every key resolved (`qbank build` refuses the others before rendering)."""
    try:
        practice_test_data(bank, slug)
    except KeyError:
        return False
    return True
