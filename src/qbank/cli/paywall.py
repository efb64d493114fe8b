"""``qbank paywall``: operator tools for the encrypted premium layer (decrypt, keygen, keyslots, refresh)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from .common import EXIT_CONTENT, EXIT_INTERNAL, EXIT_OK, UsageError, parse_date

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``paywall`` and its actions to the subcommands."""
    pw = sub.add_parser("paywall", help="operator tools for the encrypted premium layer")
    psub = pw.add_subparsers(dest="action", metavar="ACTION")
    psub.required = True
    p = psub.add_parser("decrypt", parents=[common], help="print a built page's premium sections, opened with a key")
    p.add_argument("--key", required=True, help="a license key")
    p.add_argument("page_url", metavar="PAGE_URL", help="the page's URL or path, e.g. /questions/slug/")
    p.add_argument("--site-dir", default=None, help="the built site (default: site/)")
    p.set_defaults(func=cmd_paywall_decrypt)
    p = psub.add_parser("keygen", parents=[common], help="make a release identity (X25519) and its public key")
    p.add_argument("--out", required=True, help="private key file to write (0600); the public key goes to OUT.pub")
    p.set_defaults(func=cmd_paywall_keygen)
    p = psub.add_parser("keyslots", parents=[common], help="deploy job: write the keyslots of a built site")
    p.add_argument("--site", default="site", help="the built site (default: site/)")
    p.add_argument("--release", required=True, metavar="FILE", help="the build's .sealed.json")
    p.add_argument("--ledger", required=True, metavar="LOCATION", help="the license ledger (path or s3://)")
    p.add_argument("--endpoint-url", default=None, help="S3 endpoint of a bucket ledger")
    p.add_argument("--today", default=None, help="the day licenses are judged on (default: today)")
    p.add_argument("--epoch", default=None, metavar="LOCATION",
                   help="the epoch's record (path or s3://private-bucket/key; default: epoch.json beside --release)")
    p.add_argument("--epoch-max-days", type=int, default=30,
                   help="begin a new epoch when the current one is this old (default 30)")
    p.add_argument("--block", type=int, default=16, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_paywall_keyslots)
    p = psub.add_parser("refresh", parents=[common], help="scheduled: upload the live release's changed keyslots")
    p.add_argument("--target", required=True, help="the public site: s3://bucket/prefix")
    p.add_argument("--private", required=True, help="where sealed releases are kept: s3://private-bucket/prefix")
    p.add_argument("--ledger", required=True, metavar="LOCATION", help="the license ledger (path or s3://)")
    p.add_argument("--endpoint-url", default=None, help="S3 endpoint of a non-AWS store")
    p.add_argument("--region", default=None, help="region (default: from the AWS environment)")
    p.add_argument("--today", default=None, help="the day licenses are judged on (default: today)")
    p.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    p.add_argument("--epoch", default=None, metavar="LOCATION",
                   help="the epoch's record, which gets the readers let in (default: epoch.json under --private)")
    p.set_defaults(func=cmd_paywall_refresh)


def _configured_site_url(root: Path) -> str:
    """mkdocs.yml's ``site_url`` as mkdocs resolves it (``!ENV [QBANK_SITE_URL, default]`` included)."""
    config = root / "mkdocs.yml"
    if not config.exists():
        return "/"
    from mkdocs.config import load_config

    return str(load_config(str(config)).get("site_url") or "/")


def cmd_paywall_decrypt(args: argparse.Namespace) -> int:
    """Recover a built page's premium sections with a license key, as a reader's browser would."""
    from ..paywall.decrypt import DecryptError, decrypt_page
    from ..paywall.keys import KeyFormatError

    root = Path(args.root).resolve()
    site = Path(args.site_dir).resolve() if args.site_dir else root / "site"
    base = urlparse(_configured_site_url(root)).path
    try:
        opened = decrypt_page(site, args.page_url, args.key, base or "/")
    except (KeyFormatError, DecryptError) as exc:
        sys.stderr.write(f"qbank: error: {args.page_url}: {exc}\n")
        return EXIT_CONTENT
    for sec in opened:
        print(f"<!-- section {sec.section}: {sec.heading} -->\n{sec.html}")
    return EXIT_OK


def cmd_paywall_keygen(args: argparse.Namespace) -> int:
    """Make a release identity (X25519): the private key file (0600) and its public key next to it."""
    from ..paywall.recipient import SealError, keygen

    try:
        private, public, text = keygen(Path(args.out).expanduser())
    except SealError as exc:
        raise UsageError(str(exc)) from None
    print(f"release identity (secret, keep it in the deploy environment only): {private}")
    print(f"recipient public key (commit it; extra.paywall.recipient): {public}")
    print(text, end="")
    return EXIT_OK


def _identity() -> X25519PrivateKey:
    from ..paywall.recipient import SealError, identity_from_env

    try:
        return identity_from_env()
    except SealError as exc:
        raise UsageError(str(exc)) from None


def cmd_paywall_keyslots(args: argparse.Namespace) -> int:
    """Deploy job: unseal the release key, read the ledger, write the site's keyslot files."""
    import datetime as dt

    from ..paywall.keyslots import KeyslotError, run_keyslots
    identity = _identity()
    today = parse_date(args.today) if args.today else dt.date.today()
    if args.epoch_max_days < 1:
        raise UsageError("--epoch-max-days must be at least 1")
    try:
        slots = run_keyslots(Path(args.site).resolve(), Path(args.release), identity, args.ledger, today,
                             endpoint_url=args.endpoint_url, block=args.block, epoch=args.epoch,
                             max_age=dt.timedelta(days=args.epoch_max_days))
    except (KeyslotError, ValueError) as exc:
        sys.stderr.write(f"qbank: error: keyslots: {exc}\n")
        return EXIT_CONTENT
    size = sum(len(b) for b in slots.files.values())
    said = f"new epoch ({slots.rekeyed})" if slots.rekeyed else "epoch continues"
    print(f"keyslots: epoch {slots.release_id}: {said}; {slots.sections} premium sections sealed under it")
    print(f"keyslots: release {slots.release_id}, {len(slots.files)} shard files ({size} B) under "
          f"assets/keyslots/{slots.release_id}/: {slots.active} licenses open it, {slots.ended} ended")
    return EXIT_OK


def cmd_paywall_refresh(args: argparse.Namespace) -> int:
    """Scheduled: recompute the live release's keyslots from the ledger and upload only what changed."""
    import datetime as dt

    from botocore.exceptions import BotoCoreError, ClientError

    from ..deploy import format_plan, make_client, parse_target
    from ..paywall.keyslots import KeyslotError
    from ..paywall.refresh import refresh

    identity = _identity()
    try:
        public, private = parse_target(args.target), parse_target(args.private)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    today = parse_date(args.today) if args.today else dt.date.today()
    try:
        run = refresh(make_client(args.endpoint_url, args.region), public, private, identity, args.ledger, today,
                      endpoint_url=args.endpoint_url, dry_run=args.dry_run, epoch=args.epoch)
    except KeyslotError as exc:
        sys.stderr.write(f"qbank: error: refresh: {exc}\n")
        return EXIT_CONTENT
    except (BotoCoreError, ClientError) as exc:
        sys.stderr.write(f"qbank: refresh failed: {type(exc).__name__}: {exc}\n")
        return EXIT_INTERNAL
    print(f"refresh: release {run.release_id}: {run.slots.active} licenses open it, {run.slots.ended} ended")
    print(format_plan(run.plan, verbose=args.dry_run or args.verbose), end="")
    print(f"invalidate ({len(run.plan.invalidate)}):" + "".join("\n  " + p for p in run.plan.invalidate))
    print("dry run: nothing was changed" if run.result is None else run.result.summary())
    return EXIT_OK
