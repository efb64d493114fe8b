"""``qbank deploy``: upload the built site to S3-compatible storage."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import EXIT_CONTENT, EXIT_INTERNAL, EXIT_OK, UsageError

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``deploy`` to the subcommands."""
    p = sub.add_parser("deploy", parents=[common], help="upload site/ to S3-compatible storage")
    p.add_argument("--target", required=True, help="s3://bucket/prefix")
    p.add_argument("--endpoint-url", default=None, help="S3 endpoint of a non-AWS store (R2, MinIO)")
    p.add_argument("--region", default=None, help="region (default: from the AWS environment)")
    p.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    p.add_argument("--site-dir", default=None, help="built site folder (default: site/)")
    p.add_argument("--grace-days", type=float, default=7.0, help="keep unreferenced objects this long (default 7)")
    p.add_argument("--jobs", type=int, default=8, help="parallel uploads within a phase (default 8)")
    p.add_argument("--invalidations", default=None, metavar="FILE", help="also write the paths to invalidate here")
    p.add_argument("--release", default=None, metavar="FILE", help="the build's sealed release, kept under --private")
    p.add_argument("--private", default=None, metavar="S3URL", help="s3://private-bucket/prefix for --release")
    p.add_argument("--site-url", default=None, help="refuse a site built for another URL (default: $QBANK_SITE_URL)")
    p.set_defaults(func=cmd_deploy)


def cmd_deploy(args: argparse.Namespace) -> int:
    """Upload the built site to S3-compatible storage: changed files only, in a reader-safe order."""
    import json
    from datetime import UTC, datetime, timedelta

    from botocore.exceptions import BotoCoreError, ClientError

    from ..deploy import S3Store, execute, format_plan, make_client, parse_target, plan_deploy, scan_site

    site = Path(args.site_dir or Path(args.root) / "site").resolve()
    if not (site / "index.html").is_file():
        raise UsageError(f"{site} holds no built site (no index.html); run qbank build first")
    try:
        target = parse_target(args.target)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.grace_days < 0 or args.jobs < 1:
        raise UsageError("--grace-days must be >= 0 and --jobs >= 1")
    from ..deploy.release import (
        ReleaseError,
        check_private,
        check_release,
        check_site_holds_no_secret,
        check_site_url,
        site_info,
        store_sealed,
    )

    if bool(args.release) != bool(args.private):
        raise UsageError("--release and --private go together")
    client = make_client(args.endpoint_url, args.region)
    store = S3Store(client, target)
    try:
        info = site_info(site)
        check_site_url(info, args.site_url or os.environ.get("QBANK_SITE_URL"))
        check_site_holds_no_secret(site)
        sealed_body = None
        if args.release:
            from ..paywall.recipient import SealedRelease, SealError

            private = parse_target(args.private)
            check_private(target, private)
            try:
                sealed_body = Path(args.release).read_bytes()
                sealed_id = SealedRelease.from_json(sealed_body).release_id
            except (OSError, SealError) as exc:
                raise ReleaseError(f"{args.release}: {exc}") from None
            check_release(info, sealed_id)
    except (ReleaseError, ValueError) as exc:
        sys.stderr.write(f"qbank: error: deploy refused: {exc}\n")
        return EXIT_CONTENT
    release = info.get("release")
    if isinstance(release, str) and not (site / "assets" / "keyslots" / release).is_dir():
        sys.stderr.write(f"qbank: warning: the site has no keyslots for release {release}: no key opens it "
                         "(run `qbank paywall keyslots` first)\n")
    try:
        if sealed_body is not None and not args.dry_run:
            key = store_sealed(client, private, sealed_id, sealed_body)
            print(f"sealed release {sealed_id} stored at s3://{private.bucket}/{key}")
        plan = plan_deploy(store, scan_site(site), datetime.now(UTC), timedelta(days=args.grace_days))
        if args.format == "json" and args.dry_run:
            print(
                json.dumps(
                    {
                        "actions": [[a.kind, a.phase, a.path, a.reason] for a in plan.actions],
                        "unchanged": plan.unchanged,
                        "upload_bytes": plan.upload_bytes,
                        "invalidate": plan.invalidate,
                    },
                    indent=1,
                )
            )
            return EXIT_OK
        print(format_plan(plan, verbose=args.dry_run or args.verbose), end="")
        result = None if args.dry_run else execute(plan, store, site, jobs=args.jobs)
    except (BotoCoreError, ClientError, ValueError) as exc:
        sys.stderr.write(
            f"qbank: deploy failed: {type(exc).__name__}: {exc}\n"
            "qbank: the previous site is still whole (the manifest is written last); run the deploy again to finish\n"
        )
        return EXIT_INTERNAL
    if args.invalidations:
        Path(args.invalidations).write_text("".join(p + "\n" for p in plan.invalidate), "utf-8")
    print(f"invalidate ({len(plan.invalidate)}):" + "".join("\n  " + p for p in plan.invalidate))
    if result is None:
        print("dry run: nothing was changed")
    else:
        print(result.summary())
    return EXIT_OK
