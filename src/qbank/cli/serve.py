"""``qbank serve``: live preview, re-checked on every save; ``--built``: the built site as deployed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .common import EXIT_OK, UsageError, repo_root

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``serve`` to the subcommands."""
    p = sub.add_parser("serve", parents=[common], help="live preview, re-checked on every save (--built: site/)")
    p.add_argument("--built", action="store_true", help="serve site/ as built, with the CDN headers")
    p.add_argument("--site-dir", default=None, help="built site folder (default: site/)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Live preview of the site (re-checked on every save), or with ``--built`` the built site as deployed."""
    if not args.built:
        return _serve_preview(args)
    from ..deploy.serve import make_server

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
    import datetime as dt
    import signal

    from ..preview.serve import Rebuild, serve

    root = repo_root(args)

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
