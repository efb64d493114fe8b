"""``qbank build``: check, then build the site into ``site/``."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .common import EXIT_CONTENT, TRUST_HELP, emit, repo_root, trust_local

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``build`` to the subcommands."""
    p = sub.add_parser("build", parents=[common], help="check, then build the site into site/")
    p.add_argument("--trust-local", action="store_true", help=TRUST_HELP)
    p.add_argument("--site-dir", default=None, help="output folder (default: site/)")
    p.add_argument("--no-links", action="store_true", help="skip linkchecker over the built site (other checks run)")
    p.add_argument("--recipient", default=None, metavar="PUBFILE",
                   help="seal the release key to this public key (default: extra.paywall.recipient; "
                        "$QBANK_RELEASE_RECIPIENT)")
    p.set_defaults(func=cmd_build)


def cmd_build(args: argparse.Namespace) -> int:
    """Check, then build the site into ``site/`` (replaced whole, or left as it was on failure)."""
    from ..build import build_site

    root = repo_root(args)
    if args.recipient:  # the hooks run in this process and read the recipient from the environment
        os.environ["QBANK_RELEASE_RECIPIENT"] = str(Path(args.recipient).expanduser().resolve())
    site_dir = Path(args.site_dir).resolve() if args.site_dir else None
    result = build_site(root, site_dir, links=not args.no_links, trust_local=trust_local(args))
    code = emit(result.report, args)
    if result.site_dir is not None and args.format != "json":
        print(f"built {result.site_dir.relative_to(root) if result.site_dir.is_relative_to(root) else result.site_dir}")
        if result.cards is not None:
            drawn = result.cards.drawn
            print(f"social cards: {drawn} drawn, {result.cards.cards - drawn} from the card store (.qbank/cards)")
        release = _built_release(result.site_dir)
        sealed = root / ".qbank" / "release" / f"{release}.sealed.json" if release else None
        if sealed is not None and sealed.is_file():
            print(f"release {release} sealed to the recipient: {sealed.relative_to(root)}")
    return code if result.site_dir is not None or code else EXIT_CONTENT


def _built_release(site: Path) -> str | None:
    import json

    try:
        doc = json.loads((site / "qbank-build.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    release = doc.get("release") if isinstance(doc, dict) else None
    return release if isinstance(release, str) and re.fullmatch(r"[0-9a-f]+", release) else None
