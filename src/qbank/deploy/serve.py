"""`qbank serve --built`: the built site on 127.0.0.1 with the headers a CDN host would send and a real 404."""

from __future__ import annotations

import functools
import posixpath
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from .headers import HOST_FILES, HeaderRule, headers_for, parse_headers, parse_redirects


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files from one folder, with `_headers` rules, `_redirects`, and `404.html` sent as a 404."""

    rules: ClassVar[list[HeaderRule]] = []
    redirects: ClassVar[dict[str, tuple[str, int]]] = {}
    quiet: ClassVar[bool] = True

    def _site_path(self) -> str | None:
        """The site-relative file for the request, or None when there is none (404)."""
        url_path = unquote(urlsplit(self.path).path)
        rel = posixpath.normpath(url_path).lstrip("/")
        if rel in (".", ""):
            rel = "index.html"
        elif url_path.endswith("/"):
            rel = rel + "/index.html"
        if rel.startswith("..") or rel in HOST_FILES:
            return None
        full = Path(self.directory) / rel
        return rel if full.is_file() else None

    def send_head(self) -> Any:
        """Redirects, then directory URLs without a slash (301), files with our headers, else the 404 page."""
        url_path = urlsplit(self.path).path
        if url_path in self.redirects:
            target, status = self.redirects[url_path]
            self.send_response(status)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        rel = self._site_path()
        if rel is None and not url_path.endswith("/") and (Path(self.directory) / url_path.lstrip("/")).is_dir():
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", url_path + "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        status = HTTPStatus.OK
        if rel is None:
            status, rel = HTTPStatus.NOT_FOUND, "404.html"
            if not (Path(self.directory) / rel).is_file():
                self.send_error(HTTPStatus.NOT_FOUND)
                return None
        full = Path(self.directory) / rel
        f = full.open("rb")
        meta = headers_for(rel, [rel[:-3]] if rel.endswith(".gz") and (full.with_suffix("")).is_file() else [])
        self.send_response(status)
        self.send_header("Content-Type", meta.content_type)
        if meta.content_encoding:
            self.send_header("Content-Encoding", meta.content_encoding)
        self._rule_headers("/" + rel if status == HTTPStatus.OK else url_path, meta.cache_control)
        self.send_header("Content-Length", str(full.stat().st_size))
        self.end_headers()
        return f

    def _rule_headers(self, url_path: str, cache_control: str) -> None:
        sent: dict[str, str] = {}
        for rule in self.rules:
            if rule.matches(url_path):
                for name, value in rule.headers:
                    sent[name] = f"{sent[name]}, {value}" if name in sent else value
        sent.setdefault("Cache-Control", cache_control)
        for name, value in sent.items():
            self.send_header(name, value)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent unless asked (link checkers make thousands of requests)."""
        if not self.quiet:
            super().log_message(format, *args)


def make_server(site_dir: Path, host: str = "127.0.0.1", port: int = 0, *, quiet: bool = True) -> ThreadingHTTPServer:
    """A server for ``site_dir`` (port 0 picks a free one: read it from ``server.server_address``)."""
    site_dir = site_dir.resolve()
    headers = site_dir / "_headers"
    redirects = site_dir / "_redirects"
    attrs = {
        "rules": parse_headers(headers.read_text("utf-8")) if headers.is_file() else [],
        "redirects": parse_redirects(redirects.read_text("utf-8")) if redirects.is_file() else {},
        "quiet": quiet,
    }
    handler = type("BoundSiteHandler", (SiteHandler,), attrs)
    return ThreadingHTTPServer((host, port), functools.partial(handler, directory=str(site_dir)))
