"""`qbank build`: check, then an mkdocs-material build into a fresh folder swapped in atomically."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .corpus import Corpus
from .pipeline import check_all
from .problems import Problem, Report, error

if TYPE_CHECKING:  # the card pool imports Pillow and multiprocessing: not for this module's import
    from .cards.pool import CardCounts

PRELOADED: dict[Path, Corpus] = {}
"""A corpus ``build_site`` has just loaded and checked, handed to the mkdocs hooks so they do not load it again."""


def take_preloaded(root: Path) -> Corpus | None:
    """The corpus ``build_site`` loaded for ``root``, once; None under a plain ``mkdocs build``/``serve``."""
    return PRELOADED.pop(root.resolve(), None)


@dataclass
class BuildResult:
    """What a build produced: the report and the folder written (None when nothing was written)."""

    report: Report
    site_dir: Path | None
    cards: CardCounts | None = None
    """The social cards of a build that wrote a site: how many, and how many drawn (the others were copied from
    the card store)."""


CARDS: dict[str, CardCounts] = {}
"""The social cards of the last mkdocs build into each (resolved) folder; the ones not drawn came from the card
store (``.qbank/cards``). Recorded by the hooks, taken by ``build_site``."""

LAST_THIN: dict[str, tuple[int, float]] = {}
"""The own-text limits (``extra.qbank``) of the last mkdocs build into each folder, for the built-site check."""


def mkdocs_build(root: Path, out: Path) -> str:
    """Run mkdocs (strict, as configured) from ``root`` into ``out``; returns the configured site URL."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from . import preview

    cwd = Path.cwd()
    os.chdir(root)  # mkdocs resolves hooks and docs_dir relative to the config file and cwd
    try:
        config = load_config(str(root / "mkdocs.yml"), site_dir=str(out))
        if preview.flag_on(config):  # only `qbank serve` sets it, and never through here
            raise preview.PreviewFlagError(f"extra.qbank.{preview.FLAG} is set in mkdocs.yml: a build never shows "
                                           "premium sections; remove it")
        logging.getLogger("mkdocs").setLevel(logging.WARNING)
        build(config)
        from .render.settings import settings_from

        s = settings_from(config["site_url"], config["extra"])
        LAST_THIN[str(out)] = (s.thin_min_words, s.thin_max_overlap)
        return str(config["site_url"] or "")
    finally:
        os.chdir(cwd)


def swap_in(new: Path, target: Path) -> None:
    """Replace ``target`` by ``new`` with renames only, so readers never see a half-written folder."""
    old = target.with_name(target.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        target.rename(old)
    new.rename(target)
    if old.exists():
        shutil.rmtree(old)


def build_site(
    root: Path, site_dir: Path | None = None, *, links: bool = True, trust_local: bool = False
) -> BuildResult:
    """Check the content; when clean, build into a temp folder, check the built site, and swap it into place.

    A site that fails its checks (structure, reachability, links) is not swapped in.
    """
    target = site_dir or root / "site"
    # content, verification (cached) and numbers in prose, all before any build
    corpus, report = check_all(root, trust_local=trust_local)
    if report.errors:
        return BuildResult(report, None)
    PRELOADED[root.resolve()] = corpus
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".site-build-", dir=target.parent))
    try:
        site_url = mkdocs_build(root, tmp)
    except Exception as exc:
        from .paywall import site as paywall

        PRELOADED.pop(root.resolve(), None)
        paywall.take(tmp)  # drop the failed build's release key and plaintext fragments
        shutil.rmtree(tmp, ignore_errors=True)
        report.extend([error("mkdocs.yml", 0, 0, "build-failed", f"mkdocs build failed: {exc}")])
        return BuildResult(report, None)
    finally:
        cards = CARDS.pop(str(tmp.resolve()), None)  # taken whatever happens: nothing left for another build
    from .sitecheck import check_site

    report.extend(postcheck(root, corpus, tmp, target))  # the paywall's state and the leak scan
    problems = check_site(tmp, site_url, links=links, thin=LAST_THIN.pop(str(tmp), None))
    report.extend(replace(p, path=target.name + p.path.removeprefix(tmp.name)) for p in problems)
    if report.errors:
        shutil.rmtree(tmp, ignore_errors=True)
        return BuildResult(report, None)
    swap_in(tmp, target)
    return BuildResult(report, target, cards)


def postcheck(root: Path, corpus: Corpus, built: Path, target: Path) -> list[Problem]:
    """Checks of the written site before it replaces the old one: the paywall's state and the leak scan."""
    from .paywall import site as paywall
    from .paywall.leak import scan_site
    from .seal.premium_text import premium_prints

    build = paywall.take(built)
    if build is None:
        return []
    shown = target.relative_to(root).as_posix() if target.is_relative_to(root) else target.as_posix()
    problems = list(build.problems)
    for leak in scan_site(built, premium_prints(corpus)):
        problems.append(
            error(
                f"{shown}/{leak.file}",
                0,
                0,
                "premium-leak",
                f"premium text of {leak.source} ({leak.what}, {leak.heading!r}) is in this file",
            )
        )
    from .practice.leak import practice_leaks  # premium tests' items, drills' edge cases and references
    from .practice.load import load_bank

    problems.extend(practice_leaks(load_bank(root)[0], built, shown))
    return problems
