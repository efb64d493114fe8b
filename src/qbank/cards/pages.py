"""Which card each page gets, and writing them into the built site (a thin adapter over ``draw``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from ..render.seo import PageMeta, card_path, search_label
from ..render.settings import BRAND
from .draw import DRAW_VERSION, card_png

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


def write_cards(site: Path, metas: Iterable[PageMeta], cache: Path | None = None) -> int:
    """Write every page's card into ``site``; returns how many were drawn (the others came from ``cache``,
    keyed by the card's text, so a rebuild redraws only the cards whose text changed)."""
    drawn = 0
    for meta in metas:
        text = (*card_text(meta), BRAND)
        key = hashlib.sha256(json.dumps([DRAW_VERSION, *text]).encode()).hexdigest()[:32]
        cached = cache / f"{key}.png" if cache is not None else None
        if cached is not None and cached.is_file():
            data = cached.read_bytes()
        else:
            data = card_png(*text)
            drawn += 1
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                cached.write_bytes(data)
        target = site / card_path(meta.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return drawn
