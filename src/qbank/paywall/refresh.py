"""The scheduled refresh: recompute the live release's keyslots from today's ledger, upload what changed.

The live release is the one the public site's ``qbank-build.json`` names; its sealed key comes from the
private prefix (``deploy.release.sealed_key``). The deploy plan runs against the bucket's manifest, with
every file but this release's slots taken as is from the manifest: only slot files whose bytes changed
(a sale, a revocation, an expiry) are uploaded, then the manifest. Slots are deterministic, so an
unchanged license set uploads nothing. A refresh never uploads anything but slot files: if the bucket
misses a site file, it refuses and asks for a full deploy. Before any slot is uploaded, the readers it
opens the live epoch to are added to the epoch's record (``epoch.state.admit``): a reader who joins between
deploys and is refunded before the next one must end the epoch like any other. Earlier releases' slot
folders, kept by the deploy for its grace period, are deleted by the first refresh (``retire_old_slots``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from ..deploy.headers import ObjectHeaders, headers_for
from ..deploy.plan import DEFAULT_GRACE, MANIFEST_NAME, Action, LocalFile, Plan, make_plan
from ..deploy.release import BUILD_INFO, fetch_object, sealed_key
from ..deploy.s3 import DeployResult, S3Store, Target, execute
from ..epoch import store as epoch_store
from ..epoch.state import EpochError, admit
from .keyslots import KeyslotError, Slots, compute, read_licenses
from .recipient import SealedRelease, SealError
from .slots import BLOCK, SLOT_DIR, slot_dir

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


@dataclass
class Refresh:
    """What a refresh computed and did."""

    release_id: str
    slots: Slots
    plan: Plan
    result: DeployResult | None


def live_release(client: S3Client, public: Target, private: Target) -> tuple[dict[str, object], SealedRelease]:
    """The public site's build record and its sealed release from the private prefix."""
    raw = fetch_object(client, public, BUILD_INFO)
    if raw is None:
        raise KeyslotError(f"s3://{public.bucket}/{public.key(BUILD_INFO)} is missing: nothing deployed there yet")
    info = json.loads(raw)
    release_id = info.get("release") if isinstance(info, dict) else None
    if not isinstance(release_id, str):
        raise KeyslotError("the live site has no paywall release")
    body = fetch_object(client, private, sealed_key(release_id))
    if body is None:
        raise KeyslotError(f"no sealed release {release_id} under s3://{private.bucket}/{private.prefix}")
    try:
        sealed = SealedRelease.from_json(body)
    except SealError as exc:
        raise KeyslotError(f"sealed release {release_id}: {exc}") from None
    if sealed.release_id != release_id or sealed.site_url != info.get("site_url"):
        raise KeyslotError(f"the sealed release under the private prefix does not belong to live release {release_id}")
    return info, sealed


def retire_old_slots(plan: Plan, mine: str) -> None:
    """Delete earlier releases' slot files now rather than after the deploy's grace period.

    The grace period keeps old objects for pages still cached at the edge; pages live there for a minute
    (``max-age=60``), and a refresh runs a day after a deploy at the earliest, so no cached page needs
    them. Kept longer, they would let a license revoked since then open the previous release's pages.
    """
    old = sorted(p for p in plan.retained if p.startswith(SLOT_DIR + "/") and not p.startswith(mine))
    if not old:
        return
    for path in old:
        del plan.retained[path]
        plan.manifest.unreferenced.pop(path, None)
    plan.actions = [a for a in plan.actions if a.phase != "manifest"]
    plan.actions += [Action("delete", p, "earlier release's keyslots") for p in old]
    plan.actions.append(Action("manifest", MANIFEST_NAME, "manifest"))
    plan.invalidate = sorted(set(plan.invalidate) | {"/" + p for p in old})


def epoch_location(private: Target) -> str:
    """The epoch record's default place: ``epoch.json`` under the private prefix (main.yml's ``--epoch``)."""
    return f"s3://{private.bucket}/{private.key('epoch.json')}"


def record_readers(location: str, live_release: str, readers: frozenset[str], endpoint_url: str | None) -> None:
    """Add the readers about to get a slot of the live epoch to its record (before any slot is uploaded)."""
    try:
        state = admit(epoch_store.load(location, endpoint_url), live_release, readers)
    except EpochError as exc:
        raise KeyslotError(str(exc)) from None
    if state is not None:
        epoch_store.save(location, state, endpoint_url)


def refresh(
    client: S3Client,
    public: Target,
    private: Target,
    identity: X25519PrivateKey,
    ledger: str,
    today: dt.date,
    *,
    endpoint_url: str | None = None,
    now: datetime | None = None,
    grace: timedelta = DEFAULT_GRACE,
    jobs: int = 8,
    dry_run: bool = False,
    block: int = BLOCK,
    epoch: str | None = None,
) -> Refresh:
    """Recompute and upload the live release's changed slot files (and the manifest, when anything changed)."""
    store = S3Store(client, public)
    _info, sealed = live_release(client, public, private)
    manifest = store.read_manifest()
    if manifest is None:
        raise KeyslotError("the public prefix has no deploy manifest: run a full deploy first")
    active, ended = read_licenses(ledger, today, endpoint_url)
    slots = compute(sealed, identity, active, ended, block)
    mine = slot_dir(sealed.release_id) + "/"
    kept = [
        LocalFile(path, rec["sha256"], rec["size"],
                  ObjectHeaders(rec["content_type"], rec["cache_control"], rec.get("content_encoding")))
        for path, rec in manifest.files.items()
        if not path.startswith(mine)
    ]
    siblings = {f.path for f in kept} | set(slots.files)
    fresh = [
        LocalFile(path, hashlib.sha256(body).hexdigest(), len(body), headers_for(path, siblings))
        for path, body in sorted(slots.files.items())
    ]
    plan = make_plan(kept + fresh, manifest, store.list_objects(), now or datetime.now(UTC), grace)
    foreign = [a.path for a in plan.uploads if not a.path.startswith(mine)]
    if foreign:
        raise KeyslotError(f"the bucket misses site files ({foreign[0]}, ...): run a full `qbank deploy` first")
    retire_old_slots(plan, mine)
    if dry_run:
        return Refresh(sealed.release_id, slots, plan, None)
    record_readers(epoch or epoch_location(private), sealed.release_id,
                   frozenset(a.identifier for a in active), endpoint_url)
    tmp = Path(tempfile.mkdtemp(prefix="qbank-refresh-"))
    try:
        for path, body in slots.files.items():
            out = tmp / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(body)
        result = execute(plan, store, tmp, jobs=jobs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Refresh(sealed.release_id, slots, plan, result)
