"""What a Pagefind index answers, read from its files with a CBOR reader written for the tests (the modules under
test have their own, narrower one): each page named by its fragment (a hash of its content) instead of its
number, so two indexes of the same pages compare equal whatever order the pages were numbered in."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

MAGIC = b"pagefind_dcd"


def _cbor(data: bytes, i: int) -> tuple[Any, int]:
    """A CBOR reader written for this test (the module under test has its own, narrower one)."""
    major, info = data[i] >> 5, data[i] & 31
    i += 1
    n = info
    if info >= 24:
        size = {24: 1, 25: 2, 26: 4, 27: 8}[info]
        n, i = int.from_bytes(data[i:i + size], "big"), i + size
    if major == 0:
        return n, i
    if major == 1:
        return -1 - n, i
    if major in (2, 3):
        raw = data[i:i + n]
        return (raw.decode() if major == 3 else bytes(raw)), i + n
    if major in (4, 5):
        items = []
        for _ in range(n * (2 if major == 5 else 1)):
            item, i = _cbor(data, i)
            items.append(item)
        return (items if major == 4 else dict(zip(items[::2], items[1::2], strict=True))), i
    if major == 7:
        return {20: False, 21: True, 22: None}[info], i
    raise AssertionError(f"CBOR major type {major}")


def load(path: Path) -> Any:
    raw = gzip.decompress(path.read_bytes())
    assert raw.startswith(MAGIC)
    doc, end = _cbor(raw, len(MAGIC))
    assert end == len(raw)
    return doc


def meaning(index: Path) -> dict[str, Any]:
    """What an index answers, with each page named by its fragment (content hash) instead of its number."""
    (meta_file,) = index.glob("pagefind.*.pf_meta")
    meta = load(meta_file)
    pages = [fragment for fragment, _ in meta[1]]
    words: dict[str, list[Any]] = {}
    for chunk in (index / "index").iterdir():
        (entries,) = load(chunk)
        for word, hits, *more in entries:
            number, named = 0, []
            for delta, *rest in hits:  # page numbers are written as the step from the previous one
                number += delta
                named.append([pages[number], *rest])
            words[word] = sorted(named) + more
    filters = {}
    for f in (index / "filter").iterdir():
        name, values = load(f)
        filters[name] = {value: sorted(pages[p] for p in numbers) for value, numbers in values}
    return {"pages": sorted(map(tuple, meta[1])), "words": words, "filters": filters,
            "fragments": {p.name: p.read_bytes() for p in (index / "fragment").iterdir()}}
