"""Whole builds with the paywall: canary, leak scan, operator decryption, CSP, builds without a ledger."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from qbank.corpus import load_corpus
from qbank.paywall.csp import inline_hashes
from qbank.paywall.encrypt import PremiumFragment
from qbank.paywall.leak import scan_site

from .conftest import CASE, REPO, Built, make_ledger, make_repo, qbank

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("paywall-site")]

KV = "/questions/kv-cache-long-context/"


def premium_fragments() -> list[PremiumFragment]:
    """The premium sections of the fixture corpus, straight from the answers' Markdown."""
    corpus, _ = load_corpus(CASE)
    return [
        PremiumFragment(f"/questions/{slug}/", str(i), sec.heading, sec.markdown, sec.markdown)
        for slug, answer in corpus.answers.items()
        for i, sec in enumerate(answer.premium)
    ]


def test_canary_never_reaches_the_site(built: Built) -> None:
    fragments = premium_fragments()
    assert len(fragments) == 3 and all("QBCANARY" in f.text for f in fragments)
    grep = subprocess.run(["grep", "-r", "-l", "-a", "-i", "QBCANARY", str(built.site)], capture_output=True, text=True)
    assert grep.returncode == 1 and grep.stdout == "", grep.stdout  # grep exits 1 when nothing matched
    gz = subprocess.run(["zgrep", "-c", "-i", "QBCANARY", str(built.site / "sitemap.xml.gz")], capture_output=True)
    assert gz.stdout.strip() == b"0"
    assert scan_site(built.site, fragments) == []
    # and what the scan looks for is really there once decrypted: the canary is a real premium text
    opened = qbank("paywall", "decrypt", "--root", str(built.root), "--key", built.keys.valid, KV)
    assert opened.returncode == 0, opened.stderr
    assert "QBCANARYALPHA7F3A" in opened.stdout and "QBCANARYBETA91C2" in opened.stdout


def test_site_layout(built: Built) -> None:
    kv = (built.site / "questions/kv-cache-long-context/index.html").read_text()
    assert kv.count('class="qb-premium qb-locked"') == 2
    assert "a-check-on-the-units" not in kv  # an inner premium heading's TOC entry is gone
    free = (built.site / "questions/what-is-a-kv-cache/index.html").read_text()
    assert "qb-locked" not in free and "data-qb-file" not in free
    premium_files = sorted((built.site / "assets/premium").iterdir())
    assert len(premium_files) == 2  # one per premium page, named by content hash
    slots = [json.loads(p.read_text()) for p in (built.site / "assets/keyslots").iterdir()]
    assert len(slots) == 256
    assert sum(len(s["slots"]) for s in slots) == 2  # the sold and the unsold key; not expired or revoked
    assert sum(len(s["ended"]) for s in slots) == 2
    releases = {s["release"] for s in slots} | {json.loads(p.read_text())["release"] for p in premium_files}
    assert len(releases) == 1


@pytest.mark.parametrize(
    ("which", "code", "says"),
    [
        ("valid", 0, "QBCANARYALPHA7F3A"),
        ("unsold", 0, "QBCANARYALPHA7F3A"),
        ("expired", 1, "expired on 2020-07-15"),
        ("revoked", 1, "revoked"),
        ("stranger", 1, "no keyslot"),
        ("typo", 1, "checksum"),
    ],
)
def test_operator_decrypt(built: Built, which: str, code: int, says: str) -> None:
    key = (
        built.keys.valid[:-1] + ("2" if built.keys.valid[-1] != "2" else "3")
        if which == "typo"
        else getattr(built.keys, which)
    )
    run = qbank("paywall", "decrypt", "--root", str(built.root), "--key", key, built.url + KV)
    assert run.returncode == code, run.stderr
    assert says in (run.stdout if code == 0 else run.stderr)
    if code:
        assert "QBCANARY" not in run.stdout


def test_every_page_has_a_strict_csp(built: Built) -> None:
    pages = sorted(built.site.rglob("*.html"))
    assert len(pages) >= 6
    for page in pages:
        text = page.read_text()
        m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', text)
        assert m, page
        assert text.index(m.group(0)) < text.index("<script"), page
        csp = dict(d.strip().split(" ", 1) for d in m.group(1).split(";"))
        scripts, _ = inline_hashes(text)
        assert csp["script-src"].split() == ["'self'", *scripts], page
        assert "unsafe" not in m.group(1) and "http" not in m.group(1)
        assert csp["object-src"] == "'none'" and csp["default-src"] == "'self'"


def test_a_leak_fails_the_build_and_names_the_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    run = qbank("build", "--root", str(root), env={"QBANK_TEST_LEAK": "1", "QBANK_LEDGER": str(tmp_path / "none")})
    assert run.returncode == 1
    assert re.search(
        r"^site/questions/draft-acceptance-rate/index\.html:0:0: error: .*\[premium-leak\]$", run.stderr, re.MULTILINE
    ), run.stderr
    assert "site/questions/kv-cache-long-context/index.html" in run.stderr
    assert not (root / "site").exists()  # nothing was swapped in
    assert not list(root.glob(".site-build-*"))


def test_without_a_ledger_premium_stays_encrypted(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    run = qbank("build", "--root", str(root), env={"QBANK_LEDGER": str(tmp_path / "missing.sqlite3")})
    assert run.returncode == 0, run.stderr
    assert "[paywall-no-ledger]" in run.stderr
    assert not (tmp_path / "missing.sqlite3").exists()
    grep = subprocess.run(["grep", "-r", "-l", "-a", "QBCANARY", str(root / "site")], capture_output=True)
    assert grep.returncode == 1
    slots = [json.loads(p.read_text()) for p in (root / "site/assets/keyslots").iterdir()]
    assert not any(s["slots"] for s in slots)


def test_the_real_corpus_is_sealed_without_false_alarms(tmp_path: Path) -> None:
    corpus, report = load_corpus(REPO)
    assert report.errors == 0
    sections = {slug: len(answer.premium) for slug, answer in corpus.answers.items() if answer.premium}
    assert sections, "the repository has premium answers to seal"
    root = make_repo(tmp_path / "repo", content=REPO)
    ledger = tmp_path / "ledger.sqlite3"
    keys = make_ledger(ledger)
    run = qbank("build", "--root", str(root), env={"QBANK_LEDGER": str(ledger)})
    assert run.returncode == 0, run.stderr  # the leak scan raised nothing on real prose
    for slug, n in sections.items():
        page = (root / "site" / "questions" / slug / "index.html").read_text()
        assert page.count('class="qb-locked"') == n, slug
    slug = sorted(sections)[0]
    opened = qbank("paywall", "decrypt", "--root", str(root), "--key", keys.valid, f"/questions/{slug}/")
    assert opened.returncode == 0 and opened.stdout.count("<!-- section") == sections[slug]
