"""Where a page's main-thread time goes while it loads, measured as thread time (CPU), not wall time.

``bench/lighthouse.py`` reports Lighthouse's total blocking time, which its simulation derives from the wall
durations of the tasks it observes: on a shared machine other processes stretch those durations, and one
page's runs vary by 2-3x. This bench reads the same tasks' *thread* time from a Chromium trace (``tdur``: time
the renderer's main thread actually ran), which contention barely moves, so a few runs attribute the work:

- ``blocking_4x``: the sum over top-level tasks of ``max(0, 4 * thread ms - 50)``: blocking time as a phone 4x
  slower than this machine would see it (Lighthouse's mobile preset slows the CPU 4x). An estimate for
  comparing pages and variants, not Lighthouse's figure (no FCP/TTI window, no simulated network);
- ``long``: the top-level tasks over 12.5 ms (50 ms at 4x), longest first;
- ``kinds``: thread time in style, layout, script, parsing, paint (nested events counted once per kind);
- ``scripts``: thread time of each script's evaluation and of the event handlers (``EventDispatch``: the
  theme's ``DOMContentLoaded`` handler, which mounts its components).

``--lighthouse DIR`` reads the same figures from Lighthouse's own trace (one Lighthouse run per load): a trace
taken under Lighthouse's mobile emulation showed work that a plain Playwright load did not (the theme measuring
inside closed folds, docs/readers.md), so check a finding both ways.

Pages are given as ``NAME=SITE_DIR:PATH`` (a built site served on 127.0.0.1 by ``bench/lighthouse.py``'s
compressing server); runs alternate between them. Phone viewport (412x823, as Lighthouse's mobile preset).

    python bench/page_cpu.py --runs 5 \\
        free=SITES/qbank:questions/deepseek-v3-mtp-speculation/ plain=SITES/plain:questions/deepseek-v3-mtp-speculation/

``SITES`` is a ``bench/lighthouse.py --sites`` directory; copy a page beside itself and edit it to measure a
variant (without its derivation, without a script).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lighthouse import CHROMIUM, LIGHTHOUSE, serve  # bench/lighthouse.py

TASKS = ("RunTask", "ThreadControllerImpl::RunTask")
KINDS = {
    "UpdateLayoutTree": "style", "ParseAuthorStyleSheet": "style", "Layout": "layout", "ParseHTML": "parse",
    "EvaluateScript": "script", "FunctionCall": "script", "TimerFire": "script", "EventDispatch": "script",
    "FireAnimationFrame": "script", "v8.compile": "script", "Paint": "paint", "PrePaint": "paint",
    "Layerize": "paint", "MajorGC": "gc", "MinorGC": "gc",
}  # fmt: skip
ENTRIES = ("EvaluateScript", "FunctionCall", "TimerFire", "EventDispatch", "FireAnimationFrame")


def main_thread(events: list[dict[str, Any]]) -> tuple[int, int]:
    """The renderer main thread that evaluated the theme's bundle (other renderers: blank or internal pages)."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}  # fmt: skip
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for e in events:
        if e.get("name") == "EvaluateScript" and "/bundle." in str(e.get("args", {}).get("data", {}).get("url", "")):
            counts[(e["pid"], e["tid"])] += 1
    mains = [k for k, v in names.items() if v == "CrRendererMain" and counts[k]]
    if not mains:
        raise RuntimeError("no renderer evaluated the theme's bundle")
    return max(mains, key=lambda k: counts[k])


def outermost(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events not nested in an earlier one of the list (sorted by start)."""
    out: list[dict[str, Any]] = []
    end = -1.0
    for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        if e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


def analyse(events: list[dict[str, Any]]) -> dict[str, Any]:
    """One page load's trace: blocking at 4x, long tasks, time by kind and by script (ms of thread time)."""
    main = main_thread(events)
    mine = [e for e in events if (e["pid"], e["tid"]) == main and e.get("ph") == "X" and "tdur" in e]
    tasks = [e["tdur"] / 1000 for e in outermost([e for e in mine if e["name"] in TASKS])]
    kinds: dict[str, float] = defaultdict(float)
    for kind in set(KINDS.values()):
        for e in outermost([e for e in mine if KINDS.get(e["name"]) == kind]):
            kinds[kind] += e["tdur"] / 1000
    scripts: dict[str, float] = defaultdict(float)
    for e in outermost([e for e in mine if e["name"] in ENTRIES]):
        data = e.get("args", {}).get("data", {}) or {}
        url = str(data.get("url") or "")
        what = e["name"] if e["name"] == "EventDispatch" else url.rsplit("/", 1)[-1] or e["name"]
        scripts[what] += e["tdur"] / 1000
    return {
        "blocking_4x": sum(max(0.0, 4 * t - 50) for t in tasks),
        "cpu": sum(tasks),
        "long": sorted((t for t in tasks if 4 * t > 50), reverse=True),
        "kinds": dict(kinds),
        "scripts": dict(scripts),
    }


def load(browser: Any, url: str) -> dict[str, Any]:
    """Open ``url`` in a fresh phone-sized context with tracing on; the trace's figures."""
    context = browser.new_context(viewport={"width": 412, "height": 823}, device_scale_factor=1.75, is_mobile=True,
                                  has_touch=True)  # fmt: skip
    try:
        page = context.new_page()
        browser.start_tracing(page=page, categories=["devtools.timeline", "disabled-by-default-devtools.timeline",
                                                     "toplevel", "v8"])  # fmt: skip
        page.goto(url, wait_until="load")
        page.wait_for_timeout(2000)  # the theme's and the loader's work after the load event
        trace = json.loads(browser.stop_tracing())
        return analyse(trace["traceEvents"])
    finally:
        context.close()


def load_lighthouse(url: str, keep: Path) -> dict[str, Any]:
    """One Lighthouse mobile run (``make bench-lighthouse``) with its trace kept in ``keep``: the trace's figures
    and Lighthouse's own total blocking time."""
    out = keep / f"run-{len(list(keep.glob('run-*.json')))}"
    cmd = ["node", str(LIGHTHOUSE), url, "--output=json", f"--output-path={out}.json", "--quiet", "--save-assets",
           "--only-categories=performance", "--chrome-flags=--headless=new --no-sandbox --disable-gpu"]  # fmt: skip
    subprocess.run(cmd, check=True, timeout=300, env={**os.environ, "CHROME_PATH": CHROMIUM})
    report = json.loads(Path(f"{out}.json").read_text())
    trace = json.loads(Path(f"{out}-0.trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    figures = analyse(events)
    figures["lighthouse_tbt"] = report["audits"]["total-blocking-time"]["numericValue"]
    return figures


def median_of(runs: list[dict[str, Any]], key: str) -> dict[str, float]:
    """Per-entry medians of a dict figure over runs (an entry missing from a run counts as 0)."""
    names = {n for r in runs for n in r[key]}
    return {n: round(statistics.median(r[key].get(n, 0.0) for r in runs), 1) for n in sorted(names)}


def main() -> None:
    parser = argparse.ArgumentParser(description="main-thread thread time of page loads, by task, kind, script")
    parser.add_argument("pages", nargs="+", help="NAME=SITE_DIR:PATH")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--lighthouse",
        type=Path,
        metavar="DIR",
        help="load with Lighthouse (mobile) instead, keeping its reports and traces in DIR",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    servers: dict[str, str] = {}
    targets: list[tuple[str, str]] = []
    for spec in args.pages:
        name, rest = spec.split("=", 1)
        folder, path = rest.split(":", 1)
        if folder not in servers:
            servers[folder] = serve(Path(folder))[1]
        targets.append((name, servers[folder] + path))
    results: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for i in range(args.runs):
            for name, url in targets if i % 2 == 0 else targets[::-1]:
                if args.lighthouse:
                    keep = args.lighthouse / name
                    keep.mkdir(parents=True, exist_ok=True)
                    results[name].append(load_lighthouse(url, keep))
                else:
                    results[name].append(load(browser, url))
        browser.close()
    for name, runs in results.items():
        summary = {
            "page": name,
            "blocking_4x_ms": round(statistics.median(r["blocking_4x"] for r in runs)),
            "runs": [round(r["blocking_4x"]) for r in runs],
            "cpu_ms": round(statistics.median(r["cpu"] for r in runs)),
            "long_first_run": [round(t, 1) for t in runs[0]["long"]],
            "kinds": median_of(runs, "kinds"),
            "scripts": median_of(runs, "scripts"),
        }
        if args.lighthouse:
            summary["lighthouse_tbt_ms"] = [round(r["lighthouse_tbt"]) for r in runs]
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
