"""The command line: the only place that prints and picks exit codes.

Exit codes: 0 clean, 1 content errors (or warnings under ``--strict``), 2 usage, 3 internal error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from urllib.parse import urlparse

from .problems import FORMATS, Report, render

EXIT_OK, EXIT_CONTENT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that cannot be acted on (exit 2)."""


def default_format() -> str:
    """``github`` inside GitHub Actions, ``text`` elsewhere."""
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def emit(report: Report, args: argparse.Namespace) -> int:
    """Print a report in the chosen format and return the exit code it implies."""
    out = render(report, args.format)
    # machine-readable output and a clean summary go to stdout; problems (and their summary) to stderr
    stream = sys.stdout if args.format == "json" or not report.problems else sys.stderr
    stream.write(out)
    return EXIT_CONTENT if report.failed(strict=getattr(args, "strict", False)) else EXIT_OK


def _root(args: argparse.Namespace) -> Path:
    root = Path(args.root).resolve()
    if not (root / "questions").is_dir():
        raise UsageError(f"{root} has no questions/ folder; run qbank in the repository root or pass --root")
    return root


def cmd_check(args: argparse.Namespace) -> int:
    """Load, validate and cross-check all content; report problems in the named files only, if any."""
    from .corpus import load_corpus

    root = _root(args)
    _corpus, report = load_corpus(root)
    if args.paths:
        wanted = {_rel_to(root, p) for p in args.paths}
        slugs = {Path(w).stem for w in wanted}
        report.problems = [p for p in report.problems if p.path in wanted or Path(p.path).stem in slugs]
    return emit(report, args)


def _rel_to(root: Path, path: str) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(root).as_posix()
    except ValueError as exc:
        raise UsageError(f"{path} is outside the repository {root}") from exc


def cmd_schema(args: argparse.Namespace) -> int:
    """Write JSON Schemas for the YAML files (editors pick them up via the files' modeline)."""
    from .schema import write_schemas

    root = Path(args.root).resolve()
    out = root / args.out
    written = write_schemas(out)
    for path in written:
        print(path.relative_to(root).as_posix())
    return EXIT_OK


def cmd_build(args: argparse.Namespace) -> int:
    """Check, then build the site into ``site/`` (replaced whole, or left as it was on failure)."""
    from .build import build_site

    root = _root(args)
    result = build_site(root, Path(args.site_dir).resolve() if args.site_dir else None)
    code = emit(result.report, args)
    if result.site_dir is not None and args.format != "json":
        print(f"built {result.site_dir.relative_to(root) if result.site_dir.is_relative_to(root) else result.site_dir}")
    return code if result.site_dir is not None or code else EXIT_CONTENT


def _ledger_path(args: argparse.Namespace) -> Path:
    from .paywall.ledger import default_ledger_path

    return Path(args.ledger).expanduser() if args.ledger else default_ledger_path()


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise UsageError(f"{text!r} is not a date (YYYY-MM-DD)") from exc


def cmd_license(args: argparse.Namespace) -> int:
    """Manage license keys in the ledger: mint, sell, import, revoke, list."""
    from .paywall.keys import KeyFormatError
    from .paywall.ledger import LedgerError, open_ledger

    path = _ledger_path(args)
    if args.action != "mint" and not path.exists():
        raise UsageError(f"no ledger at {path}; mint keys first, or set QBANK_LEDGER / --ledger")
    try:
        with open_ledger(path) as book:
            if args.action == "mint":
                if args.count < 1:
                    raise UsageError("--count must be at least 1")
                keys = book.mint(args.count)
                sys.stdout.write("".join(k + "\n" for k in keys))
                sys.stderr.write(f"minted {len(keys)} unsold keys into {path}; they are shown only now\n")
            elif args.action == "sell":
                lic = book.sell(args.key, _date(args.date), args.email)
                print(f"{lic.identifier[:12]} sold on {lic.sold_on} to {lic.email}, active until {lic.expires_on}")
            elif args.action == "import":
                sold, problems = book.import_csv(Path(args.csv))
                report = Report(problems, files=1)
                print(f"{sold} sales recorded from {args.csv}")
                return emit(report, args) if problems else EXIT_OK
            elif args.action == "revoke":
                lic = book.revoke(args.key, args.reason)
                print(f"{lic.identifier[:12]} revoked; the next build gives it no keyslot")
            else:
                today = dt.date.today()
                rows = [(lic, lic.status(today)) for lic in book.licenses()]
                if args.format == "json":
                    print(json.dumps([{**asdict(lic), "status": st} for lic, st in rows], indent=2))
                else:
                    for lic, st in rows:
                        print(
                            f"{lic.identifier[:12]}  {st:8}  {lic.sold_on or '-':10}  {lic.expires_on or '-':10}  "
                            f"{lic.email or '-'}"
                        )
    except (KeyFormatError, LedgerError) as exc:
        sys.stderr.write(f"qbank: error: {exc}\n")
        return EXIT_CONTENT
    return EXIT_OK


def cmd_paywall_decrypt(args: argparse.Namespace) -> int:
    """Recover a built page's premium sections with a license key, as a reader's browser would."""
    from .paywall.decrypt import DecryptError, decrypt_page
    from .paywall.keys import KeyFormatError

    root = Path(args.root).resolve()
    site = Path(args.site_dir).resolve() if args.site_dir else root / "site"
    config = root / "mkdocs.yml"
    m = re.search(r"^site_url:\s*(\S+)", config.read_text(), re.MULTILINE) if config.exists() else None
    base = urlparse(m.group(1)).path if m else "/"
    try:
        opened = decrypt_page(site, args.page_url, args.key, base or "/")
    except (KeyFormatError, DecryptError) as exc:
        sys.stderr.write(f"qbank: error: {args.page_url}: {exc}\n")
        return EXIT_CONTENT
    for sec in opened:
        print(f"<!-- section {sec.section}: {sec.heading} -->\n{sec.html}")
    return EXIT_OK


def cmd_new_question(args: argparse.Namespace) -> int:
    """Scaffold a question, its answer and its verification script; all or nothing."""
    from .corpus import load_corpus
    from .scaffold import new_question

    root = _root(args)
    corpus, _report = load_corpus(root)
    created, problems = new_question(corpus, args.slug, args.topic, args.company, args.kind, args.access)
    if created is None:
        report = Report(problems=problems)
        return emit(report, args)
    written: list[Path] = []
    try:
        for rel, text in created.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as fh:  # never overwrite
                written.append(path)
                fh.write(text)
    except OSError:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    for rel in created.files:
        print(f"created {rel}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=".", help="repository root (default: current folder)")
    common.add_argument("--format", choices=FORMATS, default=default_format(), help="problem output format")
    common.add_argument("--strict", action="store_true", help="warnings fail the run")
    common.add_argument("-v", "--verbose", action="store_true", help="show tracebacks on internal errors")

    parser = argparse.ArgumentParser(prog="qbank", description="Check, verify and build the question bank.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("check", parents=[common], help="validate and cross-check all content")
    p.add_argument("paths", nargs="*", help="only report problems of these files (all content is still loaded)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("schema", parents=[common], help="write JSON Schemas for the YAML files")
    p.add_argument("--out", default="schemas", help="folder for the schema files (default: schemas)")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("new", help="scaffold new content")
    new_sub = p.add_subparsers(dest="what", metavar="WHAT")
    new_sub.required = True
    p = new_sub.add_parser("question", parents=[common], help="a question, its answer and its verification script")
    p.add_argument("--slug", required=True, help="file name: lowercase letters, digits, hyphens")
    p.add_argument("--topic", required=True, help="topic slug from questions/_catalog/topics.yaml")
    p.add_argument("--company", default=None, help="company slug to tag")
    p.add_argument("--kind", default="derivation", help="derivation, design, code-drill or concept")
    p.add_argument("--access", default="premium", choices=("free", "premium"), help="free or premium")
    p.set_defaults(func=cmd_new_question)

    p = sub.add_parser("build", parents=[common], help="check, then build the site into site/")
    p.add_argument("--site-dir", default=None, help="output folder (default: site/)")
    p.set_defaults(func=cmd_build)

    lic = sub.add_parser("license", help="manage license keys in the ledger (SQLite, outside the repository)")
    lsub = lic.add_subparsers(dest="action", metavar="ACTION")
    lsub.required = True
    ledger = argparse.ArgumentParser(add_help=False)
    ledger.add_argument("--ledger", default=None, help="ledger file (default: $QBANK_LEDGER or ~/.local/share/qbank)")
    p = lsub.add_parser("mint", parents=[common, ledger], help="make unsold keys for the shop's pool (shown once)")
    p.add_argument("--count", type=int, required=True, help="how many keys")
    p = lsub.add_parser("sell", parents=[common, ledger], help="record a sale: six months start on --date")
    p.add_argument("key", help="the license key sold")
    p.add_argument("--date", required=True, help="sale date, YYYY-MM-DD")
    p.add_argument("--email", required=True, help="the buyer's email")
    p = lsub.add_parser("import", parents=[common, ledger], help="record the sales of a shop's CSV export")
    p.add_argument("csv", help="CSV with columns key, date, email")
    p = lsub.add_parser("revoke", parents=[common, ledger], help="revoke a license (key or identifier)")
    p.add_argument("key", help="license key, or its identifier (or 8+ leading hex digits) from `license list`")
    p.add_argument("--reason", default="", help="why (kept in the ledger)")
    lsub.add_parser("list", parents=[common, ledger], help="every license with its status")
    lic.set_defaults(func=cmd_license)

    pw = sub.add_parser("paywall", help="operator tools for the encrypted premium layer")
    psub = pw.add_subparsers(dest="action", metavar="ACTION")
    psub.required = True
    p = psub.add_parser("decrypt", parents=[common], help="print a built page's premium sections, opened with a key")
    p.add_argument("--key", required=True, help="a license key")
    p.add_argument("page_url", metavar="PAGE_URL", help="the page's URL or path, e.g. /questions/slug/")
    p.add_argument("--site-dir", default=None, help="the built site (default: site/)")
    p.set_defaults(func=cmd_paywall_decrypt)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``qbank`` console script."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    try:
        code: int = args.func(args)
        return code
    except UsageError as exc:
        sys.stderr.write(f"qbank: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("qbank: interrupted\n")
        return 130
    except Exception as exc:
        if getattr(args, "verbose", False):
            traceback.print_exc()
        else:
            sys.stderr.write(f"qbank: internal error: {type(exc).__name__}: {exc} (run with -v for a traceback)\n")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
