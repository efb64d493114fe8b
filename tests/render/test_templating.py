"""Page markup comes from autoescaped templates: a field cannot open an element or leave an attribute."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import UndefinedError

from qbank.corpus import load_corpus
from qbank.render import templating
from qbank.render.common import disclaimer, question_items
from qbank.render.question import locked_notice_html, locked_placeholder
from qbank.render.text import counts

from ..conftest import CASES

HOSTILE = '"><img src=x onerror=alert(1)> & </div>'
"""A value that would open an element and close its container if it were pasted into markup."""


def test_a_hostile_teaser_in_a_question_list_stays_text() -> None:
    corpus, _ = load_corpus(CASES / "site")
    slug = sorted(corpus.questions)[0]
    corpus.questions[slug] = corpus.questions[slug].model_copy(update={"teaser": HOSTILE})
    md = question_items(corpus, "topics/kv-cache.md", [slug])
    assert "<img" not in md and "</div>\n\n</div>" not in md
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &lt;/div&gt;" in md
    assert md.startswith('<div class="qb-list" data-pagefind-ignore="all" markdown="1">\n\n- **[')
    assert md.endswith("\n\n</div>\n") and md.count("<div") == 1


def test_locked_section_heading_attribute_and_summary_are_escaped() -> None:
    md = locked_placeholder("KV & <b>paging</b>", 120, 2, "../pricing.md", summary=HOSTILE)
    assert md.startswith("## KV & <b>paging</b>\n\n")  # the answer's own Markdown heading, as written
    assert 'data-qb-heading="KV &amp; &lt;b&gt;paging&lt;/b&gt;"' in md
    assert '<p class="qb-locked__summary">&#34;&gt;&lt;img' in md and "<img" not in md
    assert "**Premium section** · ≈ 120 words. [Unlock it with Premium](../pricing.md)\n\n</div>\n" in md
    notice = locked_notice_html(40, 'https://x.example/pricing/"onmouseover="x')
    assert 'href="https://x.example/pricing/&#34;onmouseover=&#34;x"' in notice


def test_company_name_and_counts() -> None:
    assert disclaimer(HOSTILE).count("<") == 2  # its own <p> and </p>
    assert counts(3, 1) == (
        '<p class="qb-counts">3 questions · <span class="qb-unlock-count" data-qb-unlock-count="3" '
        'data-qb-free="1">1</span> unlocked for you</p>'
    )


def test_every_fragment_is_shipped_and_a_missing_value_is_an_error() -> None:
    folder = Path(templating.__file__).parent / "templates" / "fragments"
    used = {p.name for p in folder.glob("*.j2")}
    # the renderers and the paywall's sealed placeholder render fragments: any module of the package counts
    source = "".join(p.read_text() for p in Path(templating.__file__).parents[1].rglob("*.py"))
    assert used and all(f'"{name}"' in source for name in used), "a template no renderer uses"
    with pytest.raises(UndefinedError):
        templating.fragment("counts.html.j2", total=1)
