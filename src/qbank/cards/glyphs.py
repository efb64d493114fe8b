"""Lines of text from glyphs rasterised once: the same coverage as Pillow's ``ImageDraw.text``, cheaper.

Pillow renders a line by shaping it (Raqm), then drawing each glyph's FreeType bitmap at its pen position
rounded to a whole pixel, overlapping glyphs combined "over" (``a + t * (255 - a) / 255``). A :class:`Face`
does the same from memory:

- a unit (a character with the combining marks and joiners after it) is rasterised once by Pillow and kept with
  its advance; a unit that may be several glyphs (several characters, or one outside ASCII that shaping may
  decompose), once per 64th of a pixel its pen starts at, so each of its glyphs is rounded as in the line;
- a word's pen positions are the units' advances plus the pair kerning that Pillow's layout applies
  (``getlength(a + b) - getlength(a) - getlength(b)``, remembered per pair); a word is checked once against
  Pillow's own drawing of it, and where it differs (a ligature such as "fi", a contextual form) the shortest run
  of two or three characters that makes them agree becomes one unit, or else the whole word;
- a line is its words laid out once each, joined by spaces with the kerning on either side.

A line with right-to-left or explicit-direction characters, a line break, letters of more than one script, a
format character (a joiner) or a mark after a space is drawn by Pillow itself: reordering and
the shaping of each script's run apart are not modelled here.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

PILLOW_DRAWN = frozenset({"R", "AL", "AN", "LRE", "LRO", "RLE", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI", "B"})
"""Bidirectional classes that make Pillow reorder a line (and "B", a paragraph break)."""

JOIN_SEARCH = 40
"""Words of more units than this that differ from Pillow's drawing are one unit at once (the search for the run
that explains the difference costs two drawings per unit)."""


@dataclass(frozen=True)
class Glyph:
    """A unit's coverage cropped to its ink, where it sits from the pen (``left``) and the baseline (``top``,
    negative above), and its advance in 1/64 pixel."""

    mask: np.ndarray
    left: int
    top: int
    advance: int


def units(text: str) -> list[str]:
    """Characters with the combining marks, joiners and variation selectors that follow them."""
    out: list[str] = []
    for char in text:
        if out and unicodedata.category(char) in ("Mn", "Me", "Cf"):
            out[-1] += char
        else:
            out.append(char)
    return out


MARKS = frozenset({"Mn", "Me", "Mc", "Cf"})


@lru_cache(maxsize=65536)
def traits(word: str) -> tuple[bool, frozenset[str]]:
    """Whether a word leaves its line to Pillow (a character that makes Pillow reorder or break the line, a
    format character such as a joiner, a mark at the word's start, which Pillow attaches to the
    space before it), and the scripts of its letters (the first word of their Unicode names: LATIN, GREEK...)."""
    if word.isascii():
        return any(char in "\r\n" for char in word), frozenset({"LATIN"} if any(c.isalpha() for c in word) else ())
    by_pillow = unicodedata.category(word[0]) in MARKS
    found: set[str] = set()
    for char in word:
        category = unicodedata.category(char)
        by_pillow = by_pillow or category == "Cf" or unicodedata.bidirectional(char) in PILLOW_DRAWN
        if category.startswith("L"):
            found.add(unicodedata.name(char, "?").split(" ")[0] if ord(char) > 127 else "LATIN")
    return by_pillow, frozenset(found)


def pillow_drawn(text: str) -> bool:
    """Whether ``text`` is drawn by Pillow itself: a word of it does (``traits``), or its letters come from
    several scripts (Pillow's layout shapes each script's run apart, so kerning across a change of script is not
    the pair's)."""
    seen: frozenset[str] = frozenset()
    for word in text.split(" "):
        by_pillow, scripts = traits(word)
        seen |= scripts
        if by_pillow or len(seen) > 1:
            return True
    return False


def over(target: np.ndarray, mask: np.ndarray) -> None:
    """Pillow's combination of a glyph with what is already there: ``mask + target * (255 - mask) / 255``,
    rounded as Pillow rounds (``MULDIV255``), in place. Both uint16."""
    tmp = target * (255 - mask) + 128
    tmp += tmp >> 8
    tmp >>= 8
    tmp += mask
    np.minimum(tmp, 255, out=target)


class Face:
    """One font at one size, with its glyphs, advances, kerning and words remembered (per process)."""

    def __init__(self, font: ImageFont.FreeTypeFont) -> None:
        self.font = font
        self.glyphs: dict[tuple[str, int], Glyph] = {}
        self.kerning: dict[tuple[str, str], int] = {}
        self.words: dict[str, tuple[list[str], list[int], int]] = {}
        top_from_la = font.getmask2("H", "L", anchor="la")[1][1]
        top_from_ls = font.getmask2("H", "L", anchor="ls")[1][1]
        self.ascent = top_from_la - top_from_ls
        """From the top of a line (Pillow's default anchor, "la") down to its baseline."""

    def glyph(self, unit: str, start: int = 0) -> Glyph:
        """A unit drawn by Pillow from a pen ``start`` 64ths of a pixel past a whole pixel (0 for single glyphs,
        whose place is the pen rounded to a whole pixel)."""
        found = self.glyphs.get((unit, start))
        if found is None:
            image, (left, top) = self.font.getmask2(unit, "L", anchor="ls", start=(start / 64, 0))
            width, height = image.size
            mask = np.asarray(image, np.uint8).reshape(height, width) if width and height else np.zeros((0, 0))
            rows, cols = np.nonzero(mask)
            if rows.size:
                r0, r1, c0, c1 = int(rows.min()), int(rows.max()) + 1, int(cols.min()), int(cols.max()) + 1
                mask, left, top = mask[r0:r1, c0:c1], left + c0, top + r0
            else:
                mask = np.zeros((0, 0))
            advance = round(self.font.getlength(unit) * 64)
            found = self.glyphs[unit, start] = Glyph(mask.astype(np.uint16), left, top, advance)
        return found

    def place(self, unit: str, pen: int) -> tuple[Glyph, int]:
        """The unit's glyph at ``pen`` (1/64 pixel) and the whole pixel its ``left`` counts from."""
        if len(unit) > 1 or not unit.isascii():  # maybe several glyphs (a ligature, marks, a character the
            # font lacks but shaping decomposes, as "≯"): each rounded from its own pen, as Pillow does
            return self.glyph(unit, pen & 63), pen >> 6
        return self.glyph(unit), (pen + 32) >> 6

    def kern(self, a: str, b: str) -> int:
        """The pair's kerning in 1/64 pixel, as Pillow's layout applies it."""
        found = self.kerning.get((a, b))
        if found is None:
            found = round(self.font.getlength(a + b) * 64) - self.glyph(a).advance - self.glyph(b).advance
            self.kerning[a, b] = found
        return found

    def word(self, word: str) -> tuple[list[str], list[int], int]:
        """A word's units, their pen positions from the word's start and its advance, in 1/64 pixel; remembered.
        Where Pillow draws the word otherwise than its characters side by side (a ligature such as "fi", a
        contextual form), the shortest run of two or three characters that makes them agree is one unit, or
        else the whole word."""
        found = self.words.get(word)
        if found is None:
            parts = units(word)
            pens, advance = self.pens(parts)
            if len(parts) > 1 and not self.same_as_pillow(word, parts, pens):
                parts = self.joined(word, parts)
                pens, advance = self.pens(parts)
            found = self.words[word] = (parts, pens, advance)
        return found

    def pens(self, parts: list[str]) -> tuple[list[int], int]:
        """Pen positions of units side by side, kerned, and their advance (1/64 pixel)."""
        pens: list[int] = []
        pen = 0
        for i, unit in enumerate(parts):
            if i:
                pen += self.kern(parts[i - 1], unit)
            pens.append(pen)
            pen += self.glyph(unit).advance
        return pens, pen

    def joined(self, word: str, parts: list[str]) -> list[str]:
        """The word's units with the shortest run of two or three that Pillow draws as one made one unit, or the
        whole word as one unit when no such run gives Pillow's drawing."""
        for size in (2, 3) if len(parts) <= JOIN_SEARCH else ():
            for i in range(len(parts) - size + 1):
                trial = [*parts[:i], "".join(parts[i:i + size]), *parts[i + size:]]
                if self.same_as_pillow(word, trial, self.pens(trial)[0]):
                    return trial
        return [word]

    def same_as_pillow(self, text: str, parts: list[str], pens: list[int]) -> bool:
        """Whether ``parts`` at ``pens`` give exactly Pillow's drawing of ``text``."""
        size = int(self.font.size)
        width = 4 * size + (pens[-1] >> 6) + 2 * sum(self.place(part, pen)[0].mask.shape[1]
                                                     for part, pen in zip(parts, pens, strict=True))
        apart = np.zeros((5 * size, width), np.uint16)
        together = np.zeros_like(apart)
        for part, pen in zip(parts, pens, strict=True):
            glyph, place = self.place(part, pen)
            if glyph.mask.size:
                draw_glyph(apart, glyph.mask, 2 * size + place + glyph.left, 3 * size + glyph.top)
        image, (left, top) = self.font.getmask2(text, "L", anchor="ls")
        if image.size[0] and image.size[1]:
            whole = np.asarray(image, np.uint8).reshape(image.size[1], image.size[0]).astype(np.uint16)
            draw_glyph(together, whole, 2 * size + left, 3 * size + top)
        return bool(np.array_equal(apart, together))

    def layout(self, text: str) -> tuple[list[str], list[int]]:
        """The line's units and their pen positions in 1/64 pixel: its words (split at spaces) laid out once
        each, joined by the space's advance and the kerning on either side of it."""
        merged: list[str] = []
        pens: list[int] = []
        pen = 0
        for k, piece in enumerate(text.split(" ")):
            for token in (" ", piece) if k else (piece,):
                parts, offsets, advance = self.word(token)
                if not parts:
                    continue
                if merged:
                    pen += self.kern(merged[-1], parts[0])
                merged += parts
                pens += [pen + offset for offset in offsets]
                pen += advance
        return merged, pens

    def length(self, text: str) -> float:
        """The line's advance in pixels, as ``ImageFont.getlength`` gives it."""
        if pillow_drawn(text):
            return float(self.font.getlength(text))
        merged, pens = self.layout(text)
        return (pens[-1] + self.glyph(merged[-1]).advance) / 64 if merged else 0.0


def draw_glyph(target: np.ndarray, mask: np.ndarray, x: int, y: int) -> tuple[int, int, int, int] | None:
    """Combine ``mask`` into ``target`` at (x, y), clipped to it; returns the box drawn (rows, then columns)."""
    height, width = mask.shape
    r0, c0 = max(y, 0), max(x, 0)
    r1, c1 = min(y + height, target.shape[0]), min(x + width, target.shape[1])
    if r0 >= r1 or c0 >= c1:
        return None
    region = target[r0:r1, c0:c1]
    part = mask[r0 - y:r1 - y, c0 - x:c1 - x]
    if region.any():
        over(region, part)
    else:
        region[...] = part
    return r0, r1, c0, c1


def draw_text(target: np.ndarray, face: Face, xy: tuple[int, int], text: str) -> list[tuple[int, int, int, int]]:
    """Draw a line into a coverage canvas as ``ImageDraw.text(xy, text)`` would (anchor "la"); returns the
    boxes drawn."""
    x, y = xy
    if pillow_drawn(text):
        size = int(face.font.size)
        top = max(0, y - 2 * size)  # a band of rows that holds the line (and a line break's next lines)
        band = (target.shape[1], min(target.shape[0], y + (3 + 2 * text.count("\n")) * size) - top)
        if band[1] <= 0:
            return []
        layer = Image.new("L", band)
        ImageDraw.Draw(layer).text((x, y - top), text, font=face.font, fill=255)
        drawn = np.asarray(layer, np.uint8).reshape(band[1], band[0]).astype(np.uint16)
        rows, cols = np.nonzero(drawn)
        if not rows.size:
            return []
        r0, r1, c0, c1 = int(rows.min()), int(rows.max()) + 1, int(cols.min()), int(cols.max()) + 1
        draw_glyph(target, drawn[r0:r1, c0:c1], c0, top + r0)
        return [(top + r0, top + r1, c0, c1)]
    merged, pens = face.layout(text)
    baseline = y + face.ascent
    boxes = []
    for unit, pen in zip(merged, pens, strict=True):
        glyph, place = face.place(unit, pen)
        if glyph.mask.size:
            box = draw_glyph(target, glyph.mask, x + place + glyph.left, baseline + glyph.top)
            if box is not None:
                boxes.append(box)
    return boxes
