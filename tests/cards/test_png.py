"""The cards' PNG encoder: any decoder reads back exactly the pixels it was given."""

from __future__ import annotations

import io
import random
import zlib

import pytest
from PIL import Image

from qbank.cards.draw import card_image
from qbank.cards.png import FILTER_UP, adler_of_repeats, encode_png


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
    card_image("KV cache for one request at 128k context", "Question · KV Cache & Memory", "footer", "Prefill"),
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
