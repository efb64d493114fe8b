"""The palette: the background, each ink's levels, and how far a level is from the exact blend."""

from __future__ import annotations

import numpy as np

from qbank.cards.draw import BACKGROUND, INKS
from qbank.cards.palette import LEVELS, blend, index_of_coverage, palette


def entries() -> np.ndarray:
    return np.frombuffer(palette(BACKGROUND, INKS), np.uint8).reshape(-1, 3).astype(int)


def test_the_palette_fits_png_and_starts_with_the_background() -> None:
    table = entries()
    assert len(table) == 1 + 3 * LEVELS <= 256
    assert tuple(table[0]) == BACKGROUND


def test_no_coverage_is_the_background_and_full_coverage_the_ink() -> None:
    table = entries()
    for ink, colour in enumerate(INKS):
        lut = index_of_coverage(ink)
        assert lut[0] == 0 and tuple(table[lut[255]]) == colour


def test_every_coverage_is_within_two_units_of_its_exact_blend() -> None:
    """Rounding coverage to 84 levels moves it by at most 255 / 168 (1.52), which moves a channel by at most
    1.52 * |ink - background| / 255 (1.36 for white on indigo), plus the entry's own rounding (0.5)."""
    table = entries()
    worst = 0
    for ink, colour in enumerate(INKS):
        lut = index_of_coverage(ink)
        for coverage in range(256):
            exact = np.array(blend(BACKGROUND, colour, coverage))
            worst = max(worst, int(np.abs(table[lut[coverage]] - exact).max()))
            assert lut[coverage] == 0 or LEVELS * ink < lut[coverage] <= LEVELS * (ink + 1)
    assert worst <= 2


def test_blend_is_pillows() -> None:
    from PIL import Image, ImageDraw

    for coverage in (0, 1, 77, 128, 254, 255):
        image = Image.new("RGB", (1, 1), BACKGROUND)
        ImageDraw.Draw(image).bitmap((0, 0), Image.new("L", (1, 1), coverage), fill=INKS[0])
        assert image.getpixel((0, 0)) == blend(BACKGROUND, INKS[0], coverage)
