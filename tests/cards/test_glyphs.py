"""Lines laid out from remembered glyphs give exactly Pillow's coverage and lengths."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from PIL import Image, ImageDraw

from qbank.cards.draw import WIDTH, face, font, wrap
from qbank.cards.glyphs import JOIN_SEARCH, draw_text, over, pillow_drawn, units

from .reference import reference_wrap
from .titles import CHOSEN, generated

FACES = [("Bold", 64), ("Bold", 56), ("Medium", 32), ("Regular", 30), ("Bold", 44)]
LINES = [*CHOSEN, *(line for title in CHOSEN for line in title.split()), *generated(40, seed=1), "", " ", "  a  b ",
         "two\nlines\nand a third", "ends on a break\n",
         # joiners between symbols: found by fuzzing, Pillow's length differs from the pairs'
         "\u2011\u21f6\u200c\u2011\u0358\u200c\U0001f38f[\u21da  \u03b3 \u03a5]\u2228\u0335\u0332\u21aa"]


def outcome(measure: Callable[[str], float], text: str) -> float | str:
    """A length, or the error measuring it raised (Pillow cannot measure a line break)."""
    try:
        return measure(text)
    except (RuntimeError, ValueError) as error:
        return type(error).__name__


def pillow_coverage(weight: str, size: int, text: str) -> np.ndarray:
    layer = Image.new("L", (WIDTH + 400, 200))
    ImageDraw.Draw(layer).text((72, 40), text, font=font(weight, size), fill=255)
    return np.asarray(layer, np.uint8).astype(np.uint16)


@pytest.mark.parametrize(("weight", "size"), FACES)
def test_a_line_has_exactly_pillows_coverage_and_length(weight: str, size: int) -> None:
    for text in LINES:
        target = np.zeros((200, WIDTH + 400), np.uint16)
        boxes = draw_text(target, face(weight, size), (72, 40), text)
        assert np.array_equal(target, pillow_coverage(weight, size, text)), text
        assert outcome(face(weight, size).length, text) == outcome(font(weight, size).getlength, text), text
        outside = target.copy()
        for r0, r1, c0, c1 in boxes:
            outside[r0:r1, c0:c1] = 0
        assert not outside.any(), text  # every drawn pixel lies in a box returned


def test_a_ligature_is_one_unit_marks_stay_with_their_character() -> None:
    bold = face("Bold", 64)
    assert bold.layout("office off")[0] == ["o", "ffi", "c", "e", " ", "o", "f", "f"]
    assert bold.word("fluffiest")[0] == ["fluffiest"]  # two ligatures: no single run explains it, the whole word
    long = "fi" + "x" * JOIN_SEARCH
    assert bold.word(long)[0] == [long] and bold.word(long[1:])[0] == list(long[1:])
    assert units("e\u0301x\u200dy") == ["e\u0301", "x\u200d", "y"]
    assert pillow_drawn("שלום") and pillow_drawn("a\nb") and pillow_drawn("Привет world")
    assert not pillow_drawn("Привет мир 😀 123") and not pillow_drawn("日本 ... 中文") and not pillow_drawn("a ß é")


def test_over_is_pillows_rounding() -> None:
    a = np.arange(256, dtype=np.uint16).repeat(256)
    t = np.tile(np.arange(256, dtype=np.uint16), 256)
    target = t.copy()
    over(target, a)
    tmp = t * (255 - a) + 128
    assert np.array_equal(target, np.minimum(255, a + (((tmp >> 8) + tmp) >> 8)))
    assert target[a == 0].tolist() == t[a == 0].tolist() and set(target[a == 255].tolist()) == {255}


@pytest.mark.parametrize("size", [64, 56])
def test_wrap_breaks_where_pillows_lengths_break(size: int) -> None:
    titles = [*CHOSEN, *generated(300, seed=size)]
    for title in titles:
        assert wrap(title, face("Bold", size), WIDTH - 144, 4) == reference_wrap(title, font("Bold", size),
                                                                               WIDTH - 144, 4), title


SCRIPTS = [[(0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x17F), (0x1E00, 0x1EFF), (0xFB00, 0xFB06)], [(0x391, 0x3C9)],
           [(0x410, 0x4FF)], [(0xE01, 0xE3A)], [(0x905, 0x94D)], [(0x4E00, 0x4E40)], [(0x5D0, 0x5EA)]]
COMMON = [(0x20, 0x40), (0x20, 0x20), (0x20, 0x20), (0x5B, 0x60), (0x2010, 0x2027), (0x300, 0x36F),
          (0x1F300, 0x1F64F), (0x2190, 0x22FF), (0x200B, 0x200F)]


@pytest.mark.parametrize("seed", range(4))
def test_random_text_of_one_script_or_several_is_drawn_exactly(seed: int) -> None:
    """Letters of one script or several, marks (after a space too), joiners, symbols and emoji: the same coverage
    and length as Pillow's, whichever way the line is drawn."""
    rng = random.Random(seed)
    for _ in range(100):
        pools = (rng.choice(SCRIPTS) * 3 if rng.random() < 0.7 else [r for s in SCRIPTS for r in s]) + COMMON
        text = "".join(chr(rng.randint(*rng.choice(pools))) for _ in range(rng.randint(1, 25)))
        weight, size = rng.choice(FACES)
        target = np.zeros((200, WIDTH + 400), np.uint16)
        draw_text(target, face(weight, size), (72, 40), text)
        assert np.array_equal(target, pillow_coverage(weight, size, text)), ascii(text)
        assert face(weight, size).length(text) == font(weight, size).getlength(text), ascii(text)
