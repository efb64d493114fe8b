"""The command line: the only place that prints and picks exit codes (with ``qbank.entry``, the console script's
front door, which prints the answer of a warm no-op ``qbank verify`` and hands every other command line here).

Exit codes: 0 clean, 1 content errors (or warnings under ``--strict``), 2 usage, 3 internal error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from .problems import FORMATS, Report, render

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    from .claims.check import ClaimsReport
    from .corpus import Corpus

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
    from .pipeline import check_all

    root = _root(args)
    # numbers in prose are claims: scripts run first (cached), then every number must bind
    _corpus, report = check_all(root, verify=not args.no_verify, trust_local=_trust_local(args))
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


def cmd_claims(args: argparse.Namespace) -> int:
    """List every quantity in the answers with its binding; exit 1 when any claims error exists."""
    from dataclasses import asdict

    from .claims import check_corpus
    from .claims.report import render_claims, render_claims_json
    from .corpus import load_corpus

    root = _root(args)
    corpus, _load_report = load_corpus(root)
    if args.mutate:
        return _claims_mutation(root, corpus, args)
    if (args.lock or args.lock_diff is not None) and args.slugs:
        raise UsageError("--lock and --lock-diff cover every answer; drop the slugs")
    claims = check_corpus(corpus)
    if args.lock_diff is not None:
        return _claims_lock_diff(root, claims, args.lock_diff)
    if args.slugs:
        claims.answers = [a for a in claims.answers if a.slug in set(args.slugs)]
    report = Report(problems=claims.problems, files=len(claims.answers))
    if args.lock:
        return _claims_lock_write(root, claims, report, args)
    if args.format == "json":
        problems = [{**asdict(p), "level": p.level.value} for p in report.sorted()]
        sys.stdout.write(render_claims_json(claims, problems))
    else:
        sys.stdout.write(render_claims(claims))
        sys.stderr.write(render(report, args.format))
    return EXIT_CONTENT if report.failed(strict=args.strict) else EXIT_OK


def _claims_lock_write(root: Path, claims: ClaimsReport, report: Report, args: argparse.Namespace) -> int:
    """Rewrite claims.lock from the bindings of now; print how many numbers it locks and what changed."""
    from .claims.lock import LOCK_FILE, Locked, changes, entries, read_lock, render_changes, render_lock

    current = entries(claims.answers)
    before = read_lock(root)
    found = changes(current, before or Locked({}))
    (root / LOCK_FILE).write_text(render_lock(current), encoding="utf-8")
    locked = sum(1 for e in current if e.target is not None)
    if before is None:
        print(f"{LOCK_FILE}: {locked} numbers locked (a new lock)")
    else:
        sys.stdout.write(render_changes(found))
        print(f"{LOCK_FILE}: {locked} numbers locked, {len(found)} changed")
    sys.stderr.write(render(report, args.format))
    return EXIT_CONTENT if report.failed(strict=args.strict) else EXIT_OK


def _claims_lock_diff(root: Path, claims: ClaimsReport, base: str) -> int:
    """Print every binding that differs from the lock (or from the lock file BASE); exit 1 when any does."""
    from .claims.lock import LOCK_FILE, changes, entries, parse_lock, read_lock, render_changes

    if base:
        path = Path(base)
        if not path.is_file():
            raise UsageError(f"{base}: no such lock file")
        locked = parse_lock(path.read_text(encoding="utf-8"))
    else:
        found_lock = read_lock(root)
        if found_lock is None:
            print(f"{LOCK_FILE} is missing: run `qbank claims --lock` and commit it")
            return EXIT_CONTENT
        locked = found_lock
    found = changes(entries(claims.answers), locked)
    sys.stdout.write(render_changes(found))
    print(f"{len(found)} binding(s) changed against {base or LOCK_FILE}")
    return EXIT_CONTENT if found else EXIT_OK


def _claims_mutation(root: Path, corpus: Corpus, args: argparse.Namespace) -> int:
    """Print the mutation score of the claims check over the answers that have a verification record."""
    from .claims.extract import extract
    from .claims.mutate import BindingMutation, MutationResult, bind_survivors, mutate_answer, mutate_bindings
    from .claims.values import values_for

    total = MutationResult()
    meaning = BindingMutation()
    for slug, answer in sorted(corpus.answers.items()):
        if args.slugs and slug not in args.slugs:
            continue
        values = values_for(root, slug)
        if values is None:
            print(f"{answer.path}: no verification record, not mutated")
            continue
        result = mutate_answer(slug, answer.path, answer.text, values)
        print(f"{answer.path}: {result.killed}/{result.total} mutants killed, {len(result.equivalent)} equivalent")
        if args.fix and result.survived:
            fixed = bind_survivors(answer.text, result.survived, extract(answer.text)[0])
            (root / answer.path).write_text(fixed, encoding="utf-8")
            print(f"  bound {len({(m.line, m.col) for m in result.survived})} number(s) explicitly in {answer.path}")
        for m in result.survived:
            print(
                f"  survived: {answer.path}:{m.line}:{m.col} {m.op} {m.before!r} -> {m.after!r}"
                f" (it matched another value; bind the original explicitly: {{={m.bound}}})"
            )
        total.add(result)
        binding = mutate_bindings(slug, answer.path, answer.text, values)
        for m in binding.survived:
            what = "re-pointed to" if m.op == "repoint" else "count noun swapped to"
            print(
                f"  survived: {answer.path}:{m.line}:{m.col} {m.op} {m.before!r} {what} {m.after!r}"
                + (" (declare the value in its count noun, or bind it explicitly)" if m.op == "noun" else "")
            )
        meaning.add(binding)
    print(f"mutation score: {total.killed}/{total.total} = {total.score:.1%} ({len(total.equivalent)} equivalent)")
    print(
        f"binding-mutation score: {meaning.caught}/{meaning.total} = {meaning.score:.1%}"
        f" (re-pointed bindings: {meaning.repoint_caught}/{meaning.repointed} caught, by the lock;"
        f" {meaning.repoint_caught_without_lock} of them without it; count nouns swapped:"
        f" {meaning.swap_caught}/{meaning.swapped} caught)"
    )
    return EXIT_OK if total.score == 1.0 and meaning.score == 1.0 else EXIT_CONTENT


def cmd_build(args: argparse.Namespace) -> int:
    """Check, then build the site into ``site/`` (replaced whole, or left as it was on failure)."""
    from .build import build_site

    root = _root(args)
    if args.recipient:  # the hooks run in this process and read the recipient from the environment
        os.environ["QBANK_RELEASE_RECIPIENT"] = str(Path(args.recipient).expanduser().resolve())
    site_dir = Path(args.site_dir).resolve() if args.site_dir else None
    result = build_site(root, site_dir, links=not args.no_links, trust_local=_trust_local(args))
    code = emit(result.report, args)
    if result.site_dir is not None and args.format != "json":
        print(f"built {result.site_dir.relative_to(root) if result.site_dir.is_relative_to(root) else result.site_dir}")
        release = _built_release(result.site_dir)
        sealed = root / ".qbank" / "release" / f"{release}.sealed.json" if release else None
        if sealed is not None and sealed.is_file():
            print(f"release {release} sealed to the recipient: {sealed.relative_to(root)}")
    return code if result.site_dir is not None or code else EXIT_CONTENT


def _built_release(site: Path) -> str | None:
    try:
        doc = json.loads((site / "qbank-build.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    release = doc.get("release") if isinstance(doc, dict) else None
    return release if isinstance(release, str) and re.fullmatch(r"[0-9a-f]+", release) else None


def cmd_deploy(args: argparse.Namespace) -> int:
    """Upload the built site to S3-compatible storage: changed files only, in a reader-safe order."""
    import json
    from datetime import UTC, datetime, timedelta

    from botocore.exceptions import BotoCoreError, ClientError

    from .deploy import S3Store, execute, format_plan, make_client, parse_target, plan_deploy, scan_site

    site = Path(args.site_dir or Path(args.root) / "site").resolve()
    if not (site / "index.html").is_file():
        raise UsageError(f"{site} holds no built site (no index.html); run qbank build first")
    try:
        target = parse_target(args.target)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.grace_days < 0 or args.jobs < 1:
        raise UsageError("--grace-days must be >= 0 and --jobs >= 1")
    from .deploy.release import (
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
            from .paywall.recipient import SealedRelease, SealError

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


def cmd_serve(args: argparse.Namespace) -> int:
    """Live preview of the site (re-checked on every save), or with ``--built`` the built site as deployed."""
    if not args.built:
        return _serve_preview(args)
    from .deploy.serve import make_server

    site = Path(args.site_dir or Path(args.root) / "site").resolve()
    if not (site / "index.html").is_file():
        raise UsageError(f"{site} holds no built site (no index.html); run qbank build first")
    server = make_server(site, args.host, args.port, quiet=not args.verbose)
    host, port = server.server_address[:2]
    print(f"serving {site} at http://{host!s}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return EXIT_OK


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _serve_preview(args: argparse.Namespace) -> int:
    """`qbank serve`: rebuild on every save; the first build prints every problem, later ones what is new."""
    from .preview.serve import Rebuild, serve

    root = _root(args)

    before: set[str] | None = None  # the previous rebuild's problems: later rebuilds print only what is new

    def on_rebuild(r: Rebuild) -> None:
        nonlocal before
        stamp = dt.datetime.now().strftime("%H:%M:%S")
        now = [p.text() for p in r.report.sorted()]
        for line in now if before is None else [t for t in now if t not in before]:
            print(line)
        gone = len(before - set(now)) if before is not None else 0
        before = set(now)
        state = f"build failed, previous pages kept: {r.failure}" if r.failure else "reloaded"
        print(
            f"[{stamp}] {r.report.summary()}{f' ({gone} fixed)' if gone else ''}; {state} (check {r.check_s:.2f} s, "
            f"build {r.build_s:.2f} s, {r.rendered}/{r.pages} pages rendered)",
            flush=True,
        )

    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as Ctrl-C does: the temporary site is removed
    serve(
        root,
        args.host,
        args.port,
        on_rebuild=on_rebuild,
        on_ready=lambda url: print(f"previewing {root} at {url} (premium shown; Ctrl-C stops)", flush=True),
    )
    return EXIT_OK


def _ledger_path(args: argparse.Namespace) -> Path:
    from .paywall.ledger import default_ledger_path

    return Path(args.ledger).expanduser() if args.ledger else default_ledger_path()


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise UsageError(f"{text!r} is not a date (YYYY-MM-DD)") from exc


def cmd_license(args: argparse.Namespace) -> int:
    """Manage license keys in the ledger (a local file or s3://bucket/key): mint, sell, import, revoke, list."""
    from .paywall.keys import KeyFormatError
    from .paywall.ledger import LedgerError
    from .paywall.ledger_store import StoreStats, default_location, mask_email, open_ledger_at

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
                lic = book.sell(args.key, _date(args.date), args.email)
                print(f"{lic.identifier[:12]} sold on {lic.sold_on} to {mask_email(lic.email)}, "
                      f"active until {lic.expires_on}")
            elif args.action == "export":
                from .paywall.shop import sendowl

                if args.count < 1:
                    raise UsageError("--count must be at least 1")
                out = Path(args.out)
                part = out.with_name(out.name + ".part")
                keys = book.mint(args.count)  # fresh keys: each one is in exactly one exported list
                fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.close(fd)
                sendowl.write_key_list(keys, part)
            elif args.action == "import" and args.shop:
                from .paywall.shop import sendowl

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


def _configured_site_url(root: Path) -> str:
    """mkdocs.yml's ``site_url`` as mkdocs resolves it (``!ENV [QBANK_SITE_URL, default]`` included)."""
    config = root / "mkdocs.yml"
    if not config.exists():
        return "/"
    from mkdocs.config import load_config

    return str(load_config(str(config)).get("site_url") or "/")


def cmd_paywall_decrypt(args: argparse.Namespace) -> int:
    """Recover a built page's premium sections with a license key, as a reader's browser would."""
    from .paywall.decrypt import DecryptError, decrypt_page
    from .paywall.keys import KeyFormatError

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
    from .paywall.recipient import SealError, keygen

    try:
        private, public, text = keygen(Path(args.out).expanduser())
    except SealError as exc:
        raise UsageError(str(exc)) from None
    print(f"release identity (secret, keep it in the deploy environment only): {private}")
    print(f"recipient public key (commit it; extra.paywall.recipient): {public}")
    print(text, end="")
    return EXIT_OK


def _identity() -> X25519PrivateKey:
    from .paywall.recipient import SealError, identity_from_env

    try:
        return identity_from_env()
    except SealError as exc:
        raise UsageError(str(exc)) from None


def cmd_paywall_keyslots(args: argparse.Namespace) -> int:
    """Deploy job: unseal the release key, read the ledger, write the site's keyslot files."""
    from .paywall.keyslots import KeyslotError, run_keyslots
    identity = _identity()
    today = _date(args.today) if args.today else dt.date.today()
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
    from botocore.exceptions import BotoCoreError, ClientError

    from .deploy import format_plan, make_client, parse_target
    from .paywall.keyslots import KeyslotError
    from .paywall.refresh import refresh

    identity = _identity()
    try:
        public, private = parse_target(args.target), parse_target(args.private)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    today = _date(args.today) if args.today else dt.date.today()
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
    from .pipeline import lock_new_answer

    print(lock_new_answer(root, args.slug))
    return EXIT_OK


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N, e.g. 1/4") from exc
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{text!r}: K must be between 1 and N")
    return k, n


def _trust_local(args: argparse.Namespace) -> bool:
    """``--trust-local``: refused under CI=true; said loudly on stderr otherwise."""
    if not getattr(args, "trust_local", False):
        return False
    if os.environ.get("CI", "").lower() == "true":
        raise UsageError("--trust-local is refused under CI=true: scripts from pull requests always run sandboxed")
    print(
        "qbank: WARNING: --trust-local: verification scripts run WITHOUT the bubblewrap sandbox "
        "(only the in-process layers); use it only for your own scripts on your own machine",
        file=sys.stderr,
        flush=True,
    )
    return True


def cmd_verify(args: argparse.Namespace) -> int:
    """Run stale verification scripts in the sandbox (or merge shard reports) and report the outcomes."""
    import json

    from .verify import engine, report
    from .verify.options import RunOptions

    root = _root(args)
    if args.write_plan:
        return _write_plan(root, args)
    if args.merge:
        bundles = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.merge]
        run = engine.merge(root, bundles, strict=args.strict)
    else:
        options = RunOptions(
            trust_local=_trust_local(args),
            network=args.network,
            fs=args.fs,
            mem_bytes=int(args.mem_limit * (1 << 30)) if args.mem_limit else None,
            fake_cuda=os.environ.get("QBANK_FAKE_CUDA") or None,
        )
        config = engine.VerifyConfig(
            slugs=args.slugs,
            jobs=args.jobs,
            device=args.device,
            force=args.force,
            shard=args.shard,
            plan=_read_plan(args),
            strict=args.strict,
            options=options,
        )
        log = None if args.format == "json" else (lambda line: print(line, flush=True))
        try:
            run = engine.verify(root, config, log=log)
        except engine.VerifyUsageError as exc:
            raise UsageError(str(exc)) from exc
    if args.report_json:
        run.entries = engine.entries_for(root, run)
        Path(args.report_json).write_text(json.dumps(report.to_json(run)), encoding="utf-8")
    if args.report_md or os.environ.get("GITHUB_STEP_SUMMARY"):
        md = report.markdown(run)
        if args.report_md:
            Path(args.report_md).write_text(md, encoding="utf-8")
        report.append_step_summary(md)
    if args.format == "json":
        print(json.dumps(report.to_json(run, with_entries=False), indent=2))
        return EXIT_CONTENT if run.report.failed(strict=args.strict) else EXIT_OK
    counts: dict[str, int] = {}
    for r in run.results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing to verify"
    print(f"{len(run.results)} scripts: {run.ran} ran, {len(run.results) - run.ran} cached ({outcomes})", flush=True)
    return emit(run.report, args)


def _read_plan(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--plan FILE`` (only with ``--shard``)."""
    if args.plan is None:
        return None
    if args.shard is None:
        raise UsageError("--plan needs --shard K/N")
    from .verify.shards.plan import PlanError, read_plan

    try:
        return read_plan(Path(args.plan))
    except PlanError as exc:
        raise UsageError(str(exc)) from exc


def _write_plan(root: Path, args: argparse.Namespace) -> int:
    """``--write-plan FILE``: every script into N shards by recorded run time (N: ``--shards`` or
    ``[tool.qbank] verify-shards``); nothing runs."""
    from .verify import store
    from .verify.engine import discover
    from .verify.shards.plan import PlanError, describe, make_plan, shard_count

    if args.shard or args.merge or args.slugs:
        raise UsageError("--write-plan plans every script: no SLUG, --shard or --merge with it")
    try:
        n = args.shards or shard_count(root)
    except PlanError as exc:
        raise UsageError(str(exc)) from exc
    plan = make_plan(list(discover(root)), store.read_index(root).durations(), n)
    Path(args.write_plan).write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")
    print(describe(plan))
    return EXIT_OK


def cmd_gpu_keygen(args: argparse.Namespace) -> int:
    """Make the GPU runner's signing key: the private key to --out (0600), the public key to commit."""
    from .verify.frozen import SIGNING_ENV, generate_key

    root = _root(args)
    try:
        kid, pub = generate_key(Path(args.out), root)
    except FileExistsError as exc:
        raise UsageError(f"{args.out} exists; refusing to overwrite a key") from exc
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror}") from exc
    print(f"private key (keep it on the GPU runner only; point {SIGNING_ENV} at it): {args.out}")
    print(f"public key {kid} (commit it): {pub.relative_to(root).as_posix()}")
    return EXIT_OK


def cmd_gpu_check(args: argparse.Namespace) -> int:
    """On a GPU: run every kernel check compiled, time the Triton kernels, freeze and sign the results, and
    print one line per kernel (time, GB/s, fraction of the datasheet peak, the PyTorch reference's time)."""
    from .verify import engine
    from .verify.frozen import SIGNING_ENV, FreezeError, load_signing_key
    from .verify.kernels.summary import rows, text
    from .verify.options import RunOptions

    root = _root(args)
    fake = os.environ.get("QBANK_FAKE_CUDA") or None
    try:
        engine.resolve_device("cuda", fake)
        load_signing_key(os.environ.get(SIGNING_ENV))  # before minutes of GPU time, not after
    except (engine.VerifyUsageError, FreezeError) as exc:
        raise UsageError(str(exc)) from exc
    scripts = engine.discover(root)
    slugs = args.slugs or [s for s, p in scripts.items() if engine.GPU_HINT.search(Path(p).read_text("utf-8"))]
    config = engine.VerifyConfig(
        slugs=slugs, jobs=1, device="cuda", force=True, strict=args.strict, options=RunOptions(fake_cuda=fake)
    )
    log = None if args.format == "json" else (lambda line: print(line, flush=True))
    try:
        run = engine.verify(root, config, log=log)
    except engine.VerifyUsageError as exc:
        raise UsageError(str(exc)) from exc
    print(text(rows(run.entries)), flush=True)
    written = sorted(str(r.get("frozen_written")) for r in run.results if r.get("frozen_written"))
    print(f"frozen and signed: {', '.join(written) or 'nothing'} (commit them)", flush=True)
    return emit(run.report, args)


TRUST_HELP = "run scripts WITHOUT the sandbox (your own scripts, your own machine; refused under CI=true)"


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
    p.add_argument("--no-verify", action="store_true", help="do not run stale scripts; bind against existing records")
    p.add_argument("--trust-local", action="store_true", help=TRUST_HELP)
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

    p = sub.add_parser("claims", parents=[common], help="every number in the answers and what it is bound to")
    p.add_argument("slugs", nargs="*", help="only these answers (default: all)")
    p.add_argument("--mutate", action="store_true", help="mutate every bound number and report the mutation score")
    p.add_argument("--fix", action="store_true", help="with --mutate: bind every number with a survivor explicitly")
    p.add_argument("--lock", action="store_true", help="rewrite claims.lock from the bindings of now")
    p.add_argument("--lock-diff", nargs="?", const="", default=None, metavar="BASE",
                   help="list bindings that differ from claims.lock (or from the lock file BASE); exit 1 if any")
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser("build", parents=[common], help="check, then build the site into site/")
    p.add_argument("--trust-local", action="store_true", help=TRUST_HELP)
    p.add_argument("--site-dir", default=None, help="output folder (default: site/)")
    p.add_argument("--no-links", action="store_true", help="skip linkchecker over the built site (other checks run)")
    p.add_argument("--recipient", default=None, metavar="PUBFILE",
                   help="seal the release key to this public key (default: extra.paywall.recipient; "
                        "$QBANK_RELEASE_RECIPIENT)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("verify", parents=[common], help="run stale verification scripts in the sandbox")
    p.add_argument("slugs", nargs="*", metavar="SLUG", help="only these scripts (default: all)")
    p.add_argument("--jobs", "-j", type=int, default=0, help="scripts run at once (default: one per core)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="device for kernel checks")
    p.add_argument("--force", action="store_true", help="run even when a cached result holds")
    p.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                   help="run only shard K of N (balanced by recorded run time; docs/scale.md)")
    p.add_argument("--plan", metavar="FILE", help="with --shard: the shards of this plan (--write-plan)")
    p.add_argument("--write-plan", metavar="FILE",
                   help="write the shard plan of every script and exit (N: --shards, or pyproject's "
                        "[tool.qbank] verify-shards)")
    p.add_argument("--shards", type=int, choices=range(1, 257), default=None, metavar="N",
                   help="with --write-plan: the shard count")
    p.add_argument("--merge", nargs="+", metavar="REPORT", help="merge shard reports (--report-json) instead")
    p.add_argument("--report-json", metavar="PATH", help="write the JSON report (with entries, for --merge)")
    p.add_argument("--report-md", metavar="PATH", help="write the Markdown table")
    p.add_argument("--network", choices=("auto", "namespace", "socket"), default="auto", help=argparse.SUPPRESS)
    p.add_argument("--fs", choices=("auto", "mount", "audit"), default="auto", help=argparse.SUPPRESS)
    p.add_argument("--mem-limit", type=float, default=4.0, metavar="GiB", help="address-space limit per script")
    p.add_argument("--trust-local", action="store_true", help=TRUST_HELP)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("gpu-check", parents=[common], help="on a GPU: run, time, freeze and sign every kernel check")
    p.add_argument("slugs", nargs="*", metavar="SLUG", help="only these scripts (default: every one with a kernel)")
    p.set_defaults(func=cmd_gpu_check)

    p = sub.add_parser("gpu-keygen", parents=[common], help="make the GPU runner's key for signing frozen results")
    p.add_argument("--out", required=True, metavar="PATH", help="where the private key goes (0600; never overwritten)")
    p.set_defaults(func=cmd_gpu_keygen)

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

    p = sub.add_parser("serve", parents=[common], help="live preview, re-checked on every save (--built: site/)")
    p.add_argument("--built", action="store_true", help="serve site/ as built, with the CDN headers")
    p.add_argument("--site-dir", default=None, help="built site folder (default: site/)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    p.set_defaults(func=cmd_serve)

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
            import traceback  # only here: importing it costs a warm `qbank verify` a tenth of its time

            traceback.print_exc()
        else:
            sys.stderr.write(f"qbank: internal error: {type(exc).__name__}: {exc} (run with -v for a traceback)\n")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
