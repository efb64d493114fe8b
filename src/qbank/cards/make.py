"""Making one card in the site: copied from the card store when it holds an intact entry, drawn otherwise.

Light on imports (no mkdocs, no page metadata): the worker processes of ``qbank.cards.pool`` import it.
"""

from __future__ import annotations

from pathlib import Path

from .cache import CardText, card_key, read_entry, write_entry
from .draw import card_png

CardJob = tuple[str, CardText]
"""A card to make: its path inside the site and its text."""


def make_card(site: Path, job: CardJob, cache: Path | None = None) -> bool:
    """Write one card into ``site``, from ``cache`` when it holds an intact entry for its text; returns whether
    it was drawn (a drawn card is stored in ``cache``)."""
    rel, text = job
    key = card_key(text)
    data = read_entry(cache, key) if cache is not None else None
    drawn = data is None
    if data is None:
        data = card_png(*text)
        if cache is not None:
            write_entry(cache, key, data)
    target = site / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return drawn
