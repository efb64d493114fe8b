"""Pagefind's output made byte-stable across builds of the same pages, so a deploy uploads what changed.

Pagefind 1.3+ names fragments and word-index chunks by their content and writes them the same way each
run, but its filter indexes list a filter's values in hash-map order (Pagefind issue #638: "other files
will still change, such as the filter/metadata indexes"). A different order gives the filter file
another name, which changes the language's metadata file (it names every chunk and filter file), which
changes ``pagefind-entry.json``: three objects re-uploaded on every deploy, and every reader's cached
metadata dropped. Here each filter file's values are sorted, the file is written again (gzip without a
timestamp) under a name from its content, and the metadata file and the entry are rewritten to match.

A filter file is gzip of ``pagefind_dcd`` then CBOR: ``[filter name, [[value, [page numbers]], ...]]``.
Only that shape (arrays, text, unsigned integers) is rewritten; anything else is left as Pagefind wrote
it (the site stays correct, the deploy only uploads more).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

MAGIC = b"pagefind_dcd"
CBOR = object | list["CBOR"]


class _Unknown(ValueError):
    """A CBOR item outside the shape this module rewrites."""


def _head(data: bytes, i: int) -> tuple[int, int, int]:
    major, info = data[i] >> 5, data[i] & 31
    i += 1
    if info < 24:
        return major, info, i
    size = {24: 1, 25: 2, 26: 4, 27: 8}.get(info)
    if size is None:
        raise _Unknown("indefinite length")
    return major, int.from_bytes(data[i : i + size], "big"), i + size


def decode(data: bytes, i: int = 0) -> tuple[object, int]:
    """One CBOR item (unsigned int, text, array) at ``i``: the value and the offset after it."""
    major, n, i = _head(data, i)
    if major == 0:
        return n, i
    if major == 3:
        return data[i : i + n].decode("utf-8"), i + n
    if major == 4:
        out = []
        for _ in range(n):
            item, i = decode(data, i)
            out.append(item)
        return out, i
    raise _Unknown(f"CBOR major type {major}")


def _encode_head(major: int, n: int) -> bytes:
    if n < 24:
        return bytes([major << 5 | n])
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | info]) + n.to_bytes(size, "big")
    raise _Unknown("integer too large")


def encode(value: object) -> bytes:
    """Shortest-form CBOR of an unsigned int, text or array (what Pagefind's encoder writes)."""
    if isinstance(value, bool):
        raise _Unknown("bool")
    if isinstance(value, int) and value >= 0:
        return _encode_head(0, value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return _encode_head(3, len(raw)) + raw
    if isinstance(value, list):
        return _encode_head(4, len(value)) + b"".join(encode(v) for v in value)
    raise _Unknown(type(value).__name__)


def sorted_filter(raw: bytes) -> bytes | None:
    """The filter file's decompressed bytes with its values in sorted order, or None outside the known shape."""
    if not raw.startswith(MAGIC):
        return None
    try:
        doc, end = decode(raw, len(MAGIC))
        if end != len(raw) or not isinstance(doc, list) or len(doc) != 2 or not isinstance(doc[1], list):
            return None
        values = doc[1]
        if not all(isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) for v in values):
            return None
        doc = [doc[0], sorted(values, key=lambda v: v[0])]
        return MAGIC + encode(doc)
    except (_Unknown, IndexError, UnicodeDecodeError):
        return None


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def stabilise(index_dir: Path) -> int:
    """Rewrite a Pagefind output folder's filter and metadata files in a canonical form; returns the count
    of filter files rewritten (0: nothing to do or an unknown shape, the output is left as it was)."""
    entry_path = index_dir / "pagefind-entry.json"
    if not entry_path.is_file():
        return 0
    entry = json.loads(entry_path.read_text("utf-8"))
    rewritten = 0
    for lang, info in entry.get("languages", {}).items():
        meta_path = index_dir / f"pagefind.{info['hash']}.pf_meta"
        if not meta_path.is_file():
            continue
        meta = gzip.decompress(meta_path.read_bytes())
        new_meta = meta
        for old in sorted((index_dir / "filter").glob(f"{lang}_*.pf_filter")):
            canonical = sorted_filter(gzip.decompress(old.read_bytes()))
            if canonical is None:
                continue
            old_hash = old.name[: -len(".pf_filter")]
            new_hash = f"{lang}_" + hashlib.sha256(canonical).hexdigest()[: len(old_hash) - len(lang) - 1]
            if old_hash.encode() not in new_meta:
                continue
            new_meta = new_meta.replace(old_hash.encode(), new_hash.encode())
            old.unlink()
            (old.parent / f"{new_hash}.pf_filter").write_bytes(_gzip(canonical))
            rewritten += 1
        if new_meta == meta:
            continue
        old_meta_hash = str(info["hash"])
        meta_hash = f"{lang}_" + hashlib.sha256(new_meta).hexdigest()[: len(old_meta_hash) - len(lang) - 1]
        meta_path.unlink()
        (index_dir / f"pagefind.{meta_hash}.pf_meta").write_bytes(_gzip(new_meta))
        info["hash"] = meta_hash
    if rewritten:
        entry_path.write_text(json.dumps(entry, ensure_ascii=False, separators=(",", ":")), "utf-8")
    return rewritten
