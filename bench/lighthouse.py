"""Lighthouse, side by side: the real site against plain mkdocs-material serving the same Markdown.

Both sites are built from this repository (qbank's build, and ``bench/build.py``'s plain copy of the same
generated Markdown with no hooks, no overrides and material's own search) and served by the same local
server, which compresses text with gzip (and brotli when the ``brotli`` module is present) as a CDN would.
Lighthouse 12.2.3 (``make bench-lighthouse``; 13 needs Node 22) runs mobile and desktop, ``--runs`` times
each per page type and site, against Debian's Chromium; the table gives medians of each category score,
the total blocking time and the transferred bytes, and the qbank/plain ratio of the last two. A page type the
plain copy does not render (the practice pages) is measured on qbank's site alone.

The plain side is mkdocs-material as shipped over the same Markdown: the same theme settings, but none of
this site's own stylesheets or scripts (``extra_css``, ``extra_javascript``), no hooks and material's own
search. Runs alternate between the sites (qbank, plain, plain, qbank, ...) so that load from other processes
on a shared machine falls on both alike; each row records the load average before and after it. Lighthouse
throttles by simulation: under CPU contention the blocking time of both sides inflates, so read the ratio.
Each run's costliest scripts (``bootup-time``) and requests (``network-requests``) go to ``--out`` as well.

Plain mkdocs-material fetches its whole search index on every page, which qbank does not (Pagefind loads on
the search page's first use); each row also gives plain's bytes without its search requests
(``plain_bytes_without_search``) and qbank's ratio to that, the stricter comparison.

    python bench/lighthouse.py [--runs 3] [--pages question-free,pricing] [--forms mobile] \
        [--sites DIR] [--out test-artifacts/lighthouse.json]

``--sites DIR`` keeps both built sites in DIR and reuses them when present (e.g. a mobile and a desktop
process on one build).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
LIGHTHOUSE = REPO / "bench" / "lighthouse" / "node_modules" / "lighthouse" / "cli" / "index.js"
CHROMIUM = "/usr/bin/chromium"
PAGES = {
    "home": "",
    "topic": "topics/kv-cache/",
    "company-topic": "companies/xai/speculative-decoding/",
    "question-free": "questions/deepseek-v3-mtp-speculation/",
    "question-premium": "questions/gqa-vs-mla-kv-per-gpu-with-tp/",
    "concept": "concepts/kv-cache/",
    "pricing": "pricing/",
    "company": "companies/xai/",
    "search": "search/",
    "practice-test": "practice/batching-and-preemption/",
    "practice-drill": "practice/drills/kv-size-gqa-mla-tp/",
}
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
TEXT = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".mjs"}

try:
    import brotli  # type: ignore[import-not-found, import-untyped, unused-ignore]
except ImportError:  # gzip only
    brotli = None


class Compressing(SimpleHTTPRequestHandler):
    """Static files with Content-Encoding as a CDN sends them (compressed once per file, kept in memory)."""

    cache: ClassVar[dict[tuple[str, str], bytes]] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accept = self.headers.get("Accept-Encoding", "")
        coding = "br" if brotli is not None and "br" in accept else "gzip" if "gzip" in accept else ""
        if not coding or path.suffix not in TEXT or not path.is_file():
            return super().send_head()
        key = (str(path), coding)
        if key not in self.cache:
            raw = path.read_bytes()
            self.cache[key] = brotli.compress(raw) if coding == "br" else gzip.compress(raw, 6, mtime=0)
        body = self.cache[key]
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", coding)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        import io

        return io.BytesIO(body)


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Compressing, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def build_both(tmp: Path) -> tuple[Path, Path]:
    """qbank's site of this repository, and plain mkdocs-material over the same generated Markdown."""
    from build import timed, write_plain  # bench/build.py
    from qbank.build import build_site

    result = build_site(REPO, tmp / "site-qbank", links=False)
    if result.site_dir is None:
        raise SystemExit("\n".join(p.text() for p in result.report.problems[:10]))
    # write_plain reads a plain-YAML mkdocs.yml: a view of this repository with the site URL spelled out
    source = tmp / "source"
    source.mkdir()
    for part in ("questions", "answers", "verify", "site_src"):
        (source / part).symlink_to(REPO / part)
    config = (REPO / "mkdocs.yml").read_text()
    (source / "mkdocs.yml").write_text(re.sub(r"^site_url:.*$", "site_url: https://qbank.example/", config,
                                              count=1, flags=re.MULTILINE))
    plain = tmp / "plain"
    plain.mkdir()
    write_plain(source, plain)
    strip_own_assets(plain / "mkdocs.yml")
    timed(plain, tmp / "site-plain")
    return result.site_dir, tmp / "site-plain"


def strip_own_assets(config_file: Path) -> None:
    """Plain mkdocs-material as shipped: drop this site's own stylesheets and scripts from the config."""
    import yaml

    config = yaml.safe_load(config_file.read_text())
    for key in ("extra_css", "extra_javascript"):
        config.pop(key, None)
    config_file.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))


def costs(report: dict[str, Any]) -> dict[str, Any]:
    """What a run spent: main-thread time per script and per kind of work, long tasks, and every request."""
    audits = report["audits"]

    def items(name: str) -> list[dict[str, Any]]:
        return list((audits.get(name, {}).get("details") or {}).get("items") or [])

    return {
        "bootup": [{"url": i["url"], "total": round(i.get("total", 0)), "scripting": round(i.get("scripting", 0))}
                   for i in items("bootup-time")],
        "mainthread": {i["groupLabel"]: round(i["duration"]) for i in items("mainthread-work-breakdown")},
        "long_tasks": [{"url": i.get("url"), "ms": round(i["duration"])} for i in items("long-tasks")],
        "requests": [{"url": i["url"], "bytes": i.get("transferSize", 0), "type": i.get("resourceType")}
                     for i in items("network-requests")],
    }  # fmt: skip


def lighthouse(url: str, desktop: bool) -> dict[str, Any]:
    """One Lighthouse run: category scores (0-100), total blocking time (ms), transferred bytes, and costs."""
    cmd = [
        "node", str(LIGHTHOUSE), url, "--output=json", "--output-path=stdout", "--quiet",
        f"--only-categories={','.join(CATEGORIES)}", "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
        *(["--preset=desktop"] if desktop else []),
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "CHROME_PATH": CHROMIUM})
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-800:])
    report = json.loads(out.stdout)
    figures = {c: round(100 * (report["categories"][c]["score"] or 0)) for c in CATEGORIES}
    audits = report["audits"]
    figures["tbt_ms"] = audits["total-blocking-time"]["numericValue"]
    figures["bytes"] = audits["total-byte-weight"]["numericValue"]
    return {"figures": figures, "costs": costs(report)}


SEARCH_REQUESTS = ("/search/search_index.json", "/assets/javascripts/workers/search.")
"""Plain mkdocs-material's search: its index and its worker, fetched on every page."""


def without_search(requests: list[dict[str, Any]]) -> int:
    """Bytes of a run's requests less plain mkdocs-material's search."""
    return sum(int(r["bytes"]) for r in requests if not any(s in r["url"] for s in SEARCH_REQUESTS))


def load() -> float:
    """The one-minute load average (other processes on a shared machine slow both sides)."""
    return round(os.getloadavg()[0], 2)


def write(out: Path, runs: int, rows: list[dict[str, Any]], details: list[dict[str, Any]]) -> None:
    """The medians (``out``) and each run's costs (``out`` with ``.costs.json``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"runs": runs, "compression": "br" if brotli else "gzip", "rows": rows}, indent=1))
    out.with_suffix(".costs.json").write_text(json.dumps(details, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description="Lighthouse: qbank's site against plain mkdocs-material")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", default=",".join(PAGES), help="page types, comma-separated")
    parser.add_argument("--sites", type=Path, help="keep the built sites here; reuse them when present")
    parser.add_argument("--forms", default="mobile,desktop", help="mobile, desktop or both")
    parser.add_argument("--out", type=Path, default=REPO / "test-artifacts" / "lighthouse.json")
    args = parser.parse_args()
    if not LIGHTHOUSE.is_file():
        raise SystemExit(f"{LIGHTHOUSE} is missing: make bench-lighthouse")
    tmp = Path(tempfile.mkdtemp(prefix="qbank-lighthouse-"))
    details: list[dict[str, Any]] = []
    try:
        if args.sites and (args.sites / "qbank" / "index.html").is_file():
            qbank_site, plain_site = args.sites / "qbank", args.sites / "plain"
        else:
            qbank_site, plain_site = build_both(tmp)
            if args.sites:
                shutil.copytree(qbank_site, args.sites / "qbank")
                shutil.copytree(plain_site, args.sites / "plain")
        servers = {name: serve(folder) for name, folder in (("qbank", qbank_site), ("plain", plain_site))}
        rows: list[dict[str, Any]] = []
        for page in args.pages.split(","):
            missing = [site for site, folder in (("qbank", qbank_site), ("plain", plain_site))
                       if not (folder / PAGES[page] / "index.html").is_file()]  # fmt: skip
            if "qbank" in missing:
                print(f"{page}: no such page on qbank's site", flush=True)
                continue
            # the practice pages come from practice/, which the plain copy does not render: qbank's alone
            sites = ("qbank",) if missing else ("qbank", "plain")
            for form in args.forms.split(","):
                before = load()
                runs: dict[str, list[dict[str, Any]]] = {site: [] for site in sites}
                for i in range(args.runs):  # alternate: qbank, plain, plain, qbank, qbank, plain, ...
                    for site in sites if i % 2 == 0 else sites[::-1]:
                        runs[site].append(lighthouse(servers[site][1] + PAGES[page], form == "desktop"))
                med = {site: {k: statistics.median(r["figures"][k] for r in rs) for k in rs[0]["figures"]}
                       for site, rs in runs.items()}  # fmt: skip
                q, p = med["qbank"], med.get("plain")
                bare = statistics.median(without_search(r["costs"]["requests"]) for r in runs["plain"]) if p else 0
                rows.append({"page": page, "form": form, "qbank": q, "plain": p,
                             "tbt_ratio": round(q["tbt_ms"] / p["tbt_ms"], 2) if p and p["tbt_ms"] else None,
                             "bytes_ratio": round(q["bytes"] / p["bytes"], 2) if p else None,
                             "plain_bytes_without_search": bare or None,
                             "bytes_ratio_without_search": round(q["bytes"] / bare, 2) if bare else None,
                             "load": [before, load()],
                             "runs": {site: [r["figures"] for r in rs] for site, rs in runs.items()}})
                print(json.dumps({k: v for k, v in rows[-1].items() if k != "runs"}), flush=True)
                details.append({"page": page, "form": form,
                                "costs": {site: [r["costs"] for r in rs] for site, rs in runs.items()}})
                write(args.out, args.runs, rows, details)  # after each row: a long run stopped keeps its rows
        for server, _ in servers.values():
            server.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    head = "| page | form | site | perf | a11y | best pr. | SEO | TBT ms | KiB | TBT × | bytes × | w/o search | load |"
    print(head + "\n|" + " --- |" * 13)
    for r in rows:
        for site in ("qbank", "plain"):
            f = r[site]
            if f is None:  # a page the plain copy does not render
                continue
            ratios = " | | "
            if site == "qbank":
                ratios = f"{r['tbt_ratio']} | {r['bytes_ratio']} | {r['bytes_ratio_without_search']}"
            ratios += f" | {r['load'][0]}–{r['load'][1]}" if site == "qbank" else " | "
            scores = " | ".join(f"{f[c]:.0f}" for c in CATEGORIES)
            weight = f"{f['tbt_ms']:.0f} | {f['bytes'] / 1024:.0f}"
            print(f"| {r['page']} | {r['form']} | {site} | {scores} | {weight} | {ratios} |")


if __name__ == "__main__":
    main()
