"""Turn a build's ciphertext (per-build release key) into the epoch's (stable across builds).

The build never holds the epoch key: it seals premium sections under a fresh per-build key, sealed to
the release identity as before (``paywall.site``). The deploy job's keyslot step, which holds the
identity and runs no content code, opens each section with that key in memory and seals it again under
the epoch (``sections.seal_section``), deterministically: a section whose text did not change gets the
same bytes, its page's ciphertext file the same name, and the page the same HTML. What it rewrites:

- ``assets/premium/<hash>.json``: format 2, ``release`` = the epoch id, named by the hash of the new body;
- each page's ``data-qb-file="..."`` and ``<meta name="qbank-release" content="...">``;
- ``qbank-build.json``'s ``release`` (the refresh and the deploy find the epoch's sealed key by it).

Afterwards no file of the site names the build's release id (checked: a forgotten reference is an error).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag

from ..paywall.release import FORMAT as BUILD_FORMAT
from ..paywall.release import b64, open_fragment, unb64
from .sections import FORMAT, SealedSection, open_section, seal_section

PREMIUM_DIR = "assets/premium"
SLOT_DIR = "assets/keyslots"
BUILD_INFO = "qbank-build.json"
FILE_ATTR = re.compile(r'data-qb-file="([0-9a-f]{20}\.json)"')


class ResealError(ValueError):
    """The site's ciphertext cannot be moved to the epoch; nothing was written."""


@dataclass(frozen=True)
class Resealed:
    """What a reseal did: files renamed (old -> new), pages rewritten, sections sealed."""

    renamed: dict[str, str]
    pages: int
    sections: int


def body_of(epoch_id: str, page: str, sections: dict[str, SealedSection]) -> bytes:
    """A page's ciphertext file under the epoch (sorted, compact: equal inputs, equal bytes)."""
    doc = {
        "v": FORMAT,
        "release": epoch_id,
        "page": page,
        "sections": {s: {"d": x.d, "n": b64(x.nonce), "c": b64(x.ciphertext)} for s, x in sorted(sections.items())},
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def file_name(body: bytes) -> str:
    """The content-hashed name of a ciphertext file."""
    return hashlib.sha256(body).hexdigest()[:20] + ".json"


def reseal_body(raw: bytes, build_key: bytes, build_id: str, epoch_key: bytes, epoch_id: str, where: str) -> bytes:
    """One build ciphertext file sealed again under the epoch (pure)."""
    try:
        doc = json.loads(raw)
        if doc.get("v") not in (BUILD_FORMAT, FORMAT) or doc.get("release") != build_id:
            raise ResealError(f"{where}: not a ciphertext file of build {build_id}")
        page = str(doc["page"])
        out: dict[str, SealedSection] = {}
        for section, sec in doc["sections"].items():
            if doc["v"] == FORMAT:  # a site already under an epoch (the step run again, or a re-key without a build)
                sealed = SealedSection(sec["d"], unb64(sec["n"]), unb64(sec["c"]))
                plain = open_section(build_key, page, section, sealed)
            else:
                plain = open_fragment(build_key, unb64(sec["n"]), unb64(sec["c"]), page, section)
            out[section] = seal_section(epoch_key, page, section, plain)
    except InvalidTag:
        raise ResealError(f"{where}: a section fails authentication under the build's key") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        if isinstance(exc, ResealError):
            raise
        raise ResealError(f"{where}: malformed ciphertext file ({type(exc).__name__})") from None
    return body_of(epoch_id, page, out)


def rewrite_page(text: str, renamed: dict[str, str], build_id: str, epoch_id: str) -> str:
    """A page pointing at the epoch's files and naming the epoch (pure)."""
    def name(m: re.Match[str]) -> str:
        return f'data-qb-file="{renamed.get(m.group(1), m.group(1))}"'

    text = FILE_ATTR.sub(name, text)
    return text.replace(f'<meta name="qbank-release" content="{build_id}">',
                        f'<meta name="qbank-release" content="{epoch_id}">')


@dataclass(frozen=True)
class ResealPlan:
    """Every byte a reseal will write, computed before anything is written."""

    site: Path
    build_id: str
    epoch_id: str
    olds: list[Path]
    new_files: dict[str, bytes]
    pages: dict[Path, str]
    info: str
    done: Resealed


def plan_reseal(site: Path, build_key: bytes, build_id: str, epoch_key: bytes, epoch_id: str) -> ResealPlan:
    """Compute the move of every premium file and page of a built site from the build's key to the epoch's.

    The "build" may also be an earlier epoch (``build_key`` its key): the step run again on its own output
    gives the same bytes, and a re-key without a new build moves the site to the new epoch. Reads only.
    """
    premium = site / PREMIUM_DIR
    olds = sorted(premium.glob("*.json")) if premium.is_dir() else []
    new_files: dict[str, bytes] = {}
    renamed: dict[str, str] = {}
    sections = 0
    for path in olds:
        body = reseal_body(path.read_bytes(), build_key, build_id, epoch_key, epoch_id, f"{PREMIUM_DIR}/{path.name}")
        renamed[path.name] = file_name(body)
        new_files[renamed[path.name]] = body
        sections += len(json.loads(body)["sections"])
    pages: dict[Path, str] = {}
    for page in sorted(site.rglob("*.html")):
        text = page.read_text("utf-8")
        new = rewrite_page(text, renamed, build_id, epoch_id)
        if new != text:
            pages[page] = new
    info_path = site / BUILD_INFO
    info = json.loads(info_path.read_text("utf-8"))
    if info.get("release") != build_id:
        raise ResealError(f"{BUILD_INFO} names release {info.get('release')}, not the build's {build_id}")
    info["release"] = epoch_id
    return ResealPlan(site, build_id, epoch_id, olds, new_files, pages,
                      json.dumps(info, sort_keys=True, indent=1) + "\n", Resealed(renamed, len(pages), sections))


def apply_reseal(plan: ResealPlan) -> Resealed:
    """Write what :func:`plan_reseal` computed; a :class:`ResealError` if a file still names the build."""
    site, build_id, epoch_id = plan.site, plan.build_id, plan.epoch_id
    for path in plan.olds:
        path.unlink()
    for name, body in plan.new_files.items():
        (site / PREMIUM_DIR / name).write_bytes(body)
    for page, text in plan.pages.items():
        page.write_text(text, "utf-8")
    (site / BUILD_INFO).write_text(plan.info, encoding="utf-8")
    stale_slots = site / SLOT_DIR / build_id
    if build_id != epoch_id and stale_slots.is_dir():  # an earlier epoch's slots: the bucket keeps them in grace
        shutil.rmtree(stale_slots)
    needle = build_id.encode()
    left = [p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file() and needle in p.read_bytes()]
    if left and build_id != epoch_id:
        raise ResealError(f"{left[0]} still names the build's release {build_id} after the reseal")
    return plan.done


def reseal_site(site: Path, build_key: bytes, build_id: str, epoch_key: bytes, epoch_id: str) -> Resealed:
    """Move every premium file and page of a built site from the build's key to the epoch's: all new bytes
    are computed first (:func:`plan_reseal`); files are written only when every one of them was computed."""
    return apply_reseal(plan_reseal(site, build_key, build_id, epoch_key, epoch_id))
