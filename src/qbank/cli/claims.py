"""``qbank claims``: every number in the answers and what it is bound to; the lock; the mutation score."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..problems import Report, render
from .common import EXIT_CONTENT, EXIT_OK, UsageError, repo_root

if TYPE_CHECKING:
    from ..claims.check import ClaimsReport
    from ..corpus import Corpus
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``claims`` to the subcommands."""
    p = sub.add_parser("claims", parents=[common], help="every number in the answers and what it is bound to")
    p.add_argument("slugs", nargs="*", help="only these answers (default: all)")
    p.add_argument("--mutate", action="store_true", help="mutate every bound number and report the mutation score")
    p.add_argument("--fix", action="store_true", help="with --mutate: bind every number with a survivor explicitly")
    p.add_argument("--lock", action="store_true", help="rewrite claims.lock from the bindings of now")
    p.add_argument("--lock-diff", nargs="?", const="", default=None, metavar="BASE",
                   help="list bindings that differ from claims.lock (or from the lock file BASE); exit 1 if any")
    p.set_defaults(func=cmd_claims)


def cmd_claims(args: argparse.Namespace) -> int:
    """List every quantity in the answers with its binding; exit 1 when any claims error exists."""
    from dataclasses import asdict

    from ..claims import check_corpus
    from ..claims.report import render_claims, render_claims_json
    from ..corpus import load_corpus

    root = repo_root(args)
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
    from ..claims.lock import LOCK_FILE, Locked, changes, entries, read_lock, render_changes, render_lock

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
    from ..claims.lock import LOCK_FILE, changes, entries, parse_lock, read_lock, render_changes

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
    from ..claims.extract import extract
    from ..claims.mutate import BindingMutation, MutationResult, bind_survivors, mutate_answer, mutate_bindings
    from ..claims.values import values_for

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
