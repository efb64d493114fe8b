"""The sanitizer: raw HTML cut to the allowlist; Markdown's own output of the real corpus unchanged."""

from __future__ import annotations

import html as htmlmod
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest
import yaml

from qbank.corpus import load_corpus
from qbank.render.derivation import latest
from qbank.seal.sanitize import sanitize_html

REPO = Path(__file__).parents[2]


class _Tokens(HTMLParser):
    """A page as (tag, sorted attributes) and text tokens: what a browser builds, not the bytes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[object] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # a style is compared as CSS, not as bytes ("text-align: right;" is "text-align:right")
        norm = [(k, (v or "").replace(" ", "").rstrip(";") if k == "style" else v or "") for k, v in attrs]
        self.out.append(("<", tag, tuple(sorted(norm))))

    def handle_endtag(self, tag: str) -> None:
        self.out.append(("</", tag))

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.out.append(" ".join(htmlmod.unescape(data).split()))


def tokens(fragment: str) -> list[object]:
    p = _Tokens()
    p.feed(fragment)
    p.close()
    return p.out


def site_markdown() -> markdown.Markdown:
    """Markdown with the real site's extensions and settings (from mkdocs.yml)."""
    text = (REPO / "mkdocs.yml").read_text().replace("!!python", "#").replace("!ENV ", "")  # tags: values only
    config = yaml.safe_load(text)
    names: list[str] = []
    configs: dict[str, dict[str, object]] = {}
    for item in config["markdown_extensions"]:
        if isinstance(item, dict):
            (name, conf), = item.items()
            names.append(name)
            configs[name] = conf
        else:
            names.append(item)
    return markdown.Markdown(extensions=names, extension_configs=configs)


def test_the_real_corpus_renders_identically(verified_repo: Path) -> None:
    corpus, report = load_corpus(verified_repo)
    assert report.errors == 0
    texts = [p.markdown for a in corpus.answers.values() for p in a.parts]
    # every question's derivation, from verification run for this session (never a developer's .qbank)
    derivations = [d.markdown for s in corpus.questions if (d := latest(verified_repo, s)) is not None and d.markdown]
    assert len(derivations) == len(corpus.questions)
    texts += derivations
    md = site_markdown()
    for text in texts:
        rendered = md.reset().convert(text)
        assert tokens(sanitize_html(rendered)) == tokens(rendered), text[:80]


@pytest.mark.parametrize(
    ("raw", "gone"),
    [
        ("<style>.md-content{display:none}</style><p>x</p>", "style"),
        ('<meta http-equiv="refresh" content="0;url=https://phish.example/">', "refresh"),
        ('<base href="https://phish.example/">', "base"),
        ('<link rel="stylesheet" href="https://phish.example/x.css">', "link"),
        ('<form action="https://phish.example/"><input name="key"></form>', "form"),
        ('<iframe src="https://phish.example/"></iframe>', "iframe"),
        ('<object data="https://phish.example/"></object>', "object"),
        ("<script>alert(1)</script>", "script"),
        ('<p onclick="alert(1)">x</p>', "onclick"),
        ('<a href="javascript:alert(1)">x</a>', "javascript"),
        ('<p style="position:fixed">x</p>', "style"),
        ('<div class="qb-locked md-button">Enter license key</div>', "qb-locked"),
        ('<h2 id="qb-premium-1">x</h2>', "qb-premium"),
        ("<p>a</p></div></div></section>", "</div>"),
        ("<!-- a comment --><p>x</p>", "comment"),
    ],
)
def test_hostile_html_is_removed(raw: str, gone: str) -> None:
    assert gone not in sanitize_html(raw)


def test_markdown_own_markup_is_kept() -> None:
    md = site_markdown()
    text = (
        "## A heading\n\n!!! note \"Careful\"\n    body\n\n| a | b |\n|--:|:--|\n| 1 | 2 |\n\n"
        "```python\nx = 1\n```\n\n$E = mc^2$\n"
    )
    rendered = md.convert(text)
    clean = sanitize_html(rendered)
    assert tokens(clean) == tokens(rendered)
    for kept in ('class="headerlink"', 'class="admonition note"', 'class="highlight"', 'class="arithmatex"',
                 "text-align:right", 'id="a-heading"'):
        assert kept in clean, kept
