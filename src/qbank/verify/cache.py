"""Cache keys: a content hash of everything that can change a script's result, and why a key changed.

The key covers the script's bytes, the repository files it imported or read (recorded at run time by
the launcher), the API version, the torch and Triton versions, the device class and the wall the script ran
behind (``sandbox`` or ``trust-local``: a result made without the sandbox never serves a sandboxed run); for
scripts that needed a GPU it also covers their frozen result file. A file whose size and mtime match the last
hashing reuses that hash (like git's index); the key itself stays a content hash.
"""

from __future__ import annotations

import importlib.util
import os
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .warm import ABSENT, SANDBOX, TRUST_LOCAL, runtime_label, stat_holds, version_from_path, version_in


def _sha256() -> Any:
    import hashlib  # OpenSSL start-up costs more than a warm run's whole check; import on first hash

    return hashlib.sha256()


def sha_file(path: Path) -> str:
    """SHA-256 of a file's bytes, or ``absent``."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return ABSENT
    h = _sha256()
    h.update(data)
    return str(h.hexdigest())


def _version_of(package: str, file: str) -> str:
    """``__version__`` of an installed package, read from one of its files without importing it.

    The file is looked for in each ``sys.path`` folder first (a few stats: the import system's search lists
    every folder of site-packages, a tenth of a warm ``qbank verify``), then through the import system."""
    found = version_from_path(package, file)
    if found is not None:
        return found
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return "none"
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, file)
        if os.path.isfile(path):
            return version_in(path)
    return "unknown"


@cache
def torch_version() -> str:
    """The installed torch version, read from ``torch/version.py`` without importing torch."""
    return _version_of("torch", "version.py")


@cache
def triton_version() -> str:
    """The installed Triton version, read from ``triton/__init__.py`` without importing triton."""
    return _version_of("triton", "__init__.py")


def runtime_version() -> str:
    """What the cache key records of the numerical runtime (``warm.runtime_label``)."""
    return runtime_label(torch_version(), triton_version())


@dataclass
class Hasher:
    """Hashes files under a root, reusing hashes whose (size, mtime) are unchanged since last time."""

    root: Path
    known: dict[str, list[Any]] = field(default_factory=dict)
    """rel path -> [size, mtime_ns, sha, hashed_at_ns] from the index."""
    fresh: dict[str, list[Any]] = field(default_factory=dict)
    hashed: int = 0
    """How many files were read and hashed (0 on a warm run whose stats all held)."""
    changed: set[str] = field(default_factory=set)
    """Files whose index row changed (rehashed, or missing)."""

    def __post_init__(self) -> None:
        self._prefix = str(self.root) + os.sep  # plain strings: pathlib costs more than the stat itself

    def sha(self, rel: str, old: list[Any] | None = None) -> str:
        """The file's content hash (``absent`` when missing); ``old`` is its last index row, if known."""
        fresh = self.fresh.get(rel)
        if fresh is not None:
            return str(fresh[2])
        try:
            st = os.stat(self._prefix + rel)
        except OSError:
            self.fresh[rel] = [-1, -1, ABSENT, 0]
            self.changed.add(rel)
            return ABSENT
        if old is None:
            old = self.known.get(rel)
        if old and stat_holds(old, st):
            self.fresh[rel] = old
            return str(old[2])
        digest = sha_file(Path(self._prefix + rel))
        self.hashed += 1
        self.changed.add(rel)
        self.fresh[rel] = [st.st_size, st.st_mtime_ns, digest, time.time_ns()]
        return digest

    def unchanged(self, stats: dict[str, list[Any]]) -> bool:
        """True when every file of an index row still has the hash recorded there (the warm path)."""
        return all(self.sha(rel, row) == row[2] for rel, row in stats.items())

    def stats(self, rels: list[str]) -> dict[str, list[Any]]:
        """Index rows for these files (hashing any not hashed yet)."""
        for rel in rels:
            self.sha(rel)
        return {rel: self.fresh[rel] for rel in rels}


def input_hash(script_sha: str, deps: dict[str, str], api: int) -> str:
    """The hash of a script's inputs alone: what a frozen GPU result is tied to (no torch, no device)."""
    h = _sha256()
    h.update(f"api={api}\nscript={script_sha}\n".encode())
    for rel in sorted(deps):
        h.update(f"{rel}={deps[rel]}\n".encode())
    return str(h.hexdigest())


def cache_key(inputs: dict[str, Any]) -> str:
    """The cache key: the input hash with the runtime version, device class, wall and frozen-file hash."""
    h = _sha256()
    for k in ("input_hash", "torch", "device", "wall", "frozen"):
        h.update(f"{k}={inputs.get(k)}\n".encode())
    return str(h.hexdigest())


MAX_FILES_NAMED = 5
"""A reason names at most this many changed files (the last place counts the others)."""


def reasons(old: dict[str, Any] | None, new: dict[str, Any], script_rel: str) -> list[str]:
    """Why a cached result no longer holds: 'script changed', 'verify/_lib/x.py changed', 'torch a -> b'."""
    if old is None:
        return ["no cached result"]
    out: list[str] = []
    if old.get("script") != new.get("script"):
        out.append("script changed")
    old_deps, new_deps = old.get("deps", {}), new.get("deps", {})
    files = [
        f"{rel} removed" if new_deps.get(rel) == ABSENT else f"{rel} changed"
        for rel in sorted(set(old_deps) | set(new_deps))
        if rel != script_rel and old_deps.get(rel) != new_deps.get(rel)
    ]
    # a new virtual environment changes hundreds of files a script read: name a few and count the rest
    out += files if len(files) <= MAX_FILES_NAMED else [*files[:MAX_FILES_NAMED - 1],
                                                         f"{len(files) - MAX_FILES_NAMED + 1} more files"]
    for label, k in (("API", "api"), ("torch", "torch"), ("device", "device")):
        if old.get(k) != new.get(k):
            out.append(f"{label} {old.get(k)} -> {new.get(k)}")
    if old.get("wall") != new.get("wall") and not (old.get("wall") == SANDBOX and new.get("wall") == TRUST_LOCAL):
        out.append(f"sandbox {old.get('wall') or 'unrecorded'} -> {new.get('wall')}")
    if old.get("frozen") != new.get("frozen"):
        out.append("frozen GPU result changed")
    return out
