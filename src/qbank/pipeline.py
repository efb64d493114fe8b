"""The checking pipeline shared by `qbank check` and `qbank build`: load, verify (cached), bind claims."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .corpus import Corpus, load_corpus
from .memo import Memo
from .problems import Problem, Report, error


def check_all(
    root: Path,
    *,
    verify: bool = True,
    jobs: int = 0,
    log: Callable[[str], None] | None = None,
    memo: Memo | None = None,
    trust_local: bool = False,
) -> tuple[Corpus, Report]:
    """Every problem of the repository: content, verification outcomes and numbers in prose.

    With ``verify``, stale scripts run first (sandboxed; cached ones cost a stat), so claims bind
    against values of the scripts as they are now; without it, claims use whatever records exist.
    A ``memo`` (kept by `qbank serve` between saves) skips parsing the files that did not change.
    """
    from .claims import check_corpus
    from .claims.lock import lock_problems

    corpus, report = load_corpus(root, memo=memo)
    if verify and corpus.verify_scripts:
        from .verify import engine

        # scripts of questions whose YAML failed validation run too: their answers' numbers still get checked
        slugs = sorted(s for s in corpus.verify_scripts if s in corpus.questions or s in corpus.invalid)
        if slugs:
            from .verify.options import RunOptions

            config = engine.VerifyConfig(slugs=slugs, jobs=jobs, options=RunOptions(trust_local=trust_local))
            run = engine.verify(root, config, log=log)
            report.extend(run.report.problems)
    elif corpus.verify_scripts:  # not run, still read: the static check costs no sandbox
        from .verify.lint import lint_script

        for slug in sorted(corpus.verify_scripts):
            report.extend(lint_script(root, f"verify/{slug}.py")[0])
    from .practice.check import check_practice, keyed_claims_used

    # practice tests and drills: their keys read the records above, and a claim a key uses is used
    bank, practice_problems = check_practice(root, corpus, run=verify, trust_local=trust_local)
    claims = check_corpus(corpus, memo=memo)
    report.extend(keyed_claims_used(claims.problems, bank))
    report.extend(lock_problems(root, claims.answers))  # a binding that changed meaning since claims.lock
    report.extend(duplicated_problems(corpus))
    report.extend(practice_problems)
    return corpus, report


def lock_new_answer(root: Path, slug: str) -> str:
    """Add a just-scaffolded answer's bindings to ``claims.lock`` (its script verified first, sandboxed).

    The lock is what a reviewer reads; a new answer's numbers belong in it from the first commit, so the
    author's next command, `qbank check`, finds it current. Returns what was done, for the CLI to print.
    """
    from .claims import check_answer_text
    from .claims.lock import LOCK_FILE, entries, with_answer
    from .claims.values import values_for
    from .verify import engine

    lock = root / LOCK_FILE
    if not lock.is_file():
        return f"{LOCK_FILE}: none in this repository, nothing to add"
    run = engine.verify(root, engine.VerifyConfig(slugs=[slug], jobs=1))
    if run.report.errors:
        return f"{LOCK_FILE}: not updated ({slug}'s script did not pass); run `qbank check`, then `qbank claims --lock`"
    path = f"answers/{slug}.md"
    answer = check_answer_text(slug, path, (root / path).read_text(encoding="utf-8"), values_for(root, slug))
    current = entries([answer])
    lock.write_text(with_answer(lock.read_text(encoding="utf-8"), path, current), encoding="utf-8")
    return f"{LOCK_FILE}: {sum(1 for e in current if e.target is not None)} numbers of {path} locked"


def duplicated_problems(corpus: Corpus) -> list[Problem]:
    """``premium-duplicated``: a free answer part, a premium heading or a free derivation repeats premium text."""
    from .seal.premium_text import duplicates

    return [
        error(
            d.path,
            d.line,
            1,
            "premium-duplicated",
            # the repeated words are not quoted: a problem line is a log, and logs never hold premium text
            f"this {d.what} repeats {len(d.run)} words of premium text of {d.premium.path} ({d.premium.what}) "
            "from here on; free text may not repeat premium text, rephrase it",
        )
        for d in duplicates(corpus)
    ]
