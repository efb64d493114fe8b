"""The pricing page: price and checkout from site_src/shop.yaml, counts and FAQ computed from the corpus."""

from __future__ import annotations

import re

from qbank.answers import PremiumSection
from qbank.corpus import Corpus
from qbank.offer.model import Shop
from qbank.paywall.keys import format_key, parse_key
from qbank.render.pages import Page
from qbank.render.pricing import included, key_format, pricing_faq

from ..conftest import REPO


def test_pricing_page_names_price_and_links_checkout(pages: dict[str, Page], shop: Shop) -> None:
    md = pages["pricing.md"].markdown
    assert f"**{shop.currency} {shop.price}**" in md
    assert f"]({shop.checkout_url})" in md
    assert f"Within {shop.refund_days} days of the sale" in md
    assert shop.contact_email in md


def test_counts_come_from_the_corpus(corpus: Corpus) -> None:
    inc = included(corpus)
    assert inc.questions == len(corpus.questions)
    assert inc.free == sum(q.access == "free" for q in corpus.questions.values())
    assert inc.premium_sections == sum(
        isinstance(p, PremiumSection) for a in corpus.answers.values() for p in a.parts
    )
    with_free = {corpus.questions[s].topic for s in corpus.questions if corpus.questions[s].access == "free"}
    assert inc.topics_with_free == tuple(
        corpus.topics[t].title for t in sorted(with_free, key=lambda t: corpus.topics[t].order)
    )


def test_faq_says_where_the_free_questions_are(corpus: Corpus, shop: Shop) -> None:
    """The audit's false claim ('free in full, in every topic') cannot come back: the topic count is computed."""
    inc = included(corpus)
    answers = dict(pricing_faq(inc, shop))
    trial = answers["Can I try before buying?"]
    if len(inc.topics_with_free) == inc.topics:
        assert trial.endswith(f"in every one of the {inc.topics} topics.")
    else:
        assert f"in {len(inc.topics_with_free)} of {inc.topics} topics" in trial and "every one" not in trial


def test_real_corpus_faq_says_where_the_free_questions_are(shop: Shop) -> None:
    from qbank.corpus import load_corpus

    corpus, _ = load_corpus(REPO)
    inc = included(corpus)
    free_topics = {q.topic for q in corpus.questions.values() if q.access == "free"}
    assert len(inc.topics_with_free) == len(free_topics)
    trial = dict(pricing_faq(inc, shop))["Can I try before buying?"]
    # the FAQ says what the data says: every topic, or which ones and that the others are premium only
    if len(free_topics) == len(corpus.topics):
        assert f"in every one of the {len(corpus.topics)} topics" in trial and "premium questions only" not in trial
    else:
        assert f"in {len(free_topics)} of {len(corpus.topics)} topics" in trial and "premium questions only" in trial


def test_key_format_is_the_printed_key_shape() -> None:
    key = format_key(bytes(range(16)))
    assert re.sub(r"[0-9A-Z]", "X", key[3:]) == key_format()[3:] and key[:3] == key_format()[:3]
    parse_key(key)  # the real key parses


def test_placeholder_and_get_a_key_in_the_unlock_dialog() -> None:
    js = (REPO / "site_src" / "assets" / "paywall.js").read_text()
    assert f'placeholder="{key_format()}"' in js
    assert "Get a key" in js and "\"../pricing/\"" in js


def test_faq_when_every_topic_has_a_free_question(shop: Shop) -> None:
    from qbank.render.pricing import Included

    inc = Included(questions=30, free=12, premium_sections=40, scripts=30, topics=3, topics_with_free=("A", "B", "C"))
    trial = dict(pricing_faq(inc, shop))["Can I try before buying?"]
    assert trial == "Yes: 12 of 30 questions are free in full, in every one of the 3 topics."


def test_faq_when_some_topics_have_no_free_question(shop: Shop) -> None:
    from qbank.render.pricing import Included

    inc = Included(questions=30, free=12, premium_sections=40, scripts=30, topics=3, topics_with_free=("A", "C"))
    trial = dict(pricing_faq(inc, shop))["Can I try before buying?"]
    assert trial == (
        "Yes: 12 of 30 questions are free in full, in 2 of 3 topics (A, C). "
        "The other topics have premium questions only for now."
    )
