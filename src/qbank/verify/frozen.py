"""Frozen GPU results: kernel checks run on CUDA are written to ``verify/_frozen/<slug>.json`` (tracked),
with the input hash and a device stamp, and signed (Ed25519) by the GPU runner's key. A machine without a
GPU accepts one only when its signature verifies under a public key committed in ``verify/_keys/`` and the
input hash matches. The trusted keys are those files and nothing else (no option or variable names others).

Signed file: every field, plus ``key_id``; ``signature`` (base64) is over the canonical JSON of all the
other fields (sorted keys, no spaces, UTF-8). Codes: ``verify-frozen-unsigned``, ``verify-frozen-unknown-key``,
``verify-frozen-bad-signature`` (tampered, or signed for another slug), ``verify-frozen-no-key`` (a GPU run
with no signing key: nothing is frozen) -- all errors, never a pass.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import write_atomic
from ..problems import Problem, error, warning
from .store import read_json

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

FROZEN_DIR = "verify/_frozen"
KEYS_DIR = "verify/_keys"
SIGNING_ENV = "QBANK_GPU_SIGNING_KEY"
"""Path of the GPU runner's private key (PEM, mode 0600); only the freezing side reads it."""


FROZEN_FIELDS = frozenset(
    {"name", "ok", "line", "rtol", "atol", "max_abs_err", "dtype", "seconds"}
    # Triton kernels: where and how they ran, and on a GPU the measured time, bandwidth and fraction of peak
    | {"kind", "path", "device_name", "matched", "expect_mismatch", "bytes_moved", "flops", "timing"}
)
"""The fields of a CUDA kernel entry that a frozen result keeps (all covered by the signature)."""


class FreezeError(ValueError):
    """A GPU run cannot be frozen: no signing key, or one that is unreadable or too widely readable."""


def canonical(data: dict[str, Any]) -> bytes:
    """The bytes a signature covers."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def key_id(public: Ed25519PublicKey) -> str:
    """A key's id: the first 16 hex digits of the SHA-256 of its raw public bytes."""
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def trusted_keys(root: Path) -> dict[str, Ed25519PublicKey]:
    """The committed public keys ``verify/_keys/<key-id>.pub`` (PEM) whose name matches their id."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    out: dict[str, Ed25519PublicKey] = {}
    base = root / KEYS_DIR
    for path in sorted(base.glob("*.pub")) if base.is_dir() else []:
        try:
            key = serialization.load_pem_public_key(path.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(key, Ed25519PublicKey) and key_id(key) == path.stem:
            out[path.stem] = key
    return out


def load_signing_key(path: str | None) -> Ed25519PrivateKey:
    """The private key at ``path`` ($QBANK_GPU_SIGNING_KEY); refused when missing or readable by others."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not path:
        raise FreezeError(f"no signing key: set {SIGNING_ENV} to the GPU runner's private key (qbank gpu-keygen)")
    try:
        mode = os.stat(path).st_mode
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FreezeError(f"{SIGNING_ENV}: cannot read the signing key ({exc.strerror})") from exc
    if mode & 0o077:
        raise FreezeError(f"{SIGNING_ENV}: the signing key is readable by others (mode {mode & 0o777:o}; want 600)")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise FreezeError(f"{SIGNING_ENV}: not a PEM private key") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise FreezeError(f"{SIGNING_ENV}: not an Ed25519 key")
    return key


def sign(data: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """``data`` with ``key_id`` and the ``signature`` over everything else."""
    body = {k: v for k, v in data.items() if k != "signature"}
    body["key_id"] = key_id(key.public_key())
    return {**body, "signature": base64.b64encode(key.sign(canonical(body))).decode()}


def generate_key(out: Path, root: Path) -> tuple[str, Path]:
    """A new signing key: the private key to ``out`` (0600, never overwritten) and the public key to commit
    at ``verify/_keys/<key-id>.pub``; returns the key id and the public key's path."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    kid = key_id(key.public_key())
    pub = root / KEYS_DIR / f"{kid}.pub"
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # FileExistsError: refuse to overwrite
    try:
        os.write(fd, pem)
    finally:
        os.close(fd)
    pub.parent.mkdir(parents=True, exist_ok=True)
    pub.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return kid, pub


def check_signature(root: Path, slug: str, frozen: dict[str, Any]) -> Problem | None:
    """None when ``frozen`` is signed by a committed key, for this slug, and untouched since."""
    from cryptography.exceptions import InvalidSignature

    rel = frozen_rel(slug)
    sig, kid = frozen.get("signature"), frozen.get("key_id")
    if not isinstance(sig, str) or not isinstance(kid, str):
        return error(
            rel,
            1,
            1,
            "verify-frozen-unsigned",
            "unsigned frozen GPU result: only the GPU runner's signed results count",
        )
    key = trusted_keys(root).get(kid)
    if key is None:
        return error(
            rel, 1, 1, "verify-frozen-unknown-key", f"signed by key {kid!r}, which is not committed in {KEYS_DIR}/"
        )
    body = {k: v for k, v in frozen.items() if k != "signature"}
    try:
        key.verify(base64.b64decode(sig, validate=True), canonical(body))
    except (InvalidSignature, ValueError):
        return error(
            rel,
            1,
            1,
            "verify-frozen-bad-signature",
            f"the signature of key {kid!r} does not match the file (edited after signing)",
        )
    if frozen.get("slug") != slug:
        return error(rel, 1, 1, "verify-frozen-bad-signature", f"signed for {frozen.get('slug')!r}, not for {slug!r}")
    return None


def frozen_rel(slug: str) -> str:
    """Repository-relative path of a script's frozen GPU result."""
    return f"{FROZEN_DIR}/{slug}.json"


def freeze(
    root: Path,
    slug: str,
    input_hash: str,
    stamp: dict[str, Any],
    kernels: list[dict[str, Any]],
    when: str,
    key_path: str | None = None,
) -> str:
    """Sign and write the CUDA kernel results of a run; returns the path written (relative).

    Raises :class:`FreezeError` (nothing written) without a usable signing key at ``key_path``.
    """
    key = load_signing_key(key_path)
    rel = frozen_rel(slug)
    data = {
        "slug": slug,
        "input_hash": input_hash,
        "ran_at": when,
        "stamp": stamp,
        "kernels": [
            {
                k: v
                for k, v in kern.items()
                if k in FROZEN_FIELDS
            }
            for kern in kernels
            if kern.get("device") == "cuda"
        ],
    }
    write_atomic(root / rel, _pretty(sign(data, key)).encode("utf-8"))  # tracked: keep it diff-friendly
    return rel


def _pretty(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def resolve(
    root: Path, slug: str, rel: str, record: dict[str, Any], input_hash: str
) -> tuple[str | None, list[Problem], list[dict[str, Any]]]:
    """For kernel checks skipped for want of CUDA: the outcome they imply (None: no effect), problems, stamps."""
    skipped = [k for k in record.get("kernels", []) if k.get("needs_gpu")]
    if not skipped:
        return None, [], []
    frozen = read_json(root / frozen_rel(slug))
    problems: list[Problem] = []
    stamps: list[dict[str, Any]] = []
    if not isinstance(frozen, dict):
        for k in skipped:
            problems.append(
                warning(
                    rel,
                    int(k.get("line", 0)),
                    0,
                    "verify-needs-gpu",
                    f"kernel check {k['name']!r} needs a GPU and {frozen_rel(slug)} does not exist; "
                    "run `qbank verify --device cuda` on a GPU and commit the frozen file",
                )
            )
        return "needs-gpu", problems, stamps
    bad = check_signature(root, slug, frozen)
    if bad is not None:
        return "error", [bad], stamps
    by_name = {k["name"]: k for k in frozen.get("kernels", [])}
    stale = frozen.get("input_hash") != input_hash
    outcome: str | None = None
    for k in skipped:
        got = by_name.get(k["name"])
        stamp = {
            "name": k["name"],
            "line": k.get("line", 0),
            "device": "cuda",
            "ran_at": frozen.get("ran_at"),
            "stamp": frozen.get("stamp"),
            "frozen": True,
            "stale": stale,
            "ok": got.get("ok") if got else None,
        }
        stamps.append(stamp)
        line = int(k.get("line", 0))
        gpu = (frozen.get("stamp") or {}).get("gpu", "a GPU")
        if stale or got is None:
            why = "stale: needs a GPU re-run" if stale else f"no frozen result for kernel {k['name']!r}"
            problems.append(
                warning(
                    rel,
                    line,
                    0,
                    "verify-frozen-stale",
                    f"{why} ({frozen_rel(slug)} was frozen on {gpu} at {frozen.get('ran_at')} for other inputs)"
                    if stale
                    else why,
                )
            )
            outcome = "needs-gpu"
        elif not got.get("ok"):
            problems.append(
                error(
                    rel,
                    line,
                    0,
                    "verify-check-failed",
                    f"kernel {k['name']!r} failed on {gpu} (frozen {frozen.get('ran_at')})",
                )
            )
            outcome = outcome or "fail"
    return outcome, problems, stamps
