"""The deploy job's keyslot step: unseal the build's key, read the ledger, move the site to the epoch, write
the slots. No content code.

This module imports neither mkdocs nor the renderer nor the verifier: it runs where the ledger and the
release identity are, and only there. What it reads: a built site's ``qbank-build.json`` (release id and
site URL), the build's sealed release, the ledger, the epoch's record (``qbank.epoch``). What it writes:
the site's premium files and pages sealed again under the epoch key (``epoch.reseal``), the epoch's
``assets/keyslots/<epoch id>/*.json``, the epoch's sealed key next to the build's (which it replaces: the
site no longer holds anything under the build's key) and the epoch's record.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from ..epoch import store as epoch_store
from ..epoch.reseal import ResealError, apply_reseal, plan_reseal
from ..epoch.state import MAX_AGE, EpochError, EpochState, rekey_reason
from .ledger import Ledger
from .recipient import SealedRelease, SealError, seal, unseal
from .slots import BLOCK, Active, Ended, keyslot_files, slot_dir

BUILD_INFO = "qbank-build.json"  # the same name as site.BUILD_INFO (site.py imports mkdocs-side code)


class KeyslotError(ValueError):
    """The keyslot step cannot run: missing or mismatched inputs. Nothing was written."""


@dataclass(frozen=True)
class Slots:
    """The keyslot files of one release, computed in memory."""

    release_id: str
    site_url: str
    files: dict[str, bytes]
    active: int
    ended: int
    rekeyed: str | None = None  # why a new epoch began with this run (None: the epoch continued)
    sections: int = 0  # premium sections sealed under the epoch


def ledger_at(location: str, endpoint_url: str | None = None) -> AbstractContextManager[Ledger]:
    """Open the ledger read-only at a LOCATION: a local path or ``s3://bucket/key`` (the deploy side's only door)."""
    from .ledger_store import open_ledger_at

    if not location.startswith("s3://") and not Path(location).expanduser().is_file():
        raise KeyslotError(f"no ledger at {Path(location).expanduser()}")
    return open_ledger_at(location, create=False, endpoint_url=endpoint_url, readonly=True)


def read_licenses(
    location: str, today: dt.date, endpoint_url: str | None = None
) -> tuple[list[Active], list[Ended]]:
    """Licenses that get a slot and those that get a status entry, on ``today``."""
    with ledger_at(location, endpoint_url) as book:
        return book.for_build(today)


def load_sealed(path: Path) -> SealedRelease:
    """A sealed-release file."""
    try:
        return SealedRelease.from_json(path.read_bytes())
    except OSError as exc:
        raise KeyslotError(f"cannot read the sealed release {path}: {type(exc).__name__}") from None
    except SealError as exc:
        raise KeyslotError(f"{path}: {exc}") from None


def build_info(site: Path) -> dict[str, Any]:
    """A built site's public record: ``site_url`` and ``release``."""
    try:
        doc = json.loads((site / BUILD_INFO).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise KeyslotError(f"{site / BUILD_INFO}: not a qbank build ({type(exc).__name__})") from None
    if not isinstance(doc, dict):
        raise KeyslotError(f"{site / BUILD_INFO}: not a qbank build")
    return doc


def compute(
    sealed: SealedRelease,
    identity: X25519PrivateKey,
    active: list[Active],
    ended: list[Ended],
    block: int = BLOCK,
) -> Slots:
    """Unseal the release key and compute every shard file (nothing is written)."""
    try:
        key = unseal(sealed, identity)
    except SealError as exc:
        raise KeyslotError(str(exc)) from None
    files = keyslot_files(key, sealed.release_id, active, ended, block)
    return Slots(sealed.release_id, sealed.site_url, files, len(active), len(ended))


def check_matches(info: dict[str, Any], sealed: SealedRelease, where: str) -> None:
    """Refuse a sealed release that is not the one this site was built with."""
    if info.get("release") != sealed.release_id:
        raise KeyslotError(
            f"{where} is release {info.get('release')}, the sealed release is {sealed.release_id}: not this build's key"
        )
    if info.get("site_url") != sealed.site_url:
        raise KeyslotError(f"{where} was built for {info.get('site_url')}, the sealed release for {sealed.site_url}")


def write(site: Path, slots: Slots) -> Path:
    """Put the release's slot folder in place whole (written aside, then renamed in)."""
    target = site / slot_dir(slots.release_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".slots-", dir=target.parent))
    try:
        for rel, content in slots.files.items():
            out = tmp / Path(rel).name
            out.write_bytes(content)
            os.chmod(out, 0o644)
        os.chmod(tmp, 0o755)
        if target.exists():
            old = target.with_name(f".old-{target.name}")
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old)
        else:
            tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def epoch_location(sealed_path: Path) -> str:
    """Where the epoch's record is kept when no ``--epoch`` is given: beside the sealed release."""
    return str(sealed_path.parent / "epoch.json")


def open_epoch(
    state: EpochState | None, identity: X25519PrivateKey, readers: frozenset[str], site_url: str, today: dt.date,
    max_age: dt.timedelta,
) -> tuple[EpochState, bytes, str | None]:
    """The epoch this deploy seals under (the recorded one, or a new one and why) and its key."""
    reason = rekey_reason(state, readers, site_url, today, max_age)
    if reason is None and state is not None:
        try:
            key = unseal(state.sealed, identity)
        except SealError as exc:
            raise KeyslotError(f"the epoch record's key: {exc}") from None
        return EpochState(state.epoch_id, state.began, state.sealed, state.readers | readers), key, None
    key, epoch_id = secrets.token_bytes(32), secrets.token_hex(8)
    return EpochState(epoch_id, today, seal(key, epoch_id, site_url, identity.public_key()), readers), key, reason


def run_keyslots(
    site: Path,
    sealed_path: Path,
    identity: X25519PrivateKey,
    ledger: str,
    today: dt.date,
    *,
    endpoint_url: str | None = None,
    block: int = BLOCK,
    epoch: str | None = None,
    max_age: dt.timedelta = MAX_AGE,
) -> Slots:
    """The whole step: check the inputs belong together, read the ledger, open (or begin) the epoch, seal the
    site's premium sections under it, write its slots, keep its sealed key and record."""
    info = build_info(site)
    sealed = load_sealed(sealed_path)
    check_matches(info, sealed, str(site / BUILD_INFO))
    active, ended = read_licenses(ledger, today, endpoint_url)
    try:
        build_key = unseal(sealed, identity)
    except SealError as exc:
        raise KeyslotError(str(exc)) from None
    location = epoch or epoch_location(sealed_path)
    try:
        previous = epoch_store.load(location, endpoint_url)
    except EpochError as exc:
        raise KeyslotError(str(exc)) from None
    readers = frozenset(a.identifier for a in active)
    state, key, reason = open_epoch(previous, identity, readers, sealed.site_url, today, max_age)
    try:
        plan = plan_reseal(site, build_key, sealed.release_id, key, state.epoch_id)
        # then the record, before any file: every reader about to get a slot is in it, and a record that
        # cannot be written stops the step with the site untouched (a record ahead of the site is harmless:
        # a new epoch nobody was given, or readers listed who never got their slot)
        epoch_store.save(location, state, endpoint_url)
        done = apply_reseal(plan)
    except (ResealError, EpochError) as exc:
        raise KeyslotError(str(exc)) from None
    files = keyslot_files(key, state.epoch_id, active, ended, block)
    slots = Slots(state.epoch_id, sealed.site_url, files, len(active), len(ended), reason, done.sections)
    write(site, slots)
    kept = sealed_path.parent / f"{state.epoch_id}.sealed.json"
    fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(state.sealed.to_json())
    if kept.resolve() != sealed_path.resolve():
        sealed_path.unlink()  # nothing in the site is under the build's key any more
    return slots


def iter_files(slots: Slots) -> Iterator[tuple[str, bytes]]:
    """Shard files in path order."""
    yield from sorted(slots.files.items())
