"""The warm check's rules, light enough to run before the command line loads.

What a cached result is tied to (its environment: API version, runtime, device and the wall it ran behind),
when one file's recorded stat still stands for its hash, which files are scripts, and where the index is.
The engine (``engine.verify``) and the console script's fast path (``qbank.entry``) both decide with these
functions, so a no-op ``qbank verify`` answered early applies exactly the engine's rules. This module imports
only ``os``, ``re`` and ``sys`` (``json`` when the index is read): a warm run pays for nothing else.
"""

from __future__ import annotations

import os
import re
import sys

TYPE_CHECKING = False  # typing's own import costs a warm run more than its stats of a hundred files
if TYPE_CHECKING:
    from typing import Any

SCRIPT_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\.py$")
ABSENT = "absent"
RACY_NS = 2_000_000_000
"""A file changed within this window of its hashing may change again within the same mtime tick."""
INDEX_REL = os.path.join(".qbank", "cache", "index.json")
INDEX_VERSION = 4
"""4: an environment is ``[api, runtime, device, wall]`` (3 had no wall)."""
SANDBOX, TRUST_LOCAL = "sandbox", "trust-local"


def wall(trust_local: bool) -> str:
    """What a result ran behind: ``sandbox`` (bubblewrap) or ``trust-local`` (the in-process layers only)."""
    return TRUST_LOCAL if trust_local else SANDBOX


def serves(recorded: list[Any], now: list[Any]) -> bool:
    """Whether a result made in environment ``recorded`` holds for a run in ``now``: the same API, runtime and
    device, and a wall at least as strong. A sandboxed result serves a ``--trust-local`` run; a result made
    without the sandbox never serves a sandboxed run."""
    return len(recorded) == 4 and recorded[:3] == now[:3] and wall_serves(recorded[3], now[3])


def wall_serves(recorded: object, now: str) -> bool:
    """Whether a result made behind wall ``recorded`` (None: not recorded) may serve a run behind ``now``."""
    return recorded == now or (recorded == SANDBOX and now == TRUST_LOCAL)


def stat_holds(row: list[Any], st: os.stat_result) -> bool:
    """Whether a file's ``[size, mtime_ns, sha, hashed_at_ns]`` index row still stands for its hash: the same
    size and mtime, and an mtime older than the hashing by more than the racy window (like git's index)."""
    return bool(row[0] == st.st_size and row[1] == st.st_mtime_ns and st.st_mtime_ns < row[3] - RACY_NS)


def row_ok(row: object, n_envs: int) -> bool:
    """Whether a compact index row has the shape the engine reads: ``[environment number, stats, result, frozen
    path or None]``, each stat ``[size, mtime_ns, sha, hashed_at_ns]`` and the result a mapping with an outcome.
    The index is a file on disk like any other input: a row that fails this is dropped and its script re-runs."""
    if not (isinstance(row, list) and len(row) == 4):
        return False
    env, stats, result, frozen = row
    if type(env) is not int or not 0 <= env < n_envs or not (frozen is None or isinstance(frozen, str)):
        return False
    if not isinstance(result, dict) or not isinstance(result.get("outcome"), str) or not isinstance(stats, dict):
        return False
    return all(
        isinstance(rel, str) and isinstance(st, list) and len(st) == 4 and type(st[0]) is int
        and type(st[1]) is int and isinstance(st[2], str) and type(st[3]) is int
        for rel, st in stats.items()
    )


def script_names(folder: str) -> list[str]:
    """The script file names in ``verify/`` (``_`` folders and files are shared code), sorted; [] without one."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(name for name in names if SCRIPT_RE.match(name))


def version_from_path(package: str, file: str) -> str | None:
    """``__version__`` from ``<sys.path entry>/<package>/<file>``, found by a stat per ``sys.path`` folder
    (the import system's search lists every folder of site-packages); None when no such file exists."""
    for entry in sys.path:
        path = os.path.join(entry or ".", package, file)
        if os.path.isfile(path):
            return version_in(path)
    return None


def version_in(path: str) -> str:
    """``__version__ = '...'`` of one Python file; ``unknown`` when it has none or cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return "unknown"
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return m.group(1) if m else "unknown"


def runtime_label(torch: str, triton: str) -> str:
    """What the cache key records of the numerical runtime: torch's version joined by Triton's
    (``2.13.0 triton 3.9.0``); a Triton upgrade re-runs every script like a torch upgrade does."""
    return f"{torch} triton {triton}"


def pick_device(want: str, fake_cuda: str | None, torch: str) -> str | None:
    """cpu or cuda for ``--device want``; ``auto`` picks cuda when an NVIDIA driver and a CUDA build of torch
    (``torch``: its version) are present; None when cuda is asked for and there is none."""
    has_cuda = bool(fake_cuda) or (os.path.exists("/proc/driver/nvidia/version") and not torch.endswith("+cpu"))
    if want == "cuda" and not has_cuda:
        return None
    if want == "auto":
        return "cuda" if has_cuda else "cpu"
    return want


def read_index(root: str) -> tuple[list[Any], dict[str, Any]] | None:
    """The index's environments and rows, or None when it is missing, unreadable or of another version."""
    import json

    try:
        with open(os.path.join(root, INDEX_REL), "rb") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return None
    envs, rows = data.get("envs"), data.get("rows")
    if not isinstance(envs, list) or not isinstance(rows, dict):
        return None
    return envs, rows


def no_op_outcomes(root: str, env: list[Any], index: tuple[list[Any], dict[str, Any]]) -> dict[str, int] | None:
    """Outcome counts when a run of every script in ``root`` (environment ``env``) would execute nothing, write
    nothing and report no problem; None when anything needs the engine (a stale, new, deleted or timed-out
    script, a touched file to re-hash, a result with problems)."""
    envs, rows = index
    names = script_names(os.path.join(root, "verify"))
    if len(names) != len(rows):  # a new script, or a deleted one whose row the engine drops
        return None
    good = {i for i, recorded in enumerate(envs) if isinstance(recorded, list) and serves(recorded, now=env)}
    prefix = root + os.sep
    seen: dict[str, str] = {}
    """rel -> the hash its stat stands for; a file several rows share must have the same hash in each (a
    script that did not re-run after a shared module changed keeps the old hash in its row)."""
    counts: dict[str, int] = {}
    for name in names:
        row = rows.get(name[:-3])
        if not isinstance(row, list) or len(row) != 4 or row[0] not in good:
            return None
        try:  # a malformed row is the engine's to drop (``row_ok``); checking each here would cost the warm run
            stats, result = row[1], row[2]
            outcome = result.get("outcome")
            if outcome == "timeout" or result.get("problems") or not isinstance(outcome, str):
                return None
            for rel, recorded in stats.items():
                sha = seen.get(rel)
                if sha is None:
                    try:
                        st = os.stat(prefix + rel)
                    except OSError:
                        if recorded[2] != ABSENT:
                            return None
                    else:
                        if not stat_holds(recorded, st):
                            return None
                    sha = seen[rel] = recorded[2]
                elif sha != recorded[2]:
                    return None
        except (AttributeError, TypeError, IndexError, KeyError, ValueError):
            return None
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts
