"""The pricing page: the offer from ``site_src/shop.yaml``, what it includes counted from the corpus, and an
FAQ whose every statement is computed from the same data."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..answers import PremiumSection
from ..corpus import Corpus
from ..offer.model import SHOP_FILE, Shop, offer_line, price_text
from ..paywall.keys import GROUP, KEY_CHARS, PREFIX
from .common import HOME, PRICING, Page, faq, free_count, make_page
from .hubs import CATALOG_TOPICS, topic_order
from .seo import PageMeta
from .settings import Settings
from .text import plural


@dataclass(frozen=True)
class Included:
    """What a license unlocks today, counted from the corpus."""

    questions: int
    free: int
    premium_sections: int
    scripts: int
    topics: int
    topics_with_free: tuple[str, ...]
    """Titles of the topics that have at least one free question, in topic order."""


def included(corpus: Corpus) -> Included:
    """Count questions, free questions, premium sections, verification scripts and topics with a free question."""
    slugs = list(corpus.questions)
    sections = sum(
        1 for a in corpus.answers.values() for part in a.parts if isinstance(part, PremiumSection)
    )
    base = str(corpus.root)
    scripts = sum(1 for s in slugs if os.path.isfile(f"{base}/{corpus.verify_path(s)}"))
    topics = sorted(corpus.topics.values(), key=lambda t: t.order)
    with_free = tuple(t.title for t in topics if free_count(corpus, topic_order(corpus, t.slug)))
    return Included(len(slugs), free_count(corpus, slugs), sections, scripts, len(topics), with_free)


def key_format() -> str:
    """The license key as printed, with every character a placeholder: ``QB-XXXX-…`` (keys.py's format)."""
    return "-".join([PREFIX, *(["X" * GROUP] * (KEY_CHARS // GROUP))])


def shop_of(settings: Settings) -> Shop:
    """The configured offer; a build without ``site_src/shop.yaml`` has been refused before rendering."""
    if settings.shop is None:
        raise ValueError(f"no offer configured: {SHOP_FILE} is missing")
    return settings.shop


def buy_button(shop: Shop) -> str:
    """The checkout link as a primary button, with the offer line."""
    return (
        f"[Buy Premium · {price_text(shop)}]({shop.checkout_url}){{ .md-button .md-button--primary .qb-buy }}\n\n"
        f"{offer_line(shop)}"
    )


def pricing_faq(inc: Included, shop: Shop) -> list[tuple[str, str]]:
    """Questions a buyer asks, each answered from the corpus counts or the shop configuration."""
    free_topics = len(inc.topics_with_free)
    where = ", ".join(inc.topics_with_free) if inc.topics_with_free else "none yet"
    return [
        (
            "Is there a subscription?",
            f"No. One payment of {price_text(shop)} unlocks every premium section for {shop.access_months} months; "
            "nothing renews by itself.",
        ),
        (
            "Can I try before buying?",
            f"Yes: {inc.free} of {plural(inc.questions, 'question')} are free in full, in every one of the "
            f"{plural(inc.topics, 'topic')}."
            if free_topics == inc.topics
            else f"Yes: {inc.free} of {plural(inc.questions, 'question')} are free in full, in {free_topics} of "
            f"{plural(inc.topics, 'topic')} ({where}). The other topics have premium questions only for now.",
        ),
        (
            "What do I get for my money?",
            f"Every premium section on the site ({inc.premium_sections} today) and every one published during your "
            f"{shop.access_months} months. All {plural(inc.questions, 'answer')} have their numbers re-derived by "
            f"{plural(inc.scripts, 'verification script')} before the site is built.",
        ),
        (
            "How do I get my key?",
            f"The shop emails it right after payment. It looks like `{key_format()}` "
            f"({KEY_CHARS} characters after “{PREFIX}-”); enter it in any Unlock dialog.",
        ),
        (
            "Can I get a refund?",
            f"Yes, within {plural(shop.refund_days, 'day')} of the sale. {shop.refund_terms}",
        ),
    ]


def pricing_page(corpus: Corpus, settings: Settings) -> Page:
    """What Premium costs and unlocks, counted from the data, where to buy it and how a license works."""
    shop = shop_of(settings)
    inc = included(corpus)
    premium = inc.questions - inc.free
    body = [
        "# Premium",
        "",
        f"Every worked answer and executed derivation on the site, for {shop.access_months} months, "
        f"for one payment of **{price_text(shop)}**.",
        "{: .qb-lead }",
        "",
        buy_button(shop),
        "",
        "## What is included",
        "",
        "| What you can read | Free | Premium |",
        "| --- | --- | --- |",
        f"| Questions with the full worked answer | {inc.free} | {inc.questions} |",
        f"| Premium sections (derivations, designs, code) | 0 | {inc.premium_sections} |",
        f"| Topics you can read in | {len(inc.topics_with_free)} of {inc.topics} | {inc.topics} of {inc.topics} |",
        "",
        f"Free or premium, every number in an answer is re-derived by its verification script "
        f"({plural(inc.scripts, 'script')} today) before the site is built.",
        "",
        f"{plural(premium, 'question')} are premium today; questions published during your "
        f"{shop.access_months} months are included.",
        "",
        "## How it works",
        "",
        f"1. [Buy Premium]({shop.checkout_url}). The shop emails you a license key: keep it.",
        f"2. On any premium section, choose **Unlock** and enter the key (`{key_format()}`). Your browser "
        "decrypts the premium text locally; the key is never sent anywhere.",
        f"3. {shop.access_months} months after the sale date the key stops unlocking new releases. Nothing renews "
        "by itself.",
        "",
        "## Refunds",
        "",
        f"Within {plural(shop.refund_days, 'day')} of the sale. {shop.refund_terms} "
        f"Write to [{shop.contact_email}](mailto:{shop.contact_email}).",
        "",
        "## Pricing FAQ",
        "",
        faq(pricing_faq(inc, shop)),
    ]
    meta = PageMeta(
        path=PRICING,
        title=f"Premium: every worked answer for {shop.access_months} months",
        description=(
            f"Premium unlocks {plural(premium, 'premium answer')} and every executed derivation for "
            f"{shop.access_months} months: {price_text(shop)}, one payment, no auto-renewal."
        ),
        crumbs=(("Home", HOME), ("Pricing", PRICING)),
        kind="pricing",
        sources=(CATALOG_TOPICS, SHOP_FILE, *(corpus.question_path(s) for s in corpus.questions)),
    )
    return make_page(meta, "\n".join(body))
