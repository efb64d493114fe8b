"""The keyslot step's reseal: a rebuild with nothing changed leaves every file as it was; an edit changes
its page and its ciphertext file only; a new reader changes one keyslot shard and no ciphertext."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from qbank.paywall.keyslots import KeyslotError, run_keyslots
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen, load_identity_text

from .fake_build import Pages, fake_build, site_files

TODAY = dt.date(2026, 12, 1)
PAGES: Pages = {f"/questions/q{i}/": {"0": f"<p>premium {i}</p>", "1": f"<p>more {i}</p>"} for i in range(5)}


@pytest.fixture
def env(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    ledger = tmp_path / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        (k,) = book.mint(1)
        book.sell(k, TODAY, "a@example.com")
    key, pub, _ = keygen(tmp_path / "identity.key")
    return tmp_path / "repo", ledger, key, pub


def deploy(env: tuple[Path, Path, Path, Path], pages: Pages, today: dt.date = TODAY) -> dict[str, bytes]:
    root, ledger, key, pub = env
    sealed = fake_build(root, pages, pub)
    run_keyslots(root / "site", sealed, load_identity_text(key.read_text("ascii"), "id"), str(ledger), today)
    return site_files(root / "site")


def changed(a: dict[str, bytes], b: dict[str, bytes]) -> set[str]:
    return {p for p in a.keys() | b.keys() if a.get(p) != b.get(p)}


def test_a_rebuild_with_nothing_changed_is_byte_identical(env: tuple[Path, Path, Path, Path]) -> None:
    first = deploy(env, PAGES)
    assert not [p for p in first if p.endswith(".sealed.json")]
    assert changed(first, deploy(env, PAGES)) == set()
    # the build's own key is consumed: only the epoch's sealed key and record stay beside it
    assert sorted(p.name for p in (env[0] / ".qbank/release").iterdir()) == sorted(
        [json.loads(first["qbank-build.json"])["release"] + ".sealed.json", "epoch.json"])


def test_an_edit_changes_its_page_and_its_ciphertext_file_only(env: tuple[Path, Path, Path, Path]) -> None:
    first = deploy(env, PAGES)
    edited = {**PAGES, "/questions/q3/": {**PAGES["/questions/q3/"], "1": "<p>more 3, edited</p>"}}
    second = deploy(env, edited)
    diff = changed(first, second)
    premium = sorted(p for p in diff if p.startswith("assets/premium/"))
    assert len(premium) == 2 and (premium[0] in first) != (premium[1] in first)  # one gone, one new
    assert diff - set(premium) == {"questions/q3/index.html"}


def test_a_new_reader_changes_one_shard_and_no_ciphertext(env: tuple[Path, Path, Path, Path]) -> None:
    first = deploy(env, PAGES)
    with open_ledger(env[1]) as book:
        (k,) = book.mint(1)
        book.sell(k, TODAY, "b@example.com")
    diff = changed(first, deploy(env, PAGES))
    assert len(diff) == 1 and diff.pop().startswith("assets/keyslots/")


def test_the_epoch_ends_after_its_longest_life(env: tuple[Path, Path, Path, Path]) -> None:
    first = json.loads(deploy(env, PAGES)["qbank-build.json"])["release"]
    assert json.loads(deploy(env, PAGES, TODAY + dt.timedelta(days=29))["qbank-build.json"])["release"] == first
    assert json.loads(deploy(env, PAGES, TODAY + dt.timedelta(days=30))["qbank-build.json"])["release"] != first


def test_a_tampered_build_file_is_refused_and_nothing_is_written(env: tuple[Path, Path, Path, Path]) -> None:
    root, ledger, key, pub = env
    sealed = fake_build(root, PAGES, pub)
    target = sorted((root / "site/assets/premium").iterdir())[0]
    doc = json.loads(target.read_bytes())
    doc["sections"]["0"]["c"] = doc["sections"]["1"]["c"]
    target.write_text(json.dumps(doc))
    before = site_files(root / "site")
    with pytest.raises(KeyslotError, match="fails authentication"):
        run_keyslots(root / "site", sealed, load_identity_text(key.read_text("ascii"), "id"), str(ledger), TODAY)
    assert site_files(root / "site") == before
    assert sealed.is_file() and not (sealed.parent / "epoch.json").exists()  # nor the record, nor the key


def test_the_step_run_again_on_its_own_output_changes_nothing(env: tuple[Path, Path, Path, Path]) -> None:
    root, ledger, key, _pub = env
    first = deploy(env, PAGES)
    epoch = json.loads(first["qbank-build.json"])["release"]
    identity = load_identity_text(key.read_text("ascii"), "id")
    run_keyslots(root / "site", root / ".qbank/release" / f"{epoch}.sealed.json", identity, str(ledger), TODAY)
    assert changed(first, site_files(root / "site")) == set()


def test_a_revocation_re_keys_a_site_already_under_an_epoch_without_a_build(
    env: tuple[Path, Path, Path, Path],
) -> None:
    root, ledger, key, _pub = env
    first = deploy(env, PAGES)
    epoch = json.loads(first["qbank-build.json"])["release"]
    with open_ledger(ledger) as book:
        (lic,) = book.licenses()
        book.revoke(lic.identifier, "refund")
    identity = load_identity_text(key.read_text("ascii"), "id")
    slots = run_keyslots(root / "site", root / ".qbank/release" / f"{epoch}.sealed.json", identity, str(ledger), TODAY)
    assert slots.rekeyed and slots.release_id != epoch
    now = site_files(root / "site")
    assert not [p for p, b in now.items() if epoch.encode() in b]  # nothing names the old epoch
    assert {p for p in now if p.startswith("assets/premium/")}.isdisjoint(first)


@pytest.mark.parametrize("label", ["0|x", "7"])
def test_decrypt_refuses_a_relabelled_section_as_tampered(env: tuple[Path, Path, Path, Path], label: str) -> None:
    """`qbank paywall decrypt`'s reader: a page whose spot names a section its file lacks, or an ambiguous
    name the file does hold, is "tampered", not a KeyError or a decrypted text."""
    from qbank.paywall.decrypt import DecryptError, decrypt_page

    root, ledger, _key, _pub = env
    with open_ledger(ledger) as book:
        (lic,) = book.mint(1)
        book.sell(lic, TODAY, "c@example.com")
    deploy(env, PAGES)
    assert [o.section for o in decrypt_page(root / "site", "/questions/q1/", lic)] == ["0", "1"]  # the tool works
    page = root / "site/questions/q1/index.html"
    name = re.search(r'data-qb-file="([^"]+)"', page.read_text()).group(1)  # type: ignore[union-attr]
    page.write_text(page.read_text().replace('data-qb-section="0"', f'data-qb-section="{label}"'))
    if label == "0|x":
        body = json.loads((root / "site/assets/premium" / name).read_bytes())
        body["sections"][label] = body["sections"]["0"]
        (root / "site/assets/premium" / name).write_text(json.dumps(body))
    with pytest.raises(DecryptError) as caught:
        decrypt_page(root / "site", "/questions/q1/", lic)
    assert caught.value.reason == "tampered"
