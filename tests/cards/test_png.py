"""The cards' PNG encoder: any decoder reads back exactly the pixels it was given."""

from __future__ import annotations

import io
import random
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from qbank.cards.draw import BACKGROUND, INKS, card_indices
from qbank.cards.palette import palette
from qbank.cards.png import FILTER_NONE, FILTER_UP, SIGNATURE, adler_of_repeats, encode_indexed, encode_png

from .reference import reference_card


def decoded(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def noise(width: int, height: int, seed: int) -> Image.Image:
    rng = random.Random(seed)
    return Image.frombytes("RGB", (width, height), bytes(rng.randrange(256) for _ in range(width * height * 3)))


def striped(width: int, height: int) -> Image.Image:
    """Runs of equal rows between rows that differ, starting and ending on a run."""
    image = Image.new("RGB", (width, height), (26, 35, 126))
    for y in (0, 5, 6, 20, height - 3):
        image.paste((250, y % 256, 3), (0, y, width, y + 1))
    image.paste(noise(width // 2, 4, 1), (3, 30))
    return image


@pytest.mark.parametrize("image", [
    reference_card("KV cache for one request at 128k context", "Question · KV Cache & Memory", "footer", "Prefill"),
    noise(37, 11, 7),  # no row equals the one above
    striped(50, 60),
    Image.new("RGB", (9, 40), (255, 0, 128)),  # one colour: every row after the first is a repeat
    noise(5, 1, 3),  # a single row
], ids=["card", "noise", "striped", "flat", "one-row"])
def test_pixels_round_trip(image: Image.Image) -> None:
    back = decoded(encode_png(image))
    assert back.format == "PNG" and back.mode == "RGB" and back.size == image.size
    assert back.tobytes() == image.tobytes()


def test_the_same_pixels_give_the_same_bytes() -> None:
    assert encode_png(striped(50, 60)) == encode_png(striped(50, 60))
    assert encode_png(striped(50, 60)) != encode_png(striped(50, 61))


def test_other_modes_are_refused() -> None:
    with pytest.raises(ValueError, match="RGB"):
        encode_png(Image.new("RGBA", (4, 4)))


@pytest.mark.parametrize("seed", range(6))
def test_the_checksum_of_repeated_rows_is_zlibs(seed: int) -> None:
    """The Adler-32 of runs of repeated rows, summed without reading them, is zlib's over the same bytes, from
    any starting value (large counts wrap both sums)."""
    rng = random.Random(seed)
    for _ in range(50):
        start = zlib.adler32(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))))
        row_bytes, count = rng.choice([1, 3, 3600, 3 * rng.randrange(1, 5000)]), rng.randrange(0, 700)
        rows = (bytes([FILTER_UP]) + bytes(row_bytes)) * count
        assert adler_of_repeats(start, row_bytes, count) == zlib.adler32(rows, start)


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The PNG's chunks, each CRC checked by hand."""
    assert data[:8] == SIGNATURE
    out, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        out.append((kind, body))
        at += 12 + length
    assert at == len(data)
    return out


def unfiltered(stream: bytes, width: int, height: int) -> np.ndarray:
    """Scanlines back from the zlib stream, undoing the None and Up filters by hand."""
    raw = np.frombuffer(zlib.decompress(stream), np.uint8).reshape(height, width + 1)
    rows = np.zeros((height, width), np.uint8)
    for y in range(height):
        assert raw[y, 0] in (FILTER_NONE, FILTER_UP) and (y or raw[y, 0] == FILTER_NONE)
        rows[y] = raw[y, 1:] + (rows[y - 1] if raw[y, 0] == FILTER_UP else 0)
    return rows


INDEXED = [
    card_indices("office ffi: a title on two lines of the card, with a ligature", "Kicker", "footer", "Prefill"),
    np.random.default_rng(3).integers(0, 253, (11, 37), dtype=np.uint8),
    np.zeros((40, 9), np.uint8),
    np.full((1, 5), 252, np.uint8),
    np.repeat(np.arange(50, dtype=np.uint8)[:, None] % 7, 60, axis=1),
]


@pytest.mark.parametrize("indices", INDEXED, ids=["card", "noise", "flat", "one-row", "bands"])
def test_palette_images_decode_to_their_indices_by_pillow_and_by_hand(indices: np.ndarray) -> None:
    plte = palette(BACKGROUND, INKS)
    data = encode_indexed(indices, plte)
    back = decoded(data)
    assert back.mode == "P" and back.size == (indices.shape[1], indices.shape[0])
    assert np.array_equal(np.asarray(back), indices) and bytes(back.getpalette() or [])[:len(plte)] == plte
    parts = chunks(data)
    assert [kind for kind, _ in parts] == [b"IHDR", b"PLTE", b"IDAT", b"IEND"]
    assert parts[0][1] == struct.pack(">IIBBBBB", indices.shape[1], indices.shape[0], 8, 3, 0, 0, 0)
    assert parts[1][1] == plte
    assert np.array_equal(unfiltered(parts[2][1], indices.shape[1], indices.shape[0]), indices)
    assert data == encode_indexed(indices.copy(), plte)


def test_rgb_chunks_check_by_hand_too() -> None:
    image = striped(50, 60)
    parts = chunks(encode_png(image))
    assert [kind for kind, _ in parts] == [b"IHDR", b"IDAT", b"IEND"]


def test_bad_palettes_and_indices_are_refused() -> None:
    with pytest.raises(ValueError, match="past the end"):
        encode_indexed(np.full((2, 2), 3, np.uint8), bytes(9))
    for plte in (b"", bytes(769), bytes(10)):
        with pytest.raises(ValueError, match="palette"):
            encode_indexed(np.zeros((2, 2), np.uint8), plte)
    with pytest.raises(ValueError, match="uint8"):
        encode_indexed(np.zeros((2, 2), np.int32), bytes(3))
