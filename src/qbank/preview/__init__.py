"""Live preview (`qbank serve`): the session the hooks read, and the problem banners shown on pages.

The preview flag is ``extra.qbank.preview`` in the mkdocs config, set only by the serve loop after it
loads ``mkdocs.yml``. The flag alone is not enough: the hooks also need the serve loop's session in
this process, so a build with the flag on (say, written into ``mkdocs.yml``) refuses to run instead of
publishing premium text in the clear.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from html import escape
from pathlib import Path
from typing import Any

from ..corpus import Corpus
from ..memo import Memo
from ..problems import Level, Problem, Report
from ..render.pages import PageMemo
from ..render.seo import PageMeta
from ..render.settings import Settings
from ..seal.regions import new_token
from .theme import ThemeMemo

FLAG = "preview"
PREMIUM_CLASS = "qb-preview-premium"
BANNER_CLASS = "qb-preview-banner"
SHOWN_LIMIT = 20
"""The home banner lists this many problems in full; the counts cover all of them."""


class PreviewFlagError(RuntimeError):
    """The preview flag is on outside `qbank serve`: a build would publish premium sections unsealed."""


@dataclass
class Session:
    """What the serve loop hands the hooks before each build: the checked corpus and its report."""

    root: Path
    corpus: Corpus | None = None
    report: Report = field(default_factory=Report)
    memo: Memo = field(default_factory=Memo)
    """Parsed question files and extracted answers, reused between saves."""
    grouped: dict[str, list[Problem]] = field(default_factory=dict)
    """The report's problems by question, computed once per check (every question page asks)."""
    built: dict[str, str] = field(default_factory=dict)
    """Digest of each generated page (Markdown, metadata, banner) as the site folder holds it now."""
    pending: dict[str, str] = field(default_factory=dict)
    """The digests of the build in progress; they become ``built`` when it succeeds."""
    incremental: bool = False
    skipped: int = 0
    """Generated pages the build in progress keeps as built."""
    digests: dict[str, tuple[str, PageMeta, str]] = field(default_factory=dict)
    """Each generated page's Markdown and metadata as last digested, with the digest (``skip_unchanged``)."""
    kept: set[str] = field(default_factory=set)
    """Their docs paths: their HTML and social card in the site folder are current."""
    layout: tuple[tuple[str, int], ...] = ()
    """The layout fingerprint of the last successful build (see ``serve.layout_fingerprint``)."""
    pages: PageMemo = field(default_factory=PageMemo)
    """Question pages rendered by earlier builds, reused while their inputs are the same (``render.pages``)."""
    theme: ThemeMemo = field(default_factory=ThemeMemo)
    """Compiled theme templates and the theme's file list, kept between builds (``preview.theme``)."""
    seal_token: str = field(default_factory=new_token, repr=False)
    """The region-marker token of every build of this session (a build draws its own). Drawn per build, it
    changed every generated page's Markdown, so no save could keep an unchanged page's HTML; drawn per session
    it is as unguessable to the content, and a preview is never deployed."""
    """Whether this build may skip the pages whose digest is unchanged (mkdocs' dirty build)."""

    def checked(self, corpus: Corpus, report: Report) -> None:
        """Take the result of a check."""
        self.corpus, self.report, self.grouped = corpus, report, by_slug(report)


_SESSIONS: dict[Path, Session] = {}


def open_session(root: Path) -> Session:
    """Register the serve loop of ``root`` in this process (the only way the preview flag is honoured)."""
    session = Session(root=root.resolve())
    _SESSIONS[session.root] = session
    return session


def current(root: Path) -> Session:
    """The serve loop's session of ``root`` (it must be open)."""
    return _SESSIONS[root.resolve()]


def close_session(root: Path) -> None:
    """Forget the serve loop of ``root``."""
    _SESSIONS.pop(root.resolve(), None)


def flag_on(config: Any) -> bool:
    """Whether the mkdocs config carries the preview flag (``extra.qbank.preview``)."""
    extra = config.get("extra") or {}
    qbank = extra.get("qbank") or {}
    return isinstance(qbank, dict) and bool(qbank.get(FLAG))


def set_flag(config: Any) -> None:
    """Turn the preview flag on in a loaded mkdocs config (the serve loop's job, nobody else's)."""
    extra = config["extra"]
    qbank = dict(extra.get("qbank") or {})
    qbank[FLAG] = True
    extra["qbank"] = qbank


def session_for(config: Any, root: Path) -> Session | None:
    """The preview session for this build, None for a normal build; raises when the flag has no session."""
    if not flag_on(config):
        return None
    session = _SESSIONS.get(root.resolve())
    if session is None:
        raise PreviewFlagError(
            f"extra.qbank.{FLAG} is set but no `qbank serve` is running: a build never shows premium sections; "
            f"remove the flag from mkdocs.yml"
        )
    return session


def source_paths(slug: str) -> tuple[str, str, str]:
    """The three files of a question, as problems name them."""
    return f"questions/{slug}.yaml", f"answers/{slug}.md", f"verify/{slug}.py"


def slug_of(path: str) -> str | None:
    """The question a problem's file belongs to (None for catalog, config and site files)."""
    p = Path(path)
    if len(p.parts) == 2 and (p.parts[0], p.suffix) in {("questions", ".yaml"), ("answers", ".md"), ("verify", ".py")}:
        return p.stem
    return None


def by_slug(report: Report) -> dict[str, list[Problem]]:
    """Problems grouped by the question whose files they are in."""
    out: dict[str, list[Problem]] = {}
    for p in report.sorted():
        slug = slug_of(p.path)
        if slug is not None:
            out.setdefault(slug, []).append(p)
    return out


def broken_questions(session: Session) -> list[str]:
    """Questions whose YAML exists but did not load: they get a stub page to carry their banner."""
    if session.corpus is None:
        return []
    slugs = {s for s in by_slug(session.report) if s not in session.corpus.questions}
    return sorted(s for s in slugs if (session.root / source_paths(s)[0]).is_file())


def _row(p: Problem) -> str:
    return (
        f'<li class="qb-preview-{p.level.value}"><code>{escape(p.path)}:{p.line}:{p.col}</code> '
        f"<strong>{p.level.value}</strong>: {escape(p.message)} <code>[{escape(p.code)}]</code></li>"
    )


def _counts(problems: list[Problem]) -> str:
    levels = Counter(p.level for p in problems)
    parts = [f"{levels[lv]} {lv.value}{'' if levels[lv] == 1 else 's'}" for lv in Level if levels[lv]]
    return ", ".join(parts)


def page_banner(problems: list[Problem]) -> str:
    """The banner at the top of a question page: every problem of its files, with positions."""
    if not problems:
        return ""
    return (
        f'<div class="{BANNER_CLASS}" role="alert" data-pagefind-ignore>'
        f"<p><strong>qbank preview</strong>: {_counts(problems)} in this question's files</p>"
        f"<ul>{''.join(_row(p) for p in problems)}</ul></div>\n"
    )


def home_banner(report: Report) -> str:
    """The site-wide banner on the home page: counts, and the first problems in full."""
    problems = report.sorted()
    if not problems:
        return ""
    files = len({p.path for p in problems})
    more = len(problems) - SHOWN_LIMIT
    tail = f"<p>… and {more} more (see the terminal)</p>" if more > 0 else ""
    return (
        f'<div class="{BANNER_CLASS}" role="alert" data-pagefind-ignore>'
        f"<p><strong>qbank preview</strong>: {_counts(problems)} in {files} file{'' if files == 1 else 's'}</p>"
        f"<ul>{''.join(_row(p) for p in problems[:SHOWN_LIMIT])}</ul>{tail}</div>\n"
    )


def banner_for(session: Session, src_uri: str) -> str:
    """The banner a page gets in preview: its question's problems, or the site-wide one on the home page."""
    if src_uri == "index.md":
        return home_banner(session.report)
    p = Path(src_uri)
    if len(p.parts) == 2 and p.parts[0] == "questions" and p.suffix == ".md":
        return page_banner(session.grouped.get(p.stem, []))
    return ""


def session_settings(session: Session, settings: Settings) -> Settings:
    """The render settings of a preview build: the session's seal token instead of one drawn for this build."""
    return replace(settings, seal_token=session.seal_token)


def skip_unchanged(session: Session, files: Iterable[Any], pages: dict[str, tuple[str, Any]]) -> int:
    """Mark generated files whose page is as already built so a dirty build skips them; returns how many.

    ``pages`` maps a docs path to its Markdown and metadata. mkdocs counts a generated file as always
    modified; an unchanged digest (the banner included) means its HTML in the site folder is current.
    """
    skipped = 0
    session.pending = {}
    session.kept = set()
    for file in files:
        entry = pages.get(file.src_uri)
        if entry is None:
            continue
        markdown, meta = entry
        digest = hashlib.sha256(f"{_page_digest(session, file.src_uri, markdown, meta)}\0"
                                f"{banner_for(session, file.src_uri)}".encode()).hexdigest()
        session.pending[file.src_uri] = digest
        if session.incremental and session.built.get(file.src_uri) == digest:
            file.is_modified = _unmodified  # instance attribute: this file only
            session.kept.add(file.src_uri)
            skipped += 1
    session.skipped = skipped
    return skipped


def _page_digest(session: Session, path: str, markdown: str, meta: PageMeta) -> str:
    """The digest of a page's Markdown and metadata, kept while the render hands over the very same objects (a
    page the render memo kept): digesting a thousand pages' Markdown and metadata was a tenth of a save."""
    kept = session.digests.get(path)
    if kept is not None and kept[0] is markdown and kept[1] is meta:
        return kept[2]
    digest = hashlib.sha256(f"{markdown}\0{meta!r}".encode()).hexdigest()
    session.digests[path] = (markdown, meta, digest)
    return digest


def cards_to_draw(session: Session | None, metas: Iterable[PageMeta]) -> list[PageMeta]:
    """The pages whose social card a build draws: all of them, except in a preview build after a save, where a
    page kept as built keeps its card too (a card is drawn from the page's metadata, part of what was compared).
    Drawing a thousand PNG cards was most of a save's rebuild at 1,000 questions."""
    if session is None or not session.incremental:
        return list(metas)
    return [m for m in metas if m.path not in session.kept]


def _unmodified() -> bool:
    return False


def stub_markdown(slug: str) -> str:
    """The page of a question whose YAML did not load: a title and a pointer to the banner."""
    return f"# {slug}\n\nThis question did not load; the problems above say why. Fixing them brings its page back.\n"


__all__ = [
    "FLAG",
    "PREMIUM_CLASS",
    "PreviewFlagError",
    "Session",
    "banner_for",
    "broken_questions",
    "by_slug",
    "cards_to_draw",
    "close_session",
    "current",
    "flag_on",
    "home_banner",
    "open_session",
    "page_banner",
    "session_for",
    "session_settings",
    "set_flag",
    "skip_unchanged",
    "stub_markdown",
]
