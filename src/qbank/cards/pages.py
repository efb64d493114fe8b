"""Which card each page gets, and writing them into the built site (a thin adapter over ``draw``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..render.seo import PageMeta, card_path, search_label
from ..render.settings import BRAND
from .make import CardJob, make_card

FOOTERS = {
    "question": "Worked answer · every number re-derived by code",
    "concept": "A concept of LLM inference interviews, with the questions that use it",
}
DEFAULT_FOOTER = "Interview questions for LLM inference engineers"


def card_text(meta: PageMeta) -> tuple[str, str, str]:
    """(title, kicker, footer) of a page's card, from its free metadata only: short title, kind, parent crumb."""
    label = search_label(meta.kind)
    label = BRAND if label == "Page" else label
    parent = meta.crumbs[-2][0] if len(meta.crumbs) > 2 else ""
    kicker = f"{label} · {parent}" if parent and parent not in {"Topics", "Companies"} else label
    return meta.title, kicker, FOOTERS.get(meta.kind, DEFAULT_FOOTER)


def card_job(meta: PageMeta) -> CardJob:
    """Where a page's card goes and what it shows."""
    return card_path(meta.path), (*card_text(meta), BRAND)


def write_cards(site: Path, metas: Iterable[PageMeta], cache: Path | None = None) -> int:
    """Write every page's card into ``site`` in this process; returns how many were drawn (the others came
    from ``cache``). ``qbank.cards.pool`` does the same in worker processes during a build."""
    return sum(make_card(site, card_job(meta), cache) for meta in metas)
