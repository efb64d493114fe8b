"""Benchmark: build a synthetic corpus through qbank and as plain mkdocs-material over the same Markdown.

    python bench/build.py            # N = 1,000 questions
    python bench/build.py --n 5000   # the large run

Reports the qbank/plain build-time ratio (target <= 1.1), time per page, peak memory, the search index size,
and the gzipped transfer of one question page with its CSS and JS (target <= 60 KB, fonts excluded). The two
kinds of build alternate, and the best of ``--repeat`` runs of each is kept.

Each build runs in a process of its own, as ``qbank build`` and ``mkdocs build`` do: interpreter start and
imports are counted for both, and no build reuses what an earlier one in the same process remembered (parsed
files, formulas). Every qbank build counted in the ratio starts with an empty card store (``.qbank/cards``:
cold, every card drawn); one more build after them reuses the store (warm) and is reported apart. CPU time
includes the card workers and Pagefind (children of the build, joined before it returns). ``--sequential``
adds one cold qbank build with the cards drawn in the build's own process (no workers), as before the workers.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from qbank.build import mkdocs_build
from qbank.cards import pool
from qbank.cards.cache import CARDS_DIR
from qbank.corpus import load_corpus
from qbank.offer.model import load_shop
from qbank.render.pages import render_pages
from qbank.render.search import pagefind_command
from qbank.render.settings import settings_from
from qbank.sitecheck import check_reach, check_structure
from qbank.sitecheck.structure import html_pages

REPO = Path(__file__).resolve().parents[1]
WORDS = [
    *("prefill", "decode", "batch", "cache", "block", "head", "layer", "token", "kernel", "bandwidth"),
    *("latency", "throughput", "memory", "budget", "scheduler", "request", "expert", "router", "shard"),
    *("tensor", "pipeline", "replica", "queue", "page", "eviction", "prefix", "draft", "verify"),
]
MATH = "$$\n\\frac{2 L H_{kv} d b}{B} = t_{%s}\n$$\n\nwith $L$ layers and $B$ bytes per second.\n"
"""A display formula of its own per question (its subscript spells the question's index in letters: a number
would be a claim to bind) and two inline symbols every such answer shares, about the real bank's share of
repeated formulas (327 distinct of 670)."""


def math(i: int) -> str:
    """Question ``i``'s formula block."""
    return MATH % "".join(chr(ord("a") + int(d)) for d in f"{i:05d}")
CODE = "```python\ndef kv_bytes(layers, heads, dim, b):\n    return 2 * layers * heads * dim * b\n```"


def sentence(rng: random.Random, n: int = 14) -> str:
    """A sentence of domain words."""
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def paragraph(rng: random.Random, sentences: int = 5) -> str:
    """A paragraph of sentences."""
    return " ".join(sentence(rng) for _ in range(sentences))


def git(root: Path, *args: str) -> None:
    """Run git in ``root`` with a fixed identity."""
    subprocess.run(["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=b@example.org", *args],
                   check=True, capture_output=True)


def write_corpus(root: Path, n: int, seed: int = 7) -> None:
    """A committed repository: the real catalog, ``n`` synthetic questions, answers and verify scripts."""
    rng = random.Random(seed)
    shutil.copytree(REPO / "questions" / "_catalog", root / "questions" / "_catalog")
    for name in ("hooks", "site_src"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    catalog = root / "questions" / "_catalog"
    topics = [t["slug"] for t in yaml.safe_load((catalog / "topics.yaml").read_text())["topics"]]
    concept_items = yaml.safe_load((catalog / "concepts.yaml").read_text())["concepts"]
    concepts = [c["slug"] for c in concept_items]
    # an explanation's worked numbers bind to a real question's script, which a synthetic bank lacks: without
    # them the bank is valid (a bank with errors is refused by the build and by ``write_plain``)
    for c in concept_items:
        c.pop("explanation", None)
        c.pop("worked_example", None)
    (catalog / "concepts.yaml").write_text(yaml.safe_dump({"concepts": concept_items}, sort_keys=False,
                                                          allow_unicode=True))
    companies = [c["slug"] for c in yaml.safe_load((catalog / "companies.yaml").read_text())["companies"]]
    (root / "answers").mkdir()
    (root / "verify").mkdir()
    slugs = [f"synthetic-question-{i:05d}" for i in range(n)]
    for i, slug in enumerate(slugs):
        premium = i % 3 != 0
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        question = {
            "title": f"Question {i}: how does the {a} {b} scale with {c}?",
            "short_title": f"Synthetic question {i}: the {a} {b}",
            "description": f"Synthetic question {i} works out how the {a} {b} scales with {c}, "
                           "every number derived by its verification script.",
            "teaser": f"Case {i}. " + sentence(rng, 18) + " " + sentence(rng, 10),
            "topic": topics[i % len(topics)],
            "companies": [companies[0]] if companies and i % 5 == 0 else [],
            "difficulty": 1 + i % 5,
            "editorial_rank": rng.randrange(1, 500),
            "access": "premium" if premium else "free",
            "kind": "derivation",
            "concepts": rng.sample(concepts, 2),
            "related": [s for s in rng.sample(slugs, 3) if s != slug][:2],
        }
        if premium:
            question["premium_summaries"] = [f"The full derivation of the {a} {b} against {c}, step by step."]
        (root / "questions" / f"{slug}.yaml").write_text(yaml.safe_dump(question, sort_keys=False))
        answer = [paragraph(rng), "", math(i) if i % 2 else "", "## Sizing it", "", paragraph(rng), "", CODE, "",
                  "## What interviewers listen for", "", paragraph(rng, 4), ""]
        if premium:
            answer += ["/// premium", "## The full derivation", "", paragraph(rng, 8), "", paragraph(rng, 6), "///"]
        (root / "answers" / f"{slug}.md").write_text("\n".join(answer) + "\n")
        # the 2 of the math (odd questions) binds to the script's claim; the others state no number
        script = 'claim("x", 2)' if i % 2 else 'check(True, "a synthetic check")'
        (root / "verify" / f"{slug}.py").write_text(f"from qbank.verify import check, claim\n{script}\n")
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "synthetic")


class _MkdocsLoader(yaml.SafeLoader):
    """mkdocs.yml as data: ``!ENV [NAME, default]`` (the site URL) becomes the variable's value or its default."""


def _env(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.SequenceNode):
        *names, default = loader.construct_sequence(node)
    else:
        names, default = [loader.construct_scalar(node)], None  # type: ignore[arg-type]
    return next((os.environ[str(k)] for k in names if str(k) in os.environ), default)


_MkdocsLoader.add_constructor("!ENV", _env)


def write_plain(root: Path, plain: Path) -> int:
    """The same Markdown as plain files for mkdocs-material alone: no hooks, the same small flat nav."""
    config = yaml.load((root / "mkdocs.yml").read_text(), Loader=_MkdocsLoader)
    corpus, report = load_corpus(root)
    if report.errors:
        raise SystemExit(f"synthetic corpus is invalid: {report.problems[:3]}")
    shop, _ = load_shop(root)  # the pricing and contact pages read the offer
    pages = render_pages(corpus, settings_from(config.get("site_url"), config.get("extra"), shop))
    docs = plain / "docs"
    shutil.copytree(root / "site_src", docs, ignore=shutil.ignore_patterns("overrides"))
    for page in pages:
        path = docs / page.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page.markdown)
    for key in ("hooks", "exclude_docs"):
        config.pop(key)
    config["theme"].pop("custom_dir")
    config["extra"].pop("qbank")
    config["docs_dir"] = "docs"
    config["plugins"] = ["search"]  # plain mkdocs-material as shipped: its own single-file search index
    # the hand-written concept pages link to the real bank's questions, which a synthetic bank lacks: strict
    # mode would abort plain mkdocs on those links (`qbank serve` previews without strict mode too)
    config["strict"] = False
    (plain / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return len(pages) + 1  # and about.md


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (Pagefind runs as a child)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def clear(root: Path, out: Path, cold: bool) -> None:
    """Before a build: no output folder, and with ``cold`` no card store."""
    shutil.rmtree(out, ignore_errors=True)
    if cold:
        shutil.rmtree(root / CARDS_DIR, ignore_errors=True)


def timed(root: Path, out: Path, *, cold: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds for one mkdocs build of ``root`` into ``out`` in this process (for a profiler:
    ``bench/build_profile.py``); ``cold`` empties the card store first. The ratio uses :func:`built_alone`.

    CPU time is reported too because wall time on a shared machine moves with other people's load.
    """
    clear(root, out, cold)
    wall, cpu = time.perf_counter(), cpu_seconds()
    mkdocs_build(root, out)
    return time.perf_counter() - wall, cpu_seconds() - cpu


ONE_BUILD = """
import json, resource, sys
from pathlib import Path
from qbank.build import mkdocs_build
from qbank.cards import pool
if sys.argv[3] == "sequential":
    pool.default_workers = lambda: 0
mkdocs_build(Path(sys.argv[1]), Path(sys.argv[2]))
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rss": me.ru_maxrss / 1024, "children_rss": kids.ru_maxrss / 1024}))
"""


def built_alone(
    root: Path, out: Path, *, cold: bool = True, sequential: bool = False
) -> tuple[float, float, dict[str, float]]:
    """Wall and CPU seconds of one build of ``root`` into ``out`` in a fresh process, with the peak resident
    memory (MiB) of that process and of its largest child; ``cold`` empties the card store first, ``sequential``
    draws the cards in the build's own process (no workers). CPU counts the process and every child it joined
    (card workers, Pagefind)."""
    clear(root, out, cold)
    wall, cpu = time.perf_counter(), cpu_seconds()
    done = subprocess.run([sys.executable, "-c", ONE_BUILD, str(root), str(out), "sequential" if sequential else "-"],
                          check=True, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return wall, cpu, json.loads(done.stdout.strip().splitlines()[-1])


def pagefind_seconds(site: Path) -> tuple[float, float]:
    """Wall and CPU seconds of Pagefind indexing ``site`` again (its share of a build: it runs as a child)."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run(pagefind_command(site), check=True, capture_output=True)
    return time.perf_counter() - wall, cpu_seconds() - cpu


def gz(path: Path) -> int:
    """Gzipped size at the level CDNs commonly use."""
    return len(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))


def transfer(site: Path, page_rel: str) -> dict[str, int]:
    """Gzipped bytes of a page's HTML and of its stylesheets and scripts (math is MathML in the HTML: no files)."""
    html_path = site / page_rel
    html = html_path.read_text()
    refs = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html) + re.findall(r'<script src="([^"]+)"', html)
    assets = [(html_path.parent / r.split("?")[0]).resolve() for r in refs if not r.startswith("http")]
    return {"html": gz(html_path), "css_js": sum(gz(a) for a in assets if a.exists())}


def search_weights(site: Path) -> dict[str, float]:
    """Pagefind: the whole index on disk, and what a first query fetches (loader, wasm, meta, one index
    chunk, five result fragments); the files are already compressed, so their sizes are the transfer."""
    pf = site / "pagefind"
    files = [f for f in pf.rglob("*") if f.is_file() and "-ui." not in f.name and "modular" not in f.name
             and "component" not in f.name]
    chunks = sorted((pf / "index").glob("*.pf_index"), key=lambda f: f.stat().st_size)
    fragments = sorted((pf / "fragment").glob("*.pf_fragment"), key=lambda f: f.stat().st_size)
    first = [pf / "pagefind.js", pf / "pagefind-entry.json", pf / "wasm.en.pagefind", *pf.glob("*.pf_meta")]
    query = sum(gz(f) if f.suffix in {".js", ".json"} else f.stat().st_size for f in first)
    query += chunks[-1].stat().st_size + sum(f.stat().st_size for f in fragments[-5:])
    ui = sum(gz(pf / f) for f in ("pagefind-ui.js", "pagefind-ui.css"))
    return {
        "pagefind_index_kib": kb(sum(f.stat().st_size for f in files)),
        "pagefind_index_chunks": len(chunks),
        "pagefind_fragments": len(fragments),
        "pagefind_first_query_kib": kb(query),
        "pagefind_ui_kib_gz": kb(ui),
    }


def kb(n: int) -> float:
    """Bytes to KiB, one decimal."""
    return round(n / 1024, 1)


def run(n: int, repeat: int, tmp: Path, compare_sequential: bool = False) -> dict[str, object]:
    """Generate, build both ways, check, measure."""
    root, plain = tmp / "repo", tmp / "plain"
    plain.mkdir()
    load_start = os.getloadavg()
    t0 = time.perf_counter()
    write_corpus(root, n)
    n_pages = write_plain(root, plain)
    setup = time.perf_counter() - t0
    qb: list[tuple[float, float]] = []
    pl: list[tuple[float, float]] = []
    rss: dict[str, float] = {}
    warms: list[tuple[float, float]] = []
    for _ in range(repeat):  # interleaved, so a slow spell of the machine touches every kind of build alike
        wall, cpu, peaks = built_alone(plain, tmp / "site-plain")
        pl.append((wall, cpu))
        rss.setdefault("plain", peaks["rss"])
        wall, cpu, peaks = built_alone(root, tmp / "site-qbank")
        qb.append((wall, cpu))
        rss.setdefault("qbank", peaks["rss"])
        rss.setdefault("children", peaks["children_rss"])
        warms.append(built_alone(root, tmp / "site-qbank", cold=False)[:2])
    warm = min(warms)
    seq = built_alone(root, tmp / "site-qbank-sequential", sequential=True)[:2] if compare_sequential else None
    load_end = os.getloadavg()
    site, plain_site = tmp / "site-qbank", tmp / "site-plain"
    t0 = time.perf_counter()
    parsed = html_pages(site)
    problems = check_structure(site, "https://qbank.example/", parsed) + check_reach(site, parsed)
    checks = time.perf_counter() - t0
    free_math = next(i for i in range(n) if i % 3 == 0 and i % 2)
    free_nomath = next(i for i in range(n) if i % 3 == 0 and not i % 2)
    with_math = transfer(site, f"questions/synthetic-question-{free_math:05d}/index.html")
    no_math = transfer(site, f"questions/synthetic-question-{free_nomath:05d}/index.html")
    baseline = transfer(plain_site, f"questions/synthetic-question-{free_nomath:05d}/index.html")
    index = plain_site / "search" / "search_index.json"  # material's single-file index, in the plain build
    return {
        "questions": n,
        "pages": n_pages,
        "load_avg_1_5_15_at_start": [round(x, 2) for x in load_start],
        "load_avg_1_5_15_after_builds": [round(x, 2) for x in load_end],
        "setup_s": round(setup, 1),
        "qbank_build_s": round(min(w for w, _ in qb), 2),
        "plain_build_s": round(min(w for w, _ in pl), 2),
        "ratio_wall": round(min(w for w, _ in qb) / min(w for w, _ in pl), 3),
        "ratio_cpu": round(min(c for _, c in qb) / min(c for _, c in pl), 3),
        "ms_per_page_wall": round(1000 * min(w for w, _ in qb) / n_pages, 2),
        "ms_per_page_cpu": round(1000 * min(c for _, c in qb) / n_pages, 2),
        # peak resident memory of the first plain build's process and of the first qbank build's, and of the
        # largest child of that qbank build (a card worker, whose figure counts the pages it shares with the
        # build when forked, or Pagefind)
        "peak_rss_mib_plain": round(rss["plain"]),
        "peak_rss_mib_qbank": round(rss["qbank"]),
        "peak_rss_mib_qbank_largest_child": round(rss["children"]),
        "card_workers": pool.default_workers(),
        "warm_card_store_qbank_wall_cpu_s": (round(warm[0], 2), round(warm[1], 2)),
        "warm_card_store_ratio_wall_cpu": (round(warm[0] / min(w for w, _ in pl), 3),
                                           round(warm[1] / min(c for _, c in pl), 3)),
        **({"sequential_cards_qbank_wall_cpu_s": (round(seq[0], 2), round(seq[1], 2)),
            "sequential_cards_ratio_wall_cpu": (round(seq[0] / min(w for w, _ in pl), 3),
                                                round(seq[1] / min(c for _, c in pl), 3))} if seq else {}),
        "builds_qbank_wall_cpu_s": [(round(w, 2), round(c, 2)) for w, c in qb],
        "builds_qbank_warm_wall_cpu_s": [(round(w, 2), round(c, 2)) for w, c in warms],
        "builds_plain_wall_cpu_s": [(round(w, 2), round(c, 2)) for w, c in pl],
        "postcheck_structure_and_reach_s": round(checks, 1),
        "postcheck_problems": [p.text() for p in problems[:5]],
        "material_search_index_kib": kb(index.stat().st_size),
        "material_search_index_kib_gz": kb(gz(index)),
        **search_weights(site),
        "pagefind_alone_wall_cpu_s": [round(x, 2) for x in pagefind_seconds(site)],
        "question_page_kib_gz_no_math": kb(no_math["html"] + no_math["css_js"]),
        "question_page_kib_gz_with_math": kb(with_math["html"] + with_math["css_js"]),
        "question_page_html_kib_gz": kb(no_math["html"]),
        "plain_question_page_kib_gz": kb(baseline["html"] + baseline["css_js"]),
    }


def main() -> int:
    """Parse arguments, run, print the figures as JSON."""
    parser = argparse.ArgumentParser(description="qbank build benchmark against plain mkdocs-material")
    parser.add_argument("--n", type=int, default=1000, help="number of questions (default 1000; try 5000)")
    parser.add_argument("--repeat", type=int, default=2, help="builds of each kind; the best is kept")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--sequential", action="store_true",
                        help="also one cold qbank build with the cards drawn in the build's own process")
    args = parser.parse_args()
    return print_figures("qbank-bench-", args.keep, lambda tmp: run(args.n, args.repeat, tmp, args.sequential))


def print_figures(prefix: str, keep: bool, measure: Callable[[Path], dict[str, Any]]) -> int:
    """Run ``measure`` in a fresh temporary folder and print its figures as JSON; remove the folder unless kept."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        print(json.dumps(measure(tmp), indent=2))
    finally:
        if keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
