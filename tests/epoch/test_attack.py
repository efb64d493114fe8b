"""Attack first: a revoked reader who kept everything they ever fetched reads nothing changed or added later.

The reader "kept everything": every file of the site as it was while their license was active, their
license key (so their slot, the epoch key it wraps and every section key derived from it). After their
revocation the next deploy changes one section and adds a page. They then fetch every new public file
and try every key they hold on every new section. The keyslot step is the real one (`run_keyslots`).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from qbank.epoch.sections import SealedSection, open_section, section_key
from qbank.paywall.keys import derive, parse_key
from qbank.paywall.keyslots import run_keyslots
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen, load_identity_text
from qbank.paywall.release import unb64
from qbank.paywall.slots import open_entry, shard_of, shard_path

from .fake_build import Pages, fake_build, site_files

TODAY = dt.date(2026, 12, 1)
BEFORE: Pages = {"/questions/a/": {"0": "<p>alpha premium text</p>", "1": "<p>alpha second part</p>"},
                 "/questions/b/": {"0": "<p>beta premium text</p>"}}
AFTER: Pages = {"/questions/a/": {"0": "<p>alpha premium text, edited after the revocation</p>",
                                  "1": "<p>alpha second part</p>"},
                "/questions/b/": {"0": "<p>beta premium text</p>"},
                "/questions/c/": {"0": "<p>gamma: a page added after the revocation</p>"}}


def setup(tmp_path: Path) -> tuple[Path, Path, Path, str, str]:
    ledger = tmp_path / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        honest, leaver = book.mint(2)
        book.sell(honest, TODAY - dt.timedelta(days=5), "honest@example.com")
        book.sell(leaver, TODAY - dt.timedelta(days=5), "leaver@example.com")
    key, _pub, _ = keygen(tmp_path / "identity.key")
    return tmp_path / "repo", ledger, key, honest, leaver


def pub_of(key: Path) -> Path:
    """The public half `keygen` wrote next to the identity."""
    (pub,) = [p for p in key.parent.iterdir() if p.name.startswith(key.name) and p != key]
    return pub


def deploy(root: Path, pages: Pages, ledger: Path, key: Path) -> dict[str, bytes]:
    identity = load_identity_text(key.read_text("ascii"), "identity")
    sealed = fake_build(root, pages, pub_of(key))
    run_keyslots(root / "site", sealed, identity, str(ledger), TODAY)
    return site_files(root / "site")


def epoch_key_of(files: dict[str, bytes], license_key: str) -> bytes | None:
    """What a license's slot yields from a site's files (None: it yields no key)."""
    d = derive(parse_key(license_key))
    release = json.loads(files["qbank-build.json"])["release"]
    opened = open_entry(json.loads(files[shard_path(release, shard_of(d.identifier))]), d.identifier, d.kek)
    assert opened is not None
    return opened[1]


def sections(files: dict[str, bytes]) -> dict[tuple[str, str], SealedSection]:
    out = {}
    for path, raw in files.items():
        if path.startswith("assets/premium/"):
            body = json.loads(raw)
            for s, sec in body["sections"].items():
                out[(body["page"], s)] = SealedSection(sec["d"], unb64(sec["n"]), unb64(sec["c"]))
    return out


def try_open(k: bytes, page: str, s: str, sec: SealedSection) -> str | None:
    """A key tried on a section as an epoch key (derivation) and as a cipher key directly."""
    try:
        return open_section(k, page, s, sec)
    except InvalidTag:
        pass
    try:
        return AESGCM(k).decrypt(sec.nonce, sec.ciphertext, None).decode()
    except (InvalidTag, ValueError):
        return None


def attacker_reads(kept: list[bytes], new: dict[str, bytes]) -> dict[tuple[str, str], str]:
    """Every new section any kept key opens."""
    got: dict[tuple[str, str], str] = {}
    for (page, s), sec in sections(new).items():
        for k in kept:
            text = try_open(k, page, s, sec)
            if text is not None:
                got[(page, s)] = text
    return got


def kept_keys(old: dict[str, bytes], license_key: str) -> list[bytes]:
    """Every key a reader derives from what they fetched: the epoch key and each section's content key."""
    epoch = epoch_key_of(old, license_key)
    assert epoch is not None
    return [epoch] + [section_key(epoch, p, s, sec.d) for (p, s), sec in sections(old).items()]


def test_revoked_reader_keeping_everything_reads_nothing_changed_or_added(tmp_path: Path) -> None:
    root, ledger, key, honest, leaver = setup(tmp_path)
    old = deploy(root, BEFORE, ledger, key)
    kept = kept_keys(old, leaver)
    assert attacker_reads(kept, old)  # while active, the kept keys do open the site (the attack tool works)
    with open_ledger(ledger) as book:
        book.revoke(leaver, "refund")
    new = deploy(root, AFTER, ledger, key)
    changed = {("/questions/a/", "0"), ("/questions/c/", "0")}
    stolen = attacker_reads(kept, new)
    assert not set(stolen) & changed, f"a revoked reader opened {sorted(set(stolen) & changed)}"
    assert epoch_key_of(new, leaver) is None  # their new slot says revoked and yields no key
    # the honest reader opens every section of the new site, edits included
    honest_key = epoch_key_of(new, honest)
    assert honest_key is not None
    opened = {ps: open_section(honest_key, ps[0], ps[1], sec) for ps, sec in sections(new).items()}
    assert opened[("/questions/c/", "0")] == AFTER["/questions/c/"]["0"]
    assert opened[("/questions/a/", "0")] == AFTER["/questions/a/"]["0"]


def test_without_a_lost_reader_the_epoch_continues_and_its_keys_open_later_edits(tmp_path: Path) -> None:
    """The control: no revocation, no re-key, and the same attack succeeds (so the test above can fail)."""
    root, ledger, key, _honest, leaver = setup(tmp_path)
    old = deploy(root, BEFORE, ledger, key)
    kept = kept_keys(old, leaver)
    new = deploy(root, AFTER, ledger, key)
    assert json.loads(new["qbank-build.json"])["release"] == json.loads(old["qbank-build.json"])["release"]
    assert attacker_reads(kept, new)[("/questions/a/", "0")] == AFTER["/questions/a/"]["0"]


@pytest.mark.parametrize("how", ["expired", "unsold-revoked"])
def test_any_reader_lost_begins_a_new_epoch(tmp_path: Path, how: str) -> None:
    root, ledger, key, _honest, leaver = setup(tmp_path)
    with open_ledger(ledger) as book:
        (unsold,) = book.mint(1)
    first = json.loads(deploy(root, BEFORE, ledger, key)["qbank-build.json"])["release"]
    identity = load_identity_text(key.read_text("ascii"), "identity")
    if how == "unsold-revoked":
        with open_ledger(ledger) as book:
            book.revoke(unsold, "lost")
        day = TODAY
    else:
        day = TODAY + dt.timedelta(days=200)  # past the six months of both sales
    sealed = fake_build(root, BEFORE, pub_of(key))
    slots = run_keyslots(root / "site", sealed, identity, str(ledger), day, max_age=dt.timedelta(days=365))
    assert slots.rekeyed and "may no longer read" in slots.rekeyed
    assert slots.release_id != first
    assert leaver  # (named for symmetry with the other tests)
