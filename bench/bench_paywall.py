"""Benchmark: the paywall's build-time cost, as ratios against baselines measured in the same run.

- sealing: ``seal_page`` (HTML scan + AES-GCM + JSON) per page vs one bare ``HTMLParser`` pass over
  the page (the floor for finding nested divs correctly in pure Python) and vs bare AES-GCM;
- leak scan: ``scan_site`` over a synthetic site vs reading every file and splitting it into words.

Run: ``.venv/bin/python bench/bench_paywall.py [--pages 300]``. No timed assertions anywhere.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from qbank.paywall.encrypt import PremiumFragment, seal_page
from qbank.paywall.leak import read_file, scan_site
from qbank.paywall.release import Release
from qbank.seal.premium_text import PremiumPrints, Source, words

TOKEN = "0123456789abcdef0123456789abcdef"

VOCAB = [f"w{i}" for i in range(5000)]


def prose(rng: random.Random, n: int) -> str:
    """``n`` random words in paragraphs."""
    return "\n".join("<p>" + " ".join(rng.choice(VOCAB) for _ in range(60)) + "</p>" for _ in range(max(1, n // 60)))


def page(rng: random.Random, i: int) -> str:
    """A page body the size of a real question page: free prose, two premium sections, theme chrome."""
    chrome = "<nav>" + "".join(f'<a href="/t/{j}/">topic {j}</a>' for j in range(200)) + "</nav>"
    premium = "".join(
        f"<!--qbseal {TOKEN} open premium {s} {f'Part {s}'.encode().hex()}-->"
        f'<h2 id="p{s}">Part {s}</h2>{prose(rng, 400)}'
        f'<div class="highlight"><pre><code>x = {i}</code></pre></div><!--qbseal {TOKEN} close premium {s}-->'
        for s in range(2)
    )
    return f"<h1>Question {i}</h1>{prose(rng, 600)}{premium}{chrome}"


def best(fn: object, repeat: int = 3) -> float:
    """Best wall time of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    """Print the two ratios."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=300)
    n = ap.parse_args().pages
    rng = random.Random(1)
    pages = [page(rng, i) for i in range(n)]
    release = Release.new()

    sealed: list[tuple[str, list[PremiumFragment]]] = []

    def seal_all() -> None:
        sealed.clear()
        for i, p in enumerate(pages):
            s = seal_page(p, f"/questions/q{i}/", release, TOKEN)
            sealed.append((s.html, s.fragments))

    def encrypt_all() -> None:
        aes = AESGCM(release.key)
        for p in pages:
            aes.encrypt(b"\0" * 12, p.encode(), b"")

    def parse_all() -> None:
        for p in pages:
            parser = HTMLParser()
            parser.feed(p)
            parser.close()

    t_seal, t_aes, t_parse = best(seal_all), best(encrypt_all), best(parse_all)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        fragments = []
        for i, (html, frags) in enumerate(sealed):
            (site / f"q{i}").mkdir()
            (site / f"q{i}" / "index.html").write_text(f"<html><head></head><body>{html}</body></html>")
            fragments += frags
        files = [p for p in site.rglob("*") if p.is_file()]
        prints = PremiumPrints.of(Source(f.page_path, 1, f.page_path, f"premium section {f.section}", f.heading, f.text)
                                  for f in fragments)
        t_scan = best(lambda: scan_site(site, prints))
        t_read = best(lambda: [words(read_file(p)) for p in files])
        size = sum(p.stat().st_size for p in files)
    print(f"pages={n} site={size / 1e6:.1f} MB premium sections={len(fragments)}")
    print(
        f"seal_page: {t_seal / n * 1e3:.2f} ms/page = {t_seal / t_parse:.2f}x one HTMLParser pass ({t_parse:.3f} s), "
        f"{t_seal / t_aes:.0f}x bare AES-GCM of the same bytes ({t_aes:.3f} s)"
    )
    print(f"scan_site: {t_scan:.3f} s = {t_scan / t_read:.1f}x reading and splitting every file ({t_read:.3f} s)")


if __name__ == "__main__":
    main()
