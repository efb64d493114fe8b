"""The deploy job's keyslot step: unseal the release key, read the ledger, write the slots. No content code.

This module imports neither mkdocs nor the renderer nor the verifier: it runs where the ledger and the
release identity are, and only there. What it reads: a built site's ``qbank-build.json`` (release id and
site URL), the sealed release, the ledger. What it writes: ``assets/keyslots/<release_id>/*.json``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from .ledger import Ledger
from .recipient import SealedRelease, SealError, unseal
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


def run_keyslots(
    site: Path,
    sealed_path: Path,
    identity: X25519PrivateKey,
    ledger: str,
    today: dt.date,
    *,
    endpoint_url: str | None = None,
    block: int = BLOCK,
) -> Slots:
    """The whole step: check the inputs belong together, read the ledger, write the slots."""
    info = build_info(site)
    sealed = load_sealed(sealed_path)
    check_matches(info, sealed, str(site / BUILD_INFO))
    active, ended = read_licenses(ledger, today, endpoint_url)
    slots = compute(sealed, identity, active, ended, block)
    write(site, slots)
    return slots


def iter_files(slots: Slots) -> Iterator[tuple[str, bytes]]:
    """Shard files in path order."""
    yield from sorted(slots.files.items())
