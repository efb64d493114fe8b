"""The keyslot step's parts (paywall/keyslots.py) one at a time: each input it refuses and what it says, the
slot files it computes and how it puts them in place, where the epoch record goes, what it keeps of the keys.
Messages and paths are written out here by hand; sites are written without mkdocs (tests/epoch/fake_build.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from qbank.epoch.state import EpochState
from qbank.paywall.keys import derive
from qbank.paywall.keyslots import (
    KeyslotError,
    Slots,
    build_info,
    check_matches,
    compute,
    epoch_location,
    iter_files,
    ledger_at,
    load_sealed,
    open_epoch,
    run_keyslots,
    write,
)
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen, load_identity_text, seal, unseal
from qbank.paywall.slots import Active, Ended, keyslot_files

from ..epoch.fake_build import SITE_URL, fake_build

TODAY = dt.date(2026, 12, 1)
KEY = bytes(range(32))


def refusal(call: Callable[[], object]) -> str:
    """The message of the KeyslotError that ``call`` raises (the test fails if it raises none)."""
    with pytest.raises(KeyslotError) as caught:
        call()
    return str(caught.value)


def identity(tmp_path: Path) -> tuple[X25519PrivateKey, X25519PublicKey]:
    key, _pub, _ = keygen(tmp_path / "identity.key")
    me = load_identity_text(key.read_text("ascii"), "id")
    return me, me.public_key()


def test_a_folder_without_a_build_record_is_not_a_build(tmp_path: Path) -> None:
    info = tmp_path / "qbank-build.json"
    assert refusal(lambda: build_info(tmp_path)) == f"{info}: not a qbank build (FileNotFoundError)"
    info.write_text("{oops")
    assert refusal(lambda: build_info(tmp_path)) == f"{info}: not a qbank build (JSONDecodeError)"
    info.write_text("[1, 2]")
    assert refusal(lambda: build_info(tmp_path)) == f"{info}: not a qbank build"
    info.write_text('{"release": "ab", "site_url": "https://x.example/"}')
    assert build_info(tmp_path) == {"release": "ab", "site_url": "https://x.example/"}


def test_a_sealed_release_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    path = tmp_path / "r.sealed.json"
    assert refusal(lambda: load_sealed(path)) == f"cannot read the sealed release {path}: FileNotFoundError"
    path.write_text('{"format": "other"}')
    assert refusal(lambda: load_sealed(path)) == f"{path}: not a sealed release (format other)"


def test_a_sealed_release_of_another_build_is_refused(tmp_path: Path) -> None:
    _me, pub = identity(tmp_path)
    sealed = seal(KEY, "ab12", "https://x.example/", pub)
    where = "site/qbank-build.json"
    check_matches({"release": "ab12", "site_url": "https://x.example/"}, sealed, where)
    other_release = {"release": "cd34", "site_url": "https://x.example/"}
    assert refusal(lambda: check_matches(other_release, sealed, where)) == (
        "site/qbank-build.json is release cd34, the sealed release is ab12: not this build's key"
    )
    for earlier in ({"release": "0000", "site_url": "https://x.example/"}, {"release": "ab12", "site_url": "https://a.x/"}):
        with pytest.raises(KeyslotError):  # another value sorting before the sealed one is another value too
            check_matches(earlier, sealed, where)
    other_site = {"release": "ab12", "site_url": "https://y.example/"}
    assert refusal(lambda: check_matches(other_site, sealed, where)) == (
        "site/qbank-build.json was built for https://y.example/, the sealed release for https://x.example/"
    )


def test_compute_unseals_the_key_and_counts_the_licenses(tmp_path: Path) -> None:
    me, pub = identity(tmp_path)
    sealed = seal(KEY, "ab12", "https://x.example/", pub)
    a, e = derive(bytes(16)), derive(bytes([1]) * 16)
    active, ended = [Active(a.identifier, a.kek, None)], [Ended(e.identifier, "revoked", None, e.kek)]
    slots = compute(sealed, me, active, ended, block=2)
    assert slots == Slots("ab12", "https://x.example/", keyslot_files(KEY, "ab12", active, ended, 2), 1, 1)
    assert (slots.rekeyed, slots.sections) == (None, 0)  # compute begins no epoch and seals no section
    other, _ = identity(tmp_path / "other")
    with pytest.raises(KeyslotError, match="sealed to another key"):
        compute(sealed, other, active, ended)


def test_write_puts_the_release_folder_in_place_whole(tmp_path: Path) -> None:
    site = tmp_path / "site"
    files = {"assets/keyslots/ab12/00.json": b"one", "assets/keyslots/ab12/01.json": b"two"}
    first = Slots("ab12", SITE_URL, files, 1, 0)
    target = write(site, first)
    assert target == site / "assets/keyslots/ab12"
    assert {p.name: p.read_bytes() for p in target.iterdir()} == {"00.json": b"one", "01.json": b"two"}
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert {stat.S_IMODE(p.stat().st_mode) for p in target.iterdir()} == {0o644}
    # a second write replaces the folder: a shard the new set lacks is gone, nothing is left aside
    write(site, Slots("ab12", SITE_URL, {"assets/keyslots/ab12/00.json": b"new"}, 1, 0))
    assert {p.name: p.read_bytes() for p in target.iterdir()} == {"00.json": b"new"}
    assert sorted(p.name for p in target.parent.iterdir()) == ["ab12"]


def test_a_write_that_fails_leaves_the_folder_as_it_was_and_nothing_aside(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write(site, Slots("ab12", SITE_URL, {"assets/keyslots/ab12/00.json": b"old"}, 1, 0))
    bad = {"assets/keyslots/ab12/00.json": b"new", "assets/keyslots/ab12/0\x001.json": b"a name no file may have"}
    with pytest.raises(ValueError, match="null"):
        write(site, Slots("ab12", SITE_URL, bad, 1, 0))
    assert {p.name: p.read_bytes() for p in (site / "assets/keyslots/ab12").iterdir()} == {"00.json": b"old"}
    assert sorted(p.name for p in (site / "assets/keyslots").iterdir()) == ["ab12"]


def test_a_local_ledger_that_is_not_there_is_refused(tmp_path: Path) -> None:
    assert refusal(lambda: ledger_at(str(tmp_path / "none.sqlite3"))) == f"no ledger at {tmp_path / 'none.sqlite3'}"


def test_the_deploy_side_opens_a_ledger_read_only_and_never_creates_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from qbank.paywall import ledger_store

    opened: list[tuple[str, dict[str, object]]] = []
    monkeypatch.setattr(ledger_store, "open_ledger_at", lambda location, **kw: opened.append((location, kw)))
    ledger_at("s3://bucket/ledger.sqlite3", "http://127.0.0.1:9000")
    assert opened == [
        ("s3://bucket/ledger.sqlite3", {"create": False, "endpoint_url": "http://127.0.0.1:9000", "readonly": True})
    ]


def test_the_epoch_record_lives_beside_the_sealed_release(tmp_path: Path) -> None:
    assert epoch_location(tmp_path / "release/ab12.sealed.json") == str(tmp_path / "release/epoch.json")


def test_shard_files_come_in_path_order() -> None:
    slots = Slots("r", SITE_URL, {"b/02.json": b"2", "b/00.json": b"0", "b/01.json": b"1"}, 0, 0)
    assert [p for p, _ in iter_files(slots)] == ["b/00.json", "b/01.json", "b/02.json"]


def test_an_epoch_continues_with_its_readers_and_the_new_ones(tmp_path: Path) -> None:
    me, pub = identity(tmp_path)
    state = EpochState("e1", TODAY, seal(KEY, "e1", SITE_URL, pub), frozenset({"a"}))
    kept, key, reason = open_epoch(state, me, frozenset({"a", "b"}), SITE_URL, TODAY, dt.timedelta(days=30))
    assert (kept.epoch_id, kept.began, kept.readers, key, reason) == ("e1", TODAY, frozenset({"a", "b"}), KEY, None)
    # a lost reader begins a new epoch today, with a new key sealed to the identity
    new, key2, why = open_epoch(state, me, frozenset({"b"}), SITE_URL, TODAY, dt.timedelta(days=30))
    assert why == "1 reader(s) of the epoch may no longer read (revoked, expired or removed)"
    assert re.fullmatch("[0-9a-f]{16}", new.epoch_id) and new.began == TODAY and new.readers == frozenset({"b"})
    assert unseal(new.sealed, me) == key2 != KEY
    other, _ = identity(tmp_path / "other")
    with pytest.raises(KeyslotError, match="the epoch record's key: this release was sealed to another key"):
        open_epoch(state, other, frozenset({"a"}), SITE_URL, TODAY, dt.timedelta(days=30))


def test_the_step_keeps_the_epochs_key_only_and_privately(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        (k,) = book.mint(1)
        book.sell(k, TODAY, "a@example.com")
    key, pub, _ = keygen(tmp_path / "identity.key")
    sealed = fake_build(tmp_path / "repo", {"/q/": {"0": "<p>x</p>"}}, pub)
    me = load_identity_text(key.read_text("ascii"), "id")
    slots = run_keyslots(tmp_path / "repo/site", sealed, me, str(ledger), TODAY)
    assert (slots.active, slots.ended, slots.rekeyed, slots.sections) == (1, 0, "no epoch yet", 1)
    kept = sealed.parent / f"{slots.release_id}.sealed.json"
    assert sorted(p.name for p in sealed.parent.iterdir()) == sorted([kept.name, "epoch.json"])
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert json.loads(kept.read_bytes())["release"] == slots.release_id
    assert sorted(p.name for p in (tmp_path / "repo/site/assets/keyslots").iterdir()) == [slots.release_id]


def test_the_step_run_on_its_own_epochs_key_keeps_that_key(tmp_path: Path) -> None:
    """A second deploy given the epoch's sealed key (what the first one kept) must not delete it."""
    ledger = tmp_path / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        (k,) = book.mint(1)
        book.sell(k, TODAY, "a@example.com")
    key, pub, _ = keygen(tmp_path / "identity.key")
    me = load_identity_text(key.read_text("ascii"), "id")
    first = run_keyslots(tmp_path / "repo/site", fake_build(tmp_path / "repo", {"/q/": {"0": "<p>x</p>"}}, pub), me,
                         str(ledger), TODAY)
    kept = tmp_path / "repo/.qbank/release" / f"{first.release_id}.sealed.json"
    again = run_keyslots(tmp_path / "repo/site", kept, me, str(ledger), TODAY)
    assert again.release_id == first.release_id and again.rekeyed is None
    assert sorted(p.name for p in kept.parent.iterdir()) == sorted([kept.name, "epoch.json"])


def test_a_failure_after_the_new_folder_is_in_place_is_reported_as_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write(site, Slots("ab12", SITE_URL, {"assets/keyslots/ab12/00.json": b"old"}, 1, 0))
    real = shutil.rmtree

    def rmtree(path: Path, *args: object, **kwargs: object) -> None:
        if Path(path).name.startswith(".old-"):
            raise PermissionError(13, "the old folder cannot be removed", str(path))
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    with pytest.raises(PermissionError, match="the old folder cannot be removed"):
        write(site, Slots("ab12", SITE_URL, {"assets/keyslots/ab12/00.json": b"new"}, 1, 0))
    assert (site / "assets/keyslots/ab12/00.json").read_bytes() == b"new"  # the new folder is in place


def test_slots_are_a_frozen_value() -> None:
    slots = Slots("ab12", SITE_URL, {}, 0, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        slots.active = 1  # type: ignore[misc]


def test_the_step_refuses_an_identity_the_build_was_not_sealed_to(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        book.mint(1)
    _key, pub, _ = keygen(tmp_path / "identity.key")
    sealed = fake_build(tmp_path / "repo", {"/q/": {"0": "<p>x</p>"}}, pub)
    before = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "repo").rglob("*"))
    other, _ = identity(tmp_path / "other")
    assert refusal(lambda: run_keyslots(tmp_path / "repo/site", sealed, other, str(ledger), TODAY)) == (
        "this release was sealed to another key than the release identity given"
    )
    assert sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "repo").rglob("*")) == before
