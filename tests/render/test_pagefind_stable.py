"""Pagefind's filter index in a canonical order: the same pages give the same files whatever order Pagefind
wrote the values in; a real Pagefind run over a few pages keeps working after the rewrite."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

from qbank.render.pagefind_stable import MAGIC, decode, encode, sorted_filter, stabilise
from qbank.render.search import pagefind_command

VALUES = [["Question", [10, 11, 12]], ["Page", [1, 3, 300]], ["Topic", [2, 4]], ["Company", [0]]]


def fake_index(folder: Path, values: list[list[object]]) -> None:
    """A Pagefind output with one filter file in the given value order (names as Pagefind would give)."""
    body = MAGIC + encode(["type", values])
    name = "en_" + str(abs(hash(tuple(str(v) for v in values))))[:7]
    (folder / "filter").mkdir(parents=True)
    (folder / "filter" / f"{name}.pf_filter").write_bytes(gzip.compress(body))
    meta = MAGIC + encode(["1.5.2", [["en_5b0d82e", 105]], [["type", name]]])
    (folder / "pagefind.en_0123456789.pf_meta").write_bytes(gzip.compress(meta))
    entry = {"version": "1.5.2", "languages": {"en": {"hash": "en_0123456789", "wasm": "en", "page_count": 16}}}
    (folder / "pagefind-entry.json").write_text(json.dumps(entry))


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_two_orders_of_the_same_values_give_the_same_files(tmp_path: Path) -> None:
    fake_index(tmp_path / "a", VALUES)
    fake_index(tmp_path / "b", list(reversed(VALUES)))
    assert files(tmp_path / "a") != files(tmp_path / "b")
    assert stabilise(tmp_path / "a") == stabilise(tmp_path / "b") == 1
    assert files(tmp_path / "a") == files(tmp_path / "b")
    entry = json.loads((tmp_path / "a/pagefind-entry.json").read_text())
    meta = gzip.decompress((tmp_path / "a" / f"pagefind.{entry['languages']['en']['hash']}.pf_meta").read_bytes())
    (name,) = [p.name[: -len(".pf_filter")] for p in (tmp_path / "a/filter").iterdir()]
    assert name.encode() in meta  # the metadata names the rewritten filter file


def test_an_unknown_shape_is_left_as_it_was(tmp_path: Path) -> None:
    fake_index(tmp_path / "a", VALUES)
    odd = MAGIC + b"\xa1\x61a\x01"  # a CBOR map: not the shape this rewrites
    (f,) = (tmp_path / "a/filter").iterdir()
    f.write_bytes(gzip.compress(odd))
    before = files(tmp_path / "a")
    assert sorted_filter(odd) is None
    assert stabilise(tmp_path / "a") == 0 and files(tmp_path / "a") == before


def test_a_real_pagefind_index_round_trips_and_is_stable(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for i, kind in enumerate(["Question", "Topic", "Page", "Company", "Question", "Concept"]):
        (site / f"p{i}").mkdir(parents=True)
        (site / f"p{i}/index.html").write_text(
            f'<html lang="en"><body><main data-pagefind-body><h1>Page {i}</h1>'
            f'<p data-pagefind-filter="type">{kind}</p><p>kv cache paging number {i}</p></main></body></html>')
    run = subprocess.run(pagefind_command(site), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = site / "pagefind"
    (f,) = (out / "filter").iterdir()
    raw = gzip.decompress(f.read_bytes())
    doc, end = decode(raw, len(MAGIC))
    assert end == len(raw) and MAGIC + encode(doc) == raw  # the codec reads and writes Pagefind's bytes
    stabilise(out)
    first = files(out)
    shutil.rmtree(out)
    assert subprocess.run(pagefind_command(site), capture_output=True, timeout=120).returncode == 0
    stabilise(out)
    assert files(out) == first
