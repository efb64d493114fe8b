"""The cards' palette: the background, and the background blended with each ink at 84 levels of coverage.

Every pixel of a card is the background with one ink (text, accent, muted) laid over it at some coverage, so a
card fits a palette PNG of one byte a pixel. Coverage 0 to 255 is rounded to 84 levels per ink: a pixel is at
most about 1.5 coverage steps (under 1.4 units of a channel, 0 to 255) from the colour that full coverage
blending would give; no coverage and full coverage are exact.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

Colour = tuple[int, int, int]
LEVELS = 84
"""Levels of coverage per ink above none: 1 + 3 * 84 = 253 entries, within PNG's 256."""


def blend(background: Colour, ink: Colour, coverage: int) -> Colour:
    """``ink`` over ``background`` at ``coverage`` (0 to 255), rounded as Pillow's text drawing rounds."""

    def div255(value: int) -> int:
        value += 128
        return (value + (value >> 8)) >> 8

    r, g, b = (div255(i * coverage + bg * (255 - coverage)) for bg, i in zip(background, ink, strict=True))
    return r, g, b


def level_coverage(level: int) -> int:
    """The coverage a level stands for."""
    return round(level * 255 / LEVELS)


@lru_cache(maxsize=4)
def palette(background: Colour, inks: tuple[Colour, ...]) -> bytes:
    """The PLTE entries: index 0 the background, then ``LEVELS`` entries per ink, weakest first."""
    entries = [background]
    for ink in inks:
        entries += [blend(background, ink, level_coverage(level)) for level in range(1, LEVELS + 1)]
    return bytes(channel for entry in entries for channel in entry)


@lru_cache(maxsize=4)
def index_of_coverage(ink: int) -> np.ndarray:
    """For the ``ink``-th ink, the palette index of each coverage 0 to 255 (0, the background, for none)."""
    levels = np.array([round(coverage * LEVELS / 255) for coverage in range(256)], np.uint8)
    return np.where(levels == 0, 0, levels + ink * LEVELS).astype(np.uint8)
