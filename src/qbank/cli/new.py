"""``qbank new question``: scaffold a question, its answer and its verification script."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..problems import Report
from .common import EXIT_OK, emit, repo_root

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``new`` and its ``question`` to the subcommands."""
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


def cmd_new_question(args: argparse.Namespace) -> int:
    """Scaffold a question, its answer and its verification script; all or nothing."""
    from ..corpus import load_corpus
    from ..scaffold import new_question

    root = repo_root(args)
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
    from ..pipeline import lock_new_answer

    print(lock_new_answer(root, args.slug))
    return EXIT_OK
