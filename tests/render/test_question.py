"""Question pages: premium sections never rendered in plaintext by default, the paywall contract, markers."""

from __future__ import annotations

import re

from qbank.corpus import Corpus
from qbank.offer.model import Shop
from qbank.render.pages import Page, render_pages
from qbank.render.question import locked_notice_html, locked_placeholder, premium_block, related
from qbank.render.settings import Settings
from qbank.render.text import MARKER_RE


def test_default_mode_emits_placeholders_and_no_premium_text(corpus: Corpus, pages: dict[str, Page]) -> None:
    for slug, answer in corpus.answers.items():
        md = pages[f"questions/{slug}.md"].markdown
        for i, section in enumerate(answer.premium, start=1):
            body = section.markdown.split("\n", 1)[1].strip()
            assert body.split()[0] not in md, f"premium text of {slug} leaked"
            assert f"## {section.heading}" in md
            assert f'data-qb-section="{i}"' in md
            # the count shown is the section's, to the nearest ten (counted here as whitespace-separated
            # tokens with a letter or digit), never the exact count that would fingerprint the text
            shown = [int(n) for n in re.findall(r"≈ (\d+) words", md)]
            near = sum(1 for t in section.markdown.split() if re.search(r"[A-Za-z0-9]", t))
            assert any(n % 10 == 0 and abs(n - near) <= 5 for n in shown), (shown, near)
    assert "SECRET-PREMIUM" not in "".join(p.markdown for p in pages.values())


def test_paywall_mode_wraps_each_section_for_encryption(corpus: Corpus, shop: Shop) -> None:
    pages = {p.path: p for p in render_pages(corpus, Settings(paywall=True, shop=shop))}
    md = pages["questions/kv-fp8.md"].markdown
    settings = Settings(paywall=True, shop=shop)
    pages = {p.path: p for p in render_pages(corpus, settings)}
    md = pages["questions/kv-fp8.md"].markdown
    blocks = re.findall(rf"<!--qbseal {settings.seal_token} open premium (\d) ([0-9a-f]+) ([0-9a-f]+)-->", md)
    assert [(n, bytes.fromhex(h).decode(), bytes.fromhex(s).decode()) for n, h, s in blocks] == [
        ("1", "Rounding against clipping", corpus.questions["kv-fp8"].premium_summaries[0]),
        ("2", "Where the failures hide", corpus.questions["kv-fp8"].premium_summaries[1]),
    ]
    assert md.count(f"<!--qbseal {settings.seal_token} close premium ") == 2
    assert "SECRET-PREMIUM-FP8-ROUNDING" in md and "SECRET-PREMIUM-FP8-LONG" in md
    assert "qb-locked" not in md


def test_placeholder_and_block_escape_headings() -> None:
    text = locked_placeholder('Costs "in" <practice>', 120, 3, "../pricing.md")
    assert 'data-qb-heading="Costs &#34;in&#34; &lt;practice&gt;"' in text  # markupsafe writes &#34; for "
    assert text.startswith('## Costs "in" <practice>\n')
    assert "[Unlock it with Premium](../pricing.md)" in text
    assert locked_notice_html(120, "../../pricing/") == (
        '<p><strong>Premium section</strong> · ≈ 120 words. <a href="../../pricing/">Unlock it with Premium</a></p>'
    )
    block = premium_block("H", "## H\n\n320 GiB{=kv} of cache\n", 1, "0" * 32)
    assert "320 GiB of cache" in block and "{=kv}" not in block


def test_section_headings_drop_claim_markers() -> None:
    # a number in a premium section's heading may carry its binding; the placeholder shows the heading
    heading = "The 1M-token{=context_1m} request"
    block = premium_block(heading, f"## {heading}\n\nbody\n", 1, "0" * 32)
    assert b"The 1M-token request".hex() in block  # the heading travels hex-encoded in the seal marker
    text = locked_placeholder(heading, 120, 1, "../pricing.md")
    assert text.startswith("## The 1M-token request\n") and "{=" not in text


def test_claim_markers_stripped_everywhere(pages: dict[str, Page]) -> None:
    md = pages["questions/kv-per-request.md"].markdown
    assert "With 80 layers, 8 KV heads of 128 dimensions in BF16 that is 320 KiB\nper token." in md
    for page in pages.values():
        assert not MARKER_RE.search(page.markdown), page.path


def test_question_page_tags_and_metadata(corpus: Corpus, pages: dict[str, Page]) -> None:
    page = pages["questions/kv-block-waste.md"]
    q = corpus.questions["kv-block-waste"]
    assert page.meta.description == q.description
    assert f"# {q.title}\n" in page.markdown
    assert "[KV Cache & Memory](../topics/kv-cache.md)" in page.markdown
    # tagged to xai, whose kv-cache round has its own page
    assert "[xAI (SpaceXSI)](../companies/xai/kv-cache.md)" in page.markdown
    article = page.meta.jsonld[0]
    assert article["@type"] == "TechArticle" and article["isAccessibleForFree"] is False
    assert article["hasPart"][0]["cssSelector"] == ".qb-premium"
    free = pages["questions/kv-per-request.md"].meta.jsonld[0]
    assert free["isAccessibleForFree"] is True and "hasPart" not in free
    assert page.meta.sources == (
        "questions/kv-block-waste.yaml",
        "answers/kv-block-waste.md",
        "verify/kv-block-waste.py",
    )


def test_related_declared_first_then_nearest(corpus: Corpus) -> None:
    assert related(corpus, "spec-eagle-rl", Settings())[0] == "spec-speedup"
    near = related(corpus, "kv-fp8", Settings(related_max=2))
    assert len(near) == 2 and "kv-fp8" not in near
    assert near[0] == "kv-block-waste"  # difficulty 3 is closest to 4


def test_related_equals_the_topic_sorted_by_nearness_for_every_question(corpus: Corpus) -> None:
    # the definition, sorted afresh per question: the remembered order must give the same lists
    for related_max in (0, 2, 5, 50):
        s = Settings(related_max=related_max)
        for slug, q in corpus.questions.items():
            declared = [r for r in q.related if r in corpus.questions]
            same_topic = [o for o, oq in corpus.questions.items() if oq.topic == q.topic]
            candidates = [o for o in same_topic if o != slug and o not in declared]
            qs = corpus.questions
            near = sorted(candidates, key=lambda o: (abs(qs[o].difficulty - q.difficulty), qs[o].editorial_rank, o))
            assert related(corpus, slug, s) == (declared + near)[:related_max], slug
