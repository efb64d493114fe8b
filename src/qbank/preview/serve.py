"""The `qbank serve` loop: mkdocs' live-reload server over the real site, re-checked on every save.

Each rebuild runs :func:`qbank.pipeline.check_all` (load, stale verification scripts only, claims),
hands the checked corpus and its report to the hooks through the preview session, then builds with
mkdocs into a temporary folder the server reads. Content problems never stop the loop: they go to
the terminal and onto the pages as banners.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mkdocs.livereload import LiveReloadServer
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.api import ObservedWatch

from ..build import PRELOADED
from ..pipeline import check_all
from ..problems import Report
from . import close_session, current, open_session, set_flag
from .theme import ThemeMemo, remember_theme

WATCHED = ("questions", "answers", "verify", "site_src", "hooks", "mkdocs.yml")
"""What a save in triggers a rebuild (verify/ includes ``_lib/facts.yaml``)."""


class _Server(LiveReloadServer):
    """mkdocs' live-reload server, bound before serving starts (so port 0 is known to the first build)."""

    _bound = False

    def server_bind(self) -> None:
        """Bind once; ``serve()`` calls this again."""
        if not self._bound:
            super().server_bind()
            self._bound = True


@dataclass(frozen=True)
class Rebuild:
    """One rebuild: the check's report and where the time went."""

    report: Report
    check_s: float
    build_s: float
    failure: str | None = None
    """An exception the build raised (the server keeps the previous pages until the next save)."""
    pages: int = 0
    """Generated pages in the site."""
    rendered: int = 0
    """... of which this build rendered (the others were unchanged and kept)."""


def preview_config(
    root: Path, site_dir: Path, serve_url: str, theme: tuple[ThemeMemo, Hashable] | None = None
) -> Any:
    """``mkdocs.yml`` loaded for preview: the flag on, warnings not fatal, URLs on the local server; with
    ``theme`` (a session's memo and the layout fingerprint), compiled templates and the theme's file list kept."""
    from mkdocs.config import load_config

    config = load_config(str(root / "mkdocs.yml"), site_dir=str(site_dir))
    if theme is not None:
        remember_theme(config, *theme)
    set_flag(config)
    config["strict"] = False  # a broken link in a draft is a warning on screen, not a stuck server
    config["site_url"] = serve_url
    return config


def rebuild(root: Path, site_dir: Path, serve_url: str) -> Rebuild:
    """Check the content, then build the preview site; content errors are reported, never raised."""
    from mkdocs.commands.build import build

    session = current(root)
    t0 = time.perf_counter()
    corpus, report = check_all(root, memo=session.memo)
    session.checked(corpus, report)
    t1 = time.perf_counter()
    layout = layout_fingerprint(root)
    # pages whose Markdown, metadata and banner are unchanged keep their HTML, unless the set of questions,
    # the theme, the hooks or the config changed (those reach every page, or leave stale pages behind)
    session.incremental = bool(session.built) and layout == session.layout
    session.skipped = 0
    PRELOADED[root.resolve()] = corpus
    try:
        config = preview_config(root, site_dir, serve_url, (session.theme, layout))
        build(config, serve_url=serve_url, dirty=session.incremental)
        session.built, session.layout, failure = session.pending, layout, None
    except Exception as exc:  # a build failure must not end the session: the next save tries again
        session.built, failure = {}, f"{type(exc).__name__}: {exc}"
    finally:
        PRELOADED.pop(root.resolve(), None)
    pages = len(session.pending)
    return Rebuild(report, t1 - t0, time.perf_counter() - t1, failure, pages, pages - session.skipped)


def layout_fingerprint(root: Path) -> tuple[tuple[str, int], ...]:
    """What forces a full rebuild when it changes: the question files present, the site sources, hooks, config."""
    items = [(p.name, 0) for p in (root / "questions").glob("*.yaml")]
    for name in ("site_src", "hooks"):
        files = (p for p in (root / name).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        items += [(str(p), p.stat().st_mtime_ns) for p in files]
    config = root / "mkdocs.yml"
    items.append((str(config), config.stat().st_mtime_ns))
    return tuple(sorted(items))


def serve(
    root: Path,
    host: str,
    port: int,
    *,
    on_rebuild: Callable[[Rebuild], None],
    on_ready: Callable[[str], None],
) -> None:
    """Build once, then serve with live reload until interrupted; ``on_rebuild`` sees every rebuild."""
    import logging

    from mkdocs.config import load_config

    root = root.resolve()
    site_dir = Path(tempfile.mkdtemp(prefix="qbank-preview-"))
    # pages live under the deployed site_url's path; locally they hang under the same path
    base = urlsplit(load_config(str(root / "mkdocs.yml")).get("site_url") or "/").path or "/"
    server = _Server(builder=lambda: None, host=host, port=port, root=str(site_dir), mount_path=base)
    listen_for_saves(server)
    server.server_bind()  # bind now, so port 0 becomes a real port before the first build names it
    bound_host, bound_port = server.server_address[:2]
    serve_url = f"http://{bound_host!s}:{bound_port}/" + base.strip("/") + ("/" if base.strip("/") else "")
    server.url = serve_url

    def builder() -> None:
        on_rebuild(rebuild(root, site_dir, serve_url))

    server.builder = builder
    server.error_handler = lambda code: _error_page(site_dir, code)
    logging.getLogger("mkdocs").setLevel(logging.WARNING)
    # mkdocs warns on every dirty build that navigation may be stale; here only unchanged pages are kept
    logging.getLogger("mkdocs.commands.build").addFilter(lambda r: "'dirty' build" not in r.getMessage())
    cwd = Path.cwd()
    os.chdir(root)  # mkdocs resolves the hooks and docs_dir relative to the config file and cwd
    open_session(root)
    try:
        builder()
        for name in WATCHED:
            if (root / name).exists():
                server.watch(str(root / name))
        # announce only once the watcher holds its first snapshot: a save before that would go unseen
        threading.Thread(target=_announce, args=(server, serve_url, on_ready), daemon=True).start()
        try:
            server.serve()  # type: ignore[no-untyped-call]
        except KeyboardInterrupt:
            pass
        finally:
            server.shutdown()
    finally:
        close_session(root)
        os.chdir(cwd)
        shutil.rmtree(site_dir, ignore_errors=True)


BUILD_DELAY_S = 0.05
"""Quiet time after a file event before the rebuild starts (mkdocs waits 0.1 s): one save is a burst of events
within milliseconds; an editor's write-then-rename is one burst too."""


SAVE_EVENTS = ("created", "deleted", "modified", "moved", "closed")
"""The file events that are a save. inotify also reports a file opened or closed after reading: the check and the
build read every watched file, so with those each rebuild would set off the next one."""


def listen_for_saves(server: LiveReloadServer) -> None:
    """Hear saves from the kernel (inotify on Linux) instead of mkdocs' polling, which every 0.5 s stats every
    watched file (3,000 at 1,000 questions): a save waited 0.25 s on average, and CPU time, before its rebuild.
    Where the platform has no native observer, watchdog's ``Observer`` is the polling one anyway."""
    from watchdog.observers import Observer

    server.observer = Observer()  # type: ignore[assignment]  # any observer: mkdocs only schedules and starts it
    schedule = server.observer.schedule

    def schedule_saves(handler: FileSystemEventHandler, path: str, *, recursive: bool = False) -> ObservedWatch:
        return schedule(handler, path, recursive=recursive, event_filter=save_event_types())

    setattr(server.observer, "schedule", schedule_saves)  # noqa: B010 - mkdocs' watch() schedules without a filter
    server.build_delay = BUILD_DELAY_S


def save_event_types() -> list[type[FileSystemEvent]]:
    """The watchdog event classes of :data:`SAVE_EVENTS`, for files and folders."""
    from watchdog import events

    kinds = [getattr(events, f"{who}{what.capitalize()}Event", None) for what in SAVE_EVENTS for who in ("File", "Dir")]
    return [k for k in kinds if isinstance(k, type) and issubclass(k, events.FileSystemEvent)]


def _primed(emitter: object) -> bool:
    """Whether an emitter already sees changes: a polling one holds its first snapshot, an inotify one its watches."""
    from watchdog.utils.dirsnapshot import EmptyDirectorySnapshot

    if hasattr(emitter, "_snapshot"):
        return not isinstance(getattr(emitter, "_snapshot"), EmptyDirectorySnapshot)  # noqa: B009
    return getattr(emitter, "_inotify", True) is not None


def _announce(server: LiveReloadServer, url: str, on_ready: Callable[[str], None], timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        emitters = list(server.observer.emitters) if server.observer.is_alive() else []
        if emitters and all(_primed(e) for e in emitters):
            break
        time.sleep(0.05)
    on_ready(url)


def _error_page(site_dir: Path, code: int) -> bytes | None:
    page = site_dir / f"{code}.html"
    return page.read_bytes() if code in (404, 500) and page.is_file() else None
