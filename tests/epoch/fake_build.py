"""A built site's paywall files without mkdocs: what `qbank build` leaves for the keyslot step.

Premium sections sealed under a fresh per-build key exactly as ``paywall.encrypt.seal_page`` writes them
(format 1, content-hashed file names), a page per question that names its file and its release, the
build's ``qbank-build.json`` and its sealed key. The keyslot step under test is the real one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from qbank.paywall.recipient import load_public, seal
from qbank.paywall.release import FORMAT, Release, b64

SITE_URL = "https://qbank.example/"

Pages = dict[str, dict[str, str]]  # page path -> section -> HTML


def fake_build(root: Path, pages: Pages, recipient: Path) -> Path:
    """Write ``root/site`` and ``root/.qbank/release/<id>.sealed.json``; returns the sealed file."""
    site = root / "site"
    if site.exists():
        for p in sorted(site.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
    (site / "assets/premium").mkdir(parents=True)
    release = Release.new()
    for page, sections in sorted(pages.items()):
        body = {"v": FORMAT, "release": release.release_id, "page": page, "sections": {}}
        for section, html in sorted(sections.items()):
            nonce, ct = release.seal(html, page, section)
            body["sections"][section] = {"n": b64(nonce), "c": b64(ct)}  # type: ignore[index]
        content = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        name = hashlib.sha256(content).hexdigest()[:20] + ".json"
        (site / "assets/premium" / name).write_bytes(content)
        out = site / page.strip("/") / "index.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        spots = "".join(f'<section class="qb-premium qb-locked" id="qb-premium-{s}" data-qb-section="{s}" '
                        f'data-qb-file="{name}">\n<h2>Section {s}</h2>\n</section>' for s in sorted(sections))
        out.write_text(f'<html><head><meta name="qbank-release" content="{release.release_id}"></head>'
                       f"<body>{spots}</body></html>", "utf-8")
    (site / "index.html").write_text("<html><body>home</body></html>", "utf-8")
    (site / "qbank-build.json").write_text(json.dumps({"format": 1, "release": release.release_id,
                                                      "site_url": SITE_URL}), "utf-8")
    sealed = seal(release.key, release.release_id, SITE_URL, load_public(recipient.read_text("ascii"), "pub"))
    path = root / ".qbank/release" / f"{release.release_id}.sealed.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(sealed.to_json())
    return path


def site_files(site: Path) -> dict[str, bytes]:
    """Every file of a site: path -> bytes."""
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}
