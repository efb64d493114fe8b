"""Palette cards against the oracle: the card drawn the old way, with Pillow's ``ImageDraw.text`` in RGB.

The layout is exact (``test_glyphs``), so the only difference is the palette's rounding of coverage: at most 2
units of a channel (``test_palette``), and where the title's last line and the footer (two inks) cover the same
pixel, the entry nearest to the one drawn over the other."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from qbank.cards.draw import card_indices, card_png

from .reference import reference_card
from .titles import CHOSEN, generated

KICKER, FOOTER, BRAND = "Question · KV Cache & Memory", "Worked answer · every number re-derived by code", "Prefill"


def difference(title: str, kicker: str = KICKER, footer: str = FOOTER, brand: str = BRAND) -> np.ndarray:
    drawn = Image.open(io.BytesIO(card_png(title, kicker, footer, brand)))
    assert drawn.mode == "P"
    new = np.asarray(drawn.convert("RGB")).astype(int)
    old = np.asarray(reference_card(title, kicker, footer, brand)).astype(int)
    return np.abs(new - old)


@pytest.mark.parametrize("title", [*CHOSEN, *generated(60, seed=5)])
def test_a_card_looks_like_the_old_drawing(title: str) -> None:
    diff = difference(title)
    assert diff.max() <= 2, title
    assert diff.mean() < 0.05, title  # about 2 % of a card's pixels are partly covered


def test_other_kickers_footers_and_brands() -> None:
    for kicker, footer, brand in [("Company · NVIDIA", "qbank", "Q"), ("", "", ""),
                                  ("Topic · Quantization ffi", "Ωμέγα 😀 شكرا", "Prefill office")]:
        assert difference("A title", kicker, footer, brand).max() <= 2


def test_where_two_inks_meet_few_pixels_differ_and_little() -> None:
    """A four-line title at 64 px reaches into the footer's rows: a pixel that both inks cover takes the palette
    entry nearest to one ink drawn over the other (the palette holds one ink a pixel)."""
    diff = difference("WWWWWWWWWg WWWWWWWWWg WWWWWWWWWg WWWWWWWWgjy", footer="lŁlÂlÉlllll" * 12)
    past_rounding = int((diff.max(axis=2) > 2).sum())
    assert 0 < past_rounding <= 100  # the descenders do reach the footer's letters; few pixels, all near
    assert diff.max() <= 8


def test_the_same_text_gives_the_same_indices() -> None:
    assert np.array_equal(card_indices("office ffi", KICKER, FOOTER, BRAND), card_indices("office ffi", KICKER,
                                                                                            FOOTER, BRAND))
