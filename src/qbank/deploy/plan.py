"""The deploy plan: local site files against the manifest kept in the bucket -> ordered actions. Pure.

Order is what keeps readers safe while a deploy runs (and after it dies half-way):

1. ``immutable``: content-hashed assets and premium ciphertext. New names, so uploading them changes nothing a
   reader sees; every page uploaded later finds them present.
2. ``keyslots``: rewritten in place each release; before the pages whose ciphertext they unlock.
3. ``static``: other non-page files (images, search index, language packs).
4. ``pages``: HTML, new pages before rewritten ones (a rewritten page may link to a new one).
5. ``sitemaps``: after the pages, so a crawler never follows a sitemap entry to a page not there yet.
6. ``delete``: objects unreferenced for longer than the grace period (pages cached at the edge may still
   point at them until then). Unreferenced by both the old and the new site, so no reader needs them.
7. ``manifest``: last, so an interrupted run leaves the previous manifest, and the next run re-plans from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from .headers import (
    HOST_FILES,
    KEYSLOTS_DIR,
    ObjectHeaders,
    headers_for,
    is_immutable,
    is_page,
    is_sitemap,
    site_files,
)

MANIFEST_NAME = ".qbank-manifest.json"
MANIFEST_VERSION = 1
DEFAULT_GRACE = timedelta(days=7)

Phase = Literal["immutable", "keyslots", "static", "pages", "sitemaps", "delete", "manifest"]
PHASES: tuple[Phase, ...] = ("immutable", "keyslots", "static", "pages", "sitemaps", "delete", "manifest")


@dataclass(frozen=True)
class LocalFile:
    """One file of the built site, with the metadata it is stored under."""

    path: str
    sha256: str
    size: int
    headers: ObjectHeaders

    def record(self) -> dict[str, Any]:
        """The manifest entry of this file."""
        return {
            "sha256": self.sha256,
            "size": self.size,
            "content_type": self.headers.content_type,
            "content_encoding": self.headers.content_encoding,
            "cache_control": self.headers.cache_control,
        }


@dataclass
class Manifest:
    """What the bucket holds under the prefix: live files, and objects no longer referenced since when."""

    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    unreferenced: dict[str, str] = field(default_factory=dict)  # path -> ISO time first seen unreferenced
    deployed_at: str | None = None

    def to_json(self) -> str:
        """Serialise (sorted, stable) for storage in the bucket."""
        doc = {
            "version": MANIFEST_VERSION,
            "deployed_at": self.deployed_at,
            "files": dict(sorted(self.files.items())),
            "unreferenced": dict(sorted(self.unreferenced.items())),
        }
        return json.dumps(doc, indent=1, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Parse a stored manifest; raises ValueError on an unknown version or shape."""
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("version") != MANIFEST_VERSION:
            version = doc.get("version") if isinstance(doc, dict) else "?"
            raise ValueError(f"unsupported deploy manifest (version {version})")
        return cls(dict(doc.get("files", {})), dict(doc.get("unreferenced", {})), doc.get("deployed_at"))


@dataclass(frozen=True)
class Action:
    """One step of a deploy: upload a local file, delete an object, or write the manifest."""

    phase: Phase
    path: str
    reason: str  # new, changed, missing (in the manifest but not in the bucket), expired, manifest
    file: LocalFile | None = None

    @property
    def kind(self) -> str:
        """`upload`, `delete` or `manifest`."""
        return "delete" if self.phase == "delete" else "manifest" if self.phase == "manifest" else "upload"


@dataclass
class Plan:
    """Ordered actions, the manifest to write at the end, and what the CDN must forget."""

    actions: list[Action]
    manifest: Manifest
    unchanged: int
    retained: dict[str, datetime]  # unreferenced objects kept until this time
    invalidate: list[str]

    @property
    def uploads(self) -> list[Action]:
        """Upload actions, in order."""
        return [a for a in self.actions if a.kind == "upload"]

    @property
    def deletes(self) -> list[Action]:
        """Delete actions, in order."""
        return [a for a in self.actions if a.kind == "delete"]

    @property
    def upload_bytes(self) -> int:
        """Bytes the uploads will send."""
        return sum(a.file.size for a in self.uploads if a.file is not None)


def phase_of(path: str) -> Phase:
    """The upload phase of a site path (see the module docstring)."""
    if is_immutable(path):
        return "immutable"
    if path.startswith(KEYSLOTS_DIR):
        return "keyslots"
    if is_sitemap(path) or path == "robots.txt":
        return "sitemaps"
    if is_page(path):
        return "pages"
    return "static"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def scan_site(site_dir: Path) -> list[LocalFile]:
    """Every file of a built site that goes to object storage (host files for Pages/Netlify stay behind)."""
    paths = [p for p in sorted(site_files(site_dir)) if p not in HOST_FILES and p != MANIFEST_NAME]
    siblings = set(paths)
    return [
        LocalFile(p, sha256_file(site_dir / p), (site_dir / p).stat().st_size, headers_for(p, siblings)) for p in paths
    ]


def url_paths(path: str) -> list[str]:
    """The URL paths a CDN may have cached a site file under (`a/index.html` is also `/a/`)."""
    out = ["/" + path]
    if path == "index.html" or path.endswith("/index.html"):
        out.insert(0, "/" + path[: -len("index.html")])
    return out


def _parse_time(text: str) -> datetime:
    t = datetime.fromisoformat(text)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def make_plan(
    local: Iterable[LocalFile],
    manifest: Manifest | None,
    remote: Mapping[str, int] | None,
    now: datetime,
    grace: timedelta = DEFAULT_GRACE,
) -> Plan:
    """Compare the site with the bucket's manifest (and its listing: path -> size) and order the work.

    ``remote`` is None when the listing is unknown (a dry run without access); then the manifest is trusted.
    Objects in the bucket that no manifest knows (left by a run that died before writing its manifest) join
    the unreferenced set from ``now`` on, so they too are deleted once the grace period has passed.
    """
    old = manifest or Manifest()
    files = {f.path: f for f in local}
    actions: list[Action] = []
    unchanged = 0
    invalidate: list[str] = []
    for path in sorted(files):
        f = files[path]
        prev = old.files.get(path)
        if prev == f.record() and (remote is None or remote.get(path) == f.size):
            unchanged += 1
            continue
        reason = "new" if prev is None else "changed" if prev != f.record() else "missing"
        actions.append(Action(phase_of(path), path, reason, f))
        # a hashed name is new by construction; anything else may sit in an edge cache (even as a cached 404)
        if not is_immutable(path):
            invalidate.extend(url_paths(path))
    # within a phase, new paths before rewritten ones: a rewritten page may link to a new page, and nothing
    # old links to a new path, so the new one must exist first
    actions.sort(key=lambda a: (PHASES.index(a.phase), a.reason == "changed", a.path))

    now_iso = now.astimezone(UTC).isoformat(timespec="seconds")
    since: dict[str, str] = {}
    for path, first in old.unreferenced.items():
        if path not in files:
            since[path] = first
    for path in old.files:
        if path not in files and path not in since:
            since[path] = now_iso
    for path in remote or {}:
        if path not in files and path not in since and path != MANIFEST_NAME:
            since[path] = now_iso

    retained: dict[str, datetime] = {}
    kept: dict[str, str] = {}
    for path in sorted(since):
        due = _parse_time(since[path]) + grace
        if remote is not None and path not in remote:
            continue  # already gone from the bucket: nothing to delete or remember
        if now >= due:
            actions.append(Action("delete", path, "expired"))
            invalidate.extend(url_paths(path))
        else:
            retained[path] = due
            kept[path] = since[path]

    new_manifest = Manifest({p: f.record() for p, f in sorted(files.items())}, kept, now_iso)
    # a run that changes nothing writes nothing (not even the manifest's time stamp)
    if actions or manifest is None or new_manifest.files != old.files or kept != old.unreferenced:
        actions.append(Action("manifest", MANIFEST_NAME, "manifest"))
    else:
        new_manifest = old
    return Plan(actions, new_manifest, unchanged, retained, sorted(set(invalidate)))


def format_plan(plan: Plan, *, verbose: bool = True) -> str:
    """The plan as text: one line per action, then what stays and the summary."""
    lines: list[str] = []
    if verbose:
        for a in plan.actions:
            if a.file is not None:
                h = a.file.headers
                enc = f", {h.content_encoding}" if h.content_encoding else ""
                lines.append(
                    f"{a.kind:<8} {a.phase:<9} {a.path}  ({a.reason}, {a.file.size} B, {h.content_type}{enc}; "
                    f"{h.cache_control})"
                )
            else:
                lines.append(f"{a.kind:<8} {a.phase:<9} {a.path}  ({a.reason})")
        for path, due in sorted(plan.retained.items()):
            when = due.isoformat(timespec="seconds")
            lines.append(f"retain   grace     {path}  (unreferenced; deletable from {when})")
    lines.append(
        f"plan: {len(plan.uploads)} to upload ({plan.upload_bytes} B), {plan.unchanged} unchanged, "
        f"{len(plan.deletes)} to delete, {len(plan.retained)} kept in grace"
    )
    return "\n".join(lines) + "\n"
