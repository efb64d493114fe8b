"""Benchmark: what a reader's browser downloads to search, at N questions (bytes, not timings).

    python bench/search.py             # N = 5,000 questions
    python bench/search.py --n 1000

A synthetic corpus (``bench/build.py``'s generator, completed as in ``bench/deploy.py``) is built with the
real hooks and its Pagefind index; the site is served on 127.0.0.1 and Debian's Chromium opens the search
page, as a reader arriving from the header box (``/search/?q=...``). Every response under ``/pagefind/``
is summed: Pagefind's index files (``.pf_*``, wasm) as stored (they are compressed already), scripts,
styles and JSON compressed as a CDN sends them: brotli (the ``brotli`` module, as ``bench/lighthouse.py``'s
server; the CDN in front of the bucket negotiates it), with the gzip total beside it (``kib_gzip``). Figures:

- ``first_query``: a fresh browser, the search page, a query for one question's title words: everything
  the search fetched (UI script and style, loader, wasm, metadata, index chunks, result fragments).
- ``typical_query``: the same for a query of two common words of the corpus (each on most pages): the
  heaviest index chunks and a full first page of results.
- ``next_query``: a second query typed into the same page: what it adds.

Targets (issue 20): first query <= 150 KB, typical <= 300 KB at 5,000 questions. The baseline for the
ratio is the whole index on disk, measured in the same run.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import print_figures, write_corpus
from deploy import complete_corpus, load_average
from qbank.build import mkdocs_build
from qbank.paywall.recipient import keygen
from qbank.sitecheck.links import serve

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
TEXT = (".js", ".css", ".json")


try:
    import brotli  # type: ignore[import-not-found, import-untyped, unused-ignore]
except ImportError:  # gzip only
    brotli = None


def sent(url: str, body: bytes) -> tuple[int, int]:
    """Bytes on the wire, (as a CDN sends them, gzipped): text brotli-compressed where the module is present
    (gzip otherwise) and gzipped; Pagefind's compressed files as they are, both times."""
    path = url.split("?")[0]
    if not path.endswith(TEXT):
        return len(body), len(body)
    gz = len(gzip.compress(body, 6, mtime=0))
    return (len(brotli.compress(body)) if brotli is not None else gz), gz


def fetched(page: Any, action: Any, settle: Any) -> dict[str, Any]:
    """Run ``action`` on a page, wait for ``settle``, and sum what came from /pagefind/ meanwhile."""
    seen: list[tuple[str, int, int]] = []

    def on_response(resp: Any) -> None:
        if "/pagefind/" in resp.url and resp.ok:
            with contextlib.suppress(Exception):  # a response the page dropped: nothing arrived to count
                seen.append((resp.url, *sent(resp.url, resp.body())))

    page.on("response", on_response)
    action()
    settle()
    page.wait_for_load_state("networkidle")
    time.sleep(0.5)
    page.remove_listener("response", on_response)
    kinds: dict[str, int] = {}
    for url, n, _gz in seen:
        name = url.rsplit("/", 1)[-1]
        name = name.split("?")[0]
        kind = name.rsplit(".", 1)[-1] if "." in name else name
        kinds[kind] = kinds.get(kind, 0) + n
    return {"kib": round(sum(n for _, n, _gz in seen) / 1024, 1), "bytes": sum(n for _, n, _gz in seen),
            "kib_gzip": round(sum(gz for _, _n, gz in seen) / 1024, 1), "files": len(seen),
            "encoding": "br" if brotli is not None else "gzip",
            "by_kind_kib": {k: round(v / 1024, 1) for k, v in sorted(kinds.items())}}


def measure(base: str, first: str, typical: str, following: str) -> dict[str, Any]:
    """The three figures, each from a fresh browser context except ``next_query``."""
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for name, q in (("first_query", first), ("typical_query", typical)):
                page = browser.new_context().new_page()
                out[name] = {"query": q, **fetched(
                    page, lambda q=q, page=page: page.goto(f"{base}search/?q={q.replace(' ', '+')}"),
                    lambda page=page: page.wait_for_selector(".pagefind-ui__result-link", timeout=120_000))}
                out[name]["results_shown"] = page.locator(".pagefind-ui__result").count()
                if name == "typical_query":
                    def type_next(page: Any = page) -> None:
                        page.fill(".pagefind-ui__search-input", following)

                    def settled(page: Any = page) -> None:
                        page.wait_for_function(
                            "q => document.querySelector('.pagefind-ui__message')?.textContent.includes(q)",
                            arg=following, timeout=120_000)

                    out["next_query"] = {"query": following, **fetched(page, type_next, settled)}
                page.context.close()
        finally:
            browser.close()
    return out


def run(n: int, tmp: Path, built: Path | None = None) -> dict[str, Any]:
    """Generate, build, serve, search in Chromium (``built``: measure a site built earlier with ``--keep``)."""
    root, site = tmp / "repo", built or tmp / "site"
    load_start = load_average()
    t0 = time.perf_counter()
    if built is None:
        write_corpus(root, n)
        complete_corpus(root)
        _key, pub, _ = keygen(tmp / "deploy-env" / "identity.key")
        os.environ["QBANK_RELEASE_RECIPIENT"] = str(pub)
        t0 = time.perf_counter()
        mkdocs_build(root, site)
    build_s = time.perf_counter() - t0
    pf = site / "pagefind"
    index = [f for f in pf.rglob("*") if f.is_file()]
    on_disk = sum(f.stat().st_size for f in index)
    last = n - 1
    with serve(site) as base:
        figures = measure(base, f"Question {last}", "prefill bandwidth", "expert router")
    return {
        "questions": n,
        "load_average_start": load_start,
        "build_s": round(build_s, 1),
        "pagefind_files": len(index),
        "pagefind_index_chunks": len(list((pf / "index").glob("*.pf_index"))),
        "pagefind_fragments": len(list((pf / "fragment").glob("*.pf_fragment"))),
        "pagefind_on_disk_kib": round(on_disk / 1024, 1),
        **figures,
        "first_query_share_of_index": round(figures["first_query"]["kib"] * 1024 / on_disk, 4),
        "typical_query_share_of_index": round(figures["typical_query"]["kib"] * 1024 / on_disk, 4),
        "load_average_end": load_average(),
    }


def main() -> int:
    """Parse arguments, run, print the figures as JSON."""
    import argparse

    parser = argparse.ArgumentParser(description="bytes a search fetches in Chromium, at N questions")
    parser.add_argument("--n", type=int, default=5000, help="number of questions (default 5000)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--site", type=Path, default=None, help="measure this site (built by a --keep run of --n)")
    args = parser.parse_args()
    return print_figures("qbank-search-bench-", args.keep, lambda tmp: run(args.n, tmp, args.site))


if __name__ == "__main__":
    sys.exit(main())
