"""``qbank license``: manage license keys in the ledger (mint, sell, export, import, revoke, list)."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from ..problems import Report
from .common import EXIT_CONTENT, EXIT_OK, UsageError, emit, parse_date

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``license`` and its actions to the subcommands."""
    lic = sub.add_parser("license", help="manage license keys in the ledger (SQLite, outside the repository)")
    lsub = lic.add_subparsers(dest="action", metavar="ACTION")
    lsub.required = True
    ledger = argparse.ArgumentParser(add_help=False)
    ledger.add_argument("--ledger", default=None,
                        help="ledger file or s3://bucket/key (default: $QBANK_LEDGER or ~/.local/share/qbank)")
    ledger.add_argument("--endpoint-url", default=None,
                        help="S3 endpoint of a non-AWS store (default: $QBANK_LEDGER_ENDPOINT_URL)")
    p = lsub.add_parser("mint", parents=[common, ledger], help="make unsold keys for the shop's pool (shown once)")
    p.add_argument("--count", type=int, required=True, help="how many keys")
    p = lsub.add_parser("sell", parents=[common, ledger], help="record a sale: six months start on --date")
    p.add_argument("key", help="the license key sold")
    p.add_argument("--date", required=True, help="sale date, YYYY-MM-DD")
    p.add_argument("--email", required=True, help="the buyer's email")
    p = lsub.add_parser("export", parents=[common, ledger], help="mint new keys into the shop's key-list file")
    p.add_argument("--shop", choices=["sendowl"], default="sendowl", help="the shop's key-list format")
    p.add_argument("--count", type=int, required=True, help="how many keys")
    p.add_argument("--out", required=True, help="the file to write (0600; delete it after the upload)")
    p = lsub.add_parser("import", parents=[common, ledger], help="record the sales of a shop's CSV export")
    p.add_argument("csv", help="the shop's order export (with --shop), or a CSV with columns key, date, email")
    p.add_argument("--shop", choices=["sendowl"], default=None, help="the shop whose order export this is")
    p = lsub.add_parser("revoke", parents=[common, ledger], help="revoke a license (key or identifier)")
    p.add_argument("key", help="license key, or its identifier (or 8+ leading hex digits) from `license list`")
    p.add_argument("--reason", default="", help="why (kept in the ledger)")
    lsub.add_parser("list", parents=[common, ledger], help="every license with its status")
    lic.set_defaults(func=cmd_license)


def cmd_license(args: argparse.Namespace) -> int:
    """Manage license keys in the ledger (a local file or s3://bucket/key): mint, sell, import, revoke, list."""
    import datetime as dt
    import json

    from ..paywall.keys import KeyFormatError
    from ..paywall.ledger import LedgerError
    from ..paywall.ledger_store import StoreStats, default_location, mask_email, open_ledger_at

    location = args.ledger or default_location()
    stats = StoreStats()
    part: Path | None = None
    written = False  # the ledger was written back: only then may an exported key list appear
    try:
        with open_ledger_at(location, create=args.action in ("mint", "export"), endpoint_url=args.endpoint_url,
                            readonly=args.action == "list", stats=stats) as book:
            if args.action == "mint":
                if args.count < 1:
                    raise UsageError("--count must be at least 1")
                keys = book.mint(args.count)
                sys.stdout.write("".join(k + "\n" for k in keys))
                sys.stderr.write(f"minted {len(keys)} unsold keys into {location}; they are shown only now\n")
            elif args.action == "sell":
                lic = book.sell(args.key, parse_date(args.date), args.email)
                print(f"{lic.identifier[:12]} sold on {lic.sold_on} to {mask_email(lic.email)}, "
                      f"active until {lic.expires_on}")
            elif args.action == "export":
                from ..paywall.shop import sendowl

                if args.count < 1:
                    raise UsageError("--count must be at least 1")
                out = Path(args.out)
                part = out.with_name(out.name + ".part")
                keys = book.mint(args.count)  # fresh keys: each one is in exactly one exported list
                fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.close(fd)
                sendowl.write_key_list(keys, part)
            elif args.action == "import" and args.shop:
                from ..paywall.shop import sendowl

                lines, problems = sendowl.parse_orders(Path(args.csv), args.csv)
                if not problems:
                    counts, problems = book.apply_orders(args.shop, lines)
                if problems:
                    emit(Report(problems, files=1), args)
                    sys.stderr.write(f"nothing imported from {args.csv}: fix the rows above and import it again\n")
                    return EXIT_CONTENT
                print(f"{counts['sold']} sales and {counts['revoked']} revocations recorded from {args.csv} "
                      f"({len(lines)} order lines read)")
            elif args.action == "import":
                sold, problems = book.import_csv(Path(args.csv))
                report = Report(problems, files=1)
                print(f"{sold} sales recorded from {args.csv}")
                if problems:
                    return emit(report, args)
            elif args.action == "revoke":
                lic = book.revoke(args.key, args.reason)
                print(f"{lic.identifier[:12]} revoked; the next deploy or daily refresh gives it no keyslot")
            else:
                today = dt.date.today()
                rows = [(lic, lic.status(today)) for lic in book.licenses()]
                if args.format == "json":
                    print(json.dumps([{**asdict(lic), "email": mask_email(lic.email), "status": st}
                                      for lic, st in rows], indent=2))
                else:
                    for lic, st in rows:
                        print(
                            f"{lic.identifier[:12]}  {st:8}  {lic.sold_on or '-':10}  {lic.expires_on or '-':10}  "
                            f"{mask_email(lic.email)}"
                        )
        written = True
    except (KeyFormatError, LedgerError) as exc:
        sys.stderr.write(f"qbank: error: {exc}\n")
        return EXIT_CONTENT
    finally:
        if part is not None and not written and part.exists():
            part.unlink()
    if part is not None:
        part.replace(Path(args.out))
        sys.stderr.write(f"wrote {args.count} new keys to {args.out} (one per line, for SendOwl's 'Add licenses'); "
                         "upload it, then delete the file\n")
    if stats.retries:
        sys.stderr.write(f"the ledger changed meanwhile: replayed {stats.retries} time(s), then written\n")
    return EXIT_OK
