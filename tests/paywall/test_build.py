"""Whole builds with the paywall: canary, leak scan, operator decryption, CSP; the build never sees the ledger."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from qbank import build
from qbank.corpus import Corpus, load_corpus
from qbank.deploy.headers import parse_headers
from qbank.paywall.leak import scan_site
from qbank.paywall.slots import BLOCK
from qbank.problems import Level, Report
from qbank.render.derivation import latest
from qbank.seal.premium_text import Source, premium_prints, premium_sources

from ..conftest import REPO
from .conftest import CASE, Built, keyslots, make_identity, make_ledger, make_repo, qbank, sealed_release

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("paywall-site")]

KV = "/questions/kv-cache-long-context/"
# A renderer bug, injected: premium text copied into every question page's meta description.
LEAK_HOOK = """
import re
from pathlib import Path

from qbank.corpus import load_corpus


def on_post_page(output, page, config):
    slug = page.file.src_uri.removeprefix("questions/").removesuffix(".md")
    corpus, _ = load_corpus(Path(config["config_file_path"]).parent)
    answer = corpus.answers.get(slug)
    if not answer or not answer.premium:
        return output
    leak = " ".join(answer.premium[0].markdown.split("\\n", 2)[2].split()[:20])
    return re.sub(r'(<meta name="description" content=")[^"]*', lambda m: m.group(1) + leak, output, count=1)
"""


def sealed_sections(root: Path, slug: str) -> int:
    """How many sections a built page seals: its answer's premium ones, and a premium question's derivation."""
    corpus, _ = load_corpus(root)
    derivation = latest(root, slug)
    premium = corpus.questions[slug].access == "premium"
    return len(corpus.answers[slug].premium) + int(premium and derivation is not None)


def premium_fragments(root: Path = CASE) -> list[Source]:
    """The premium texts of the fixture corpus, straight from the sources (answers' Markdown, derivations)."""
    corpus, _ = load_corpus(root)
    return premium_sources(corpus)


def test_canary_never_reaches_the_site(built: Built) -> None:
    fragments = premium_fragments()
    answers = [f for f in fragments if f.what.startswith("premium section")]
    assert len(answers) == 3 and all("QBCANARY" in f.text for f in answers)
    grep = subprocess.run(["grep", "-r", "-l", "-a", "-i", "QBCANARY", str(built.site)], capture_output=True, text=True)
    assert grep.returncode == 1 and grep.stdout == "", grep.stdout  # grep exits 1 when nothing matched
    gz = subprocess.run(["zgrep", "-c", "-i", "QBCANARY", str(built.site / "sitemap.xml.gz")], capture_output=True)
    assert gz.stdout.strip() == b"0"
    assert scan_site(built.site, premium_prints(load_corpus(built.root)[0])) == []
    # and what the scan looks for is really there once decrypted: the canary is a real premium text
    opened = qbank("paywall", "decrypt", "--root", str(built.root), "--key", built.keys.valid, KV)
    assert opened.returncode == 0, opened.stderr
    assert "QBCANARYALPHA7F3A" in opened.stdout and "QBCANARYBETA91C2" in opened.stdout


def test_site_layout(built: Built) -> None:
    kv = (built.site / "questions/kv-cache-long-context/index.html").read_text()
    # two premium sections of the answer, then the executed derivation, premium on a premium question
    assert sealed_sections(built.root, "kv-cache-long-context") == 3
    assert kv.count('class="qb-premium qb-locked"') == 3
    assert re.findall(r'<h2 id="([^"]+)"', kv)[:3] == ["the-full-derivation", "where-the-memory-actually-goes",
                                                       "executed-derivation"]
    assert "a-check-on-the-units" not in kv  # an inner premium heading's TOC entry is gone
    free = (built.site / "questions/what-is-a-kv-cache/index.html").read_text()
    assert "qb-locked" not in free and "data-qb-file" not in free
    premium_files = sorted((built.site / "assets/premium").iterdir())
    assert len(premium_files) == 2  # one per premium page, named by content hash
    info = json.loads((built.site / "qbank-build.json").read_text())
    assert info == {"format": 1, "release": info["release"], "site_url": built.url + "/"}
    assert [p.name for p in (built.site / "assets/keyslots").iterdir()] == [info["release"]]
    slots = [json.loads(p.read_text()) for p in (built.site / "assets/keyslots" / info["release"]).iterdir()]
    assert len(slots) == 256 and {len(s["slots"]) for s in slots} == {BLOCK}  # padded: 4 licenses, 4096 entries
    releases = {s["release"] for s in slots} | {json.loads(p.read_text())["release"] for p in premium_files}
    assert releases == {info["release"]}
    assert f'<meta name="qbank-release" content="{info["release"]}">' in kv
    # the sealed release key sits beside the repository's config, never in the site
    assert sealed_release(built.root).is_file() and not list(built.site.rglob("*.sealed.json"))


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


def inline_script_hashes(page: str) -> list[str]:
    """The CSP hashes of a page's inline scripts, found by another parser (BeautifulSoup) than the build's."""
    import base64
    import hashlib

    from bs4 import BeautifulSoup

    runs = {"", "text/javascript", "module", "application/javascript"}
    bodies = [
        s.string or ""
        for s in BeautifulSoup(page, "html.parser").find_all("script")
        if not s.has_attr("src") and str(s.get("type", "")).lower() in runs
    ]
    return sorted({"'sha256-" + base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() + "'" for b in bodies})


def test_every_page_has_a_strict_csp(built: Built) -> None:
    pages = sorted(built.site.rglob("*.html"))
    assert len(pages) >= 6
    # hosts that send headers get the same policy, with every page's hashes, plus frame-ancestors
    (everywhere, *_) = parse_headers((built.site / "_headers").read_text())
    assert everywhere.pattern == "/*"
    header = dict(d.strip().split(" ", 1) for d in dict(everywhere.headers)["Content-Security-Policy"].split(";"))
    assert header.pop("frame-ancestors") == "'none'"
    for page in pages:
        text = page.read_text()
        m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', text)
        assert m, page
        assert text.index(m.group(0)) < text.index("<script"), page
        csp = dict(d.strip().split(" ", 1) for d in m.group(1).split(";"))
        scripts = inline_script_hashes(text)
        # WebAssembly may compile (the search index is WASM); no JavaScript runs but the site's and the hashed
        assert csp["script-src"].split() == ["'self'", "'wasm-unsafe-eval'", *scripts], page
        assert not re.search(r"'unsafe-(inline|eval|hashes)'", m.group(1)) and "http" not in m.group(1)
        assert csp["object-src"] == "'none'" and csp["default-src"] == "'self'"
        assert csp.keys() == header.keys(), page
        for name, value in csp.items():
            if name in ("script-src", "style-src"):
                assert set(value.split()) <= set(header[name].split()), (page, name)
            else:
                assert value == header[name], (page, name)


def test_a_leak_fails_the_build_and_names_the_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "hooks" / "leak_hook.py").write_text(LEAK_HOOK)
    config = (root / "mkdocs.yml").read_text()
    hooks = "  - hooks/qbank_hooks.py\n"
    assert hooks in config
    (root / "mkdocs.yml").write_text(config.replace(hooks, hooks + "  - hooks/leak_hook.py\n"))
    run = qbank("build", "--root", str(root), env={"QBANK_LEDGER": str(tmp_path / "none")})
    assert run.returncode == 1
    assert re.search(
        r"^site/questions/draft-acceptance-rate/index\.html:0:0: error: .*\[premium-leak\]$", run.stderr, re.MULTILINE
    ), run.stderr
    assert "site/questions/kv-cache-long-context/index.html" in run.stderr
    assert "what-is-a-kv-cache" not in run.stderr  # a free page without premium text raises nothing
    assert not (root / "site").exists()  # nothing was swapped in
    assert not list(root.glob(".site-build-*"))


def test_without_a_recipient_premium_stays_encrypted(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    shutil.rmtree(root / "paywall")  # the config names a recipient file that is not there
    run = qbank("build", "--root", str(root))
    assert run.returncode == 0, run.stderr
    assert "[paywall-no-recipient]" in run.stderr and "[paywall-no-ledger]" not in run.stderr
    assert qbank("build", "--root", str(root), "--strict").returncode == 1  # CI must give it a recipient
    grep = subprocess.run(["grep", "-r", "-l", "-a", "QBCANARY", str(root / "site")], capture_output=True)
    assert grep.returncode == 1
    assert not (root / "site/assets/keyslots").exists() and not (root / ".qbank/release").exists()


# Runs `qbank build` with an audit hook that refuses (and records) any open of the ledger file, any sqlite
# connection to it, and any read of the release identity: a build reaching for either fails loudly.
AUDIT = """
import sys
from pathlib import Path
ledger, identity, log = (str(Path(p).resolve()) for p in sys.argv[1:4])

def hook(event, args):
    if event in ("open", "sqlite3.connect", "os.listdir", "os.scandir") and args and args[0] is not None:
        target = args[0]
        if isinstance(target, int):
            return
        name = str(Path(str(target).removeprefix("file:").split("?")[0]).resolve()) if str(target) else ""
        if name in (ledger, identity):
            with open(log, "a") as fh:
                fh.write(f"{event} {name}\\n")
            raise PermissionError(f"audit: {event} {name}")

sys.addaudithook(hook)
from qbank.cli import main
sys.exit(main(sys.argv[4:]))
"""


def test_the_build_never_opens_the_ledger_nor_writes_slots(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    ledger = tmp_path / "private" / "ledger.sqlite3"
    keys = make_ledger(ledger)
    identity = make_identity(tmp_path / "deploy-env")
    log = tmp_path / "audit.log"
    env = os.environ | {"QBANK_LEDGER": str(ledger), "QBANK_RELEASE_IDENTITY_FILE": str(identity.key)}
    run = subprocess.run(
        [sys.executable, "-c", AUDIT, str(ledger), str(identity.key), str(log),
         "build", "--root", str(root), "--recipient", str(identity.pub)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert not log.exists(), log.read_text()
    assert not (root / "site/assets/keyslots").exists()
    assert "[paywall-no-ledger]" not in run.stderr
    sealed = sealed_release(root)
    assert f"sealed to the recipient: {sealed.relative_to(root)}" in run.stdout
    assert stat.S_IMODE(sealed.stat().st_mode) == 0o600
    # the hook is armed: the same guard stops the keyslot step, which must read the ledger
    step = subprocess.run(
        [sys.executable, "-c", AUDIT, str(ledger), str(tmp_path / "unused"), str(log),
         "paywall", "keyslots", "--site", str(root / "site"), "--release", str(sealed), "--ledger", str(ledger)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert step.returncode != 0 and log.read_text().startswith(("open ", "sqlite3.connect ")), step.stderr
    # and without the guard it writes slots that open the page
    keyslots(root, ledger, identity)
    opened = qbank("paywall", "decrypt", "--root", str(root), "--key", keys.valid, KV)
    assert opened.returncode == 0 and "QBCANARYALPHA7F3A" in opened.stdout, opened.stderr


def test_the_keyslot_step_runs_no_content_code(tmp_path: Path, built: Built) -> None:
    site = tmp_path / "site"
    shutil.copytree(built.site, site)
    probe = (
        "import sys\nfrom qbank.cli import main\ncode = main(sys.argv[1:])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mkdocs', 'material', 'pymdownx', 'markdown')"
        " or m.startswith(('qbank.verify', 'qbank.render', 'qbank.build', 'qbank.corpus', 'qbank.pipeline')))\n"
        "print('IMPORTED', bad)\nsys.exit(code)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, "paywall", "keyslots", "--site", str(site),
         "--release", str(sealed_release(built.root)), "--ledger", str(built.ledger)],
        capture_output=True, text=True, env=os.environ | built.identity.env, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "IMPORTED []" in run.stdout, run.stdout
    # the same inputs give the same bytes as the first run
    rid = json.loads((site / "qbank-build.json").read_text())["release"]
    for p in (built.site / "assets/keyslots" / rid).iterdir():
        assert (site / "assets/keyslots" / rid / p.name).read_bytes() == p.read_bytes()


def test_the_keyslot_step_refuses_mismatched_inputs(tmp_path: Path, built: Built) -> None:
    sealed = sealed_release(built.root)
    other = make_identity(tmp_path / "other")
    base = ["paywall", "keyslots", "--site", str(built.site), "--release", str(sealed), "--ledger", str(built.ledger)]
    before = {p: p.read_bytes() for p in (built.site / "assets/keyslots").rglob("*.json")}
    wrong = qbank(*base, env=other.env)
    assert wrong.returncode == 1 and "sealed to another key" in wrong.stderr
    doc = json.loads(sealed.read_text())
    moved = tmp_path / "moved.sealed.json"
    moved.write_text(json.dumps({**doc, "site_url": "https://evil.example/"}))
    run = qbank(*base[:4], "--release", str(moved), *base[6:], env=built.identity.env)
    assert run.returncode == 1 and "built for" in run.stderr
    nobody = qbank(*base, env={"QBANK_RELEASE_IDENTITY_FILE": "", "QBANK_RELEASE_IDENTITY": ""})
    assert nobody.returncode == 2 and "no release identity" in nobody.stderr
    assert {p: p.read_bytes() for p in (built.site / "assets/keyslots").rglob("*.json")} == before


TRACK_MIN = 8
"""Every topic is a track of at least this many questions (the content issue's floor)."""


def listed_questions(page: str) -> set[str]:
    """Slugs of the questions a built hub page lists in its question lists (not the nav, not related links)."""
    lists = re.findall(r'<div class="qb-list"[^>]*>(.*?)</div>', page, flags=re.DOTALL)
    return {m for block in lists for m in re.findall(r'href="\.\./\.\./questions/([a-z0-9-]+)/"', block)}


def test_the_real_corpus_is_sealed_without_false_alarms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, report = load_corpus(REPO)
    assert report.errors == 0
    sections = {slug: len(answer.premium) for slug, answer in corpus.answers.items() if answer.premium}
    assert sections, "the repository has premium answers to seal"
    root = make_repo(tmp_path / "repo", content=REPO)
    ledger = tmp_path / "ledger.sqlite3"
    keys = make_ledger(ledger)
    identity = make_identity(tmp_path / "deploy-env")
    monkeypatch.setenv("QBANK_LEDGER", str(tmp_path / "no-ledger-here"))
    monkeypatch.setenv("QBANK_RELEASE_RECIPIENT", str(identity.pub))
    check_all = build.check_all
    claims: list[str] = []

    def content_checked(root: Path, *, trust_local: bool = False) -> tuple[Corpus, Report]:
        # Numbers in the real prose are the content's own business (tests/test_cli.py checks them); this
        # test is about sealing, so claim errors are set aside and reported. Everything else must pass:
        # loading, every verification script, the build, the leak scan and the site checks.
        corpus, report = check_all(root, trust_local=trust_local)
        kept = Report()
        kept.extend(p for p in report.problems if not p.code.startswith("claim-"))
        claims.extend(p.text() for p in report.problems if p.code.startswith("claim-") and p.level is Level.ERROR)
        return corpus, kept

    monkeypatch.setattr(build, "check_all", content_checked)
    result = build.build_site(root)
    assert result.site_dir is not None and result.report.errors == 0, [p.text() for p in result.report.problems]
    assert not [p for p in result.report.problems if p.code.startswith(("premium-", "paywall-"))]
    for slug in sections:
        page = (root / "site" / "questions" / slug / "index.html").read_text()
        assert page.count('class="qb-premium qb-locked"') == sealed_sections(root, slug), slug
    slug = sorted(sections)[0]
    keyslots(root, ledger, identity)
    opened = qbank("paywall", "decrypt", "--root", str(root), "--key", keys.valid, f"/questions/{slug}/")
    assert opened.returncode == 0 and opened.stdout.count("<!-- section") == sealed_sections(root, slug)
    # every topic page of the built site lists its whole track, and every track is a real one
    for topic in corpus.topics:
        listed = listed_questions((root / "site" / "topics" / topic / "index.html").read_text())
        assert listed == {s for s, q in corpus.questions.items() if q.topic == topic}, topic
        assert len(listed) >= TRACK_MIN, f"topic {topic} lists {len(listed)} questions"
    print(f"{len(claims)} claim errors in the real content set aside:", *claims, sep="\n")
