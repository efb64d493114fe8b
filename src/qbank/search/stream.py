"""Pagefind fed page by page while mkdocs renders, instead of run over the written site at the build's end.

``pagefind --service`` reads each page as it is sent, in a process of its own: on a machine with a second core
the pages are indexed while the next ones render, and only the index itself is left to write at the end
(``finish``). The index means what Pagefind's own command writes over the same files with the same options
(``qbank.render.search.pagefind_command``): ``tests/search/test_stream.py`` and ``tests/site/test_build.py``
compare the two.

Pages are numbered in the order they are sent, which is mkdocs' render order, so the same site gives the same
bytes. A page the build wrote without passing through ``add`` (the theme's 404 page) is read from disk by
``finish``, so the index covers every HTML file of the site, as the command's walk does.

No thread talks to the service: every write to it also reads what it has answered so far (``select`` over both
pipes), so neither side can fill a pipe and wait for the other; once the index is asked for, ``poll`` takes the
answer in between pages. The index files come back in the answer to ``GetFiles`` and are written here, whole, by
a thread of their own while the build goes on: the service's own ``WriteFiles`` answers before its last writes
have landed (stopped then, it leaves a truncated ``pagefind-ui.js``), and it stops only once every process
holding its input pipe has let go, which card workers forked after it started never do until the build's end.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ..pipes import PIPE_SIZE, widen
from ..priority import lower
from ..render.pagefind_stable import stabilise
from .wire import SEPARATOR, Answer, answers, request

OUTPUT = "pagefind"
"""The index's folder inside the site."""
EXCLUDED = (".headerlink", "annotation")
"""Left out of the index: headings' permalink signs, and each formula's TeX source (MathML's ``<annotation>``,
which no reader sees: ``\\frac`` and every digit of the source were search words, a third of the index chunks
a first query fetches)."""
CONFIG: dict[str, Any] = {"force_language": "en", "exclude_selectors": list(EXCLUDED)}
"""The service's options, the same as ``pagefind_command``'s (``qbank.render.search``)."""
TIMEOUT = 600.0
"""Seconds the service may take to take a page or to answer (the command it replaces had the same limit)."""
READ = 1 << 16
BODY = re.compile(r"<[a-zA-Z][^>]*\sdata-pagefind-body[\s=/>]")
"""An element Pagefind indexes (when any page has one, pages without one are left out)."""


def executable() -> str:
    """The Pagefind binary of the ``pagefind[bin]`` wheel (or ``$PAGEFIND_BINARY_PATH``)."""
    from pagefind.service import get_executable  # the wheel's own lookup

    found = get_executable()
    if found is None:
        raise FileNotFoundError("no Pagefind binary: install the pagefind[bin] wheel")
    return str(found)


class SearchStream:
    """One site's search index: ``add`` each page as it is written, ``finish`` once the site is complete.

    A failure (the binary missing, the service stopping, a page it refuses) is kept, not raised: ``finish``
    returns it as the build's error, and every call after it does nothing."""

    def __init__(self, command: Sequence[str] | None = None, timeout: float = TIMEOUT) -> None:
        self.timeout = timeout
        self.failure: str | None = None
        self.errors: list[str] = []
        self.sent: set[str] = set()
        """The site-relative paths of the pages sent."""
        self.pending: dict[int, str] = {}
        """Pages sent and not yet answered, by message id."""
        self.answered: dict[int, Answer] = {}
        """Answers to the requests that are not pages."""
        self._last_id = 0
        self._partial: list[bytes] = []
        """Bytes of an answer not complete yet (the index comes back as one answer of megabytes)."""
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open for the service's life, closed by cancel
        self.index_id = 0
        self._index_request: int | None = None
        self._site: Path | None = None
        self._writer: threading.Thread | None = None
        self._write_failure: str | None = None
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                list(command) if command else [executable(), "--service"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            )
        except OSError as exc:
            self.proc = None
            self._fail(f"pagefind did not run: {exc}")
            return
        lower(self.proc.pid)  # it indexes while the build renders: the build goes first
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        for fd in (self._in, self._out):
            widen(fd)
        os.set_blocking(self._out, False)
        answer = self._call({"type": "NewIndex", "config": CONFIG})
        if answer is not None:
            self.index_id = int(answer.payload.get("index_id", 0))

    def add(self, path: str, html: str) -> None:
        """Send one page (``path`` relative to the site, as mkdocs writes it); a path sent before is skipped."""
        if self.failure is not None or path in self.sent:
            return
        if self._index_request is not None:
            self._fail(f"{path} was written after the search index was asked for")
            return
        self.sent.add(path)
        self._send({"type": "AddFile", "index_id": self.index_id, "file_path": path, "url": None,
                    "file_contents": html}, page=path)

    @property
    def asked(self) -> bool:
        """Whether the index has been asked for (no page may be added after)."""
        return self._index_request is not None

    def poll(self) -> None:
        """Take what the service has answered so far, without waiting: called between pages once the index is
        asked for, so the service is not held writing the index (megabytes) into a full pipe."""
        if self.proc is not None and self.failure is None:
            self._read()

    def request_index(self, site: Path) -> None:
        """Send the site's pages not sent yet and, once each is indexed, ask for the index: the service builds it
        while the build writes its other files. ``finish`` collects it (and asks, if this was not called)."""
        if self._index_request is not None or self.failure is not None:
            return
        for page in sorted(site.rglob("*.html")):
            rel = page.relative_to(site).as_posix()
            if rel not in self.sent and self.failure is None:
                self.add(rel, page.read_text("utf-8", errors="replace"))
        if self.failure is None:
            self._pump(b"", lambda: not self.pending)  # every page in before the index is built
        if self.failure is None:
            self._site = site
            self._send({"type": "GetFiles", "index_id": self.index_id}, index=True)

    def finish(self, site: Path) -> str | None:
        """Stop the service once it has handed the index back, and wait for the index to be written into
        ``site/pagefind``; returns an error message, or None when the index was written."""
        answer: Answer | None = None
        try:
            self.request_index(site)
            if self._index_request is not None and self.failure is None:
                answer = self._wait(self._index_request, "GetFiles")
        finally:
            self.cancel()
        if self._writer is not None:
            self._writer.join()
            if self._write_failure is not None:
                self._fail(self._write_failure)
        if answer is not None:
            self._check_unsent(site)
        if self.failure is not None:
            return self.failure
        if self.errors:
            more = f" (and {len(self.errors) - 3} more)" if len(self.errors) > 3 else ""
            return "pagefind could not index: " + "; ".join(self.errors[:3]) + more
        if not (site / OUTPUT / "pagefind.js").is_file():
            return f"pagefind wrote no index into {OUTPUT}/"
        stabilise(site / OUTPUT)  # the same pages give the same bytes: a deploy uploads what changed
        return None

    def _check_unsent(self, site: Path) -> None:
        """A page written after the index was asked for, with a body Pagefind would read, is missing from it."""
        for page in sorted(site.rglob("*.html")):
            rel = page.relative_to(site).as_posix()
            if rel not in self.sent and BODY.search(page.read_text("utf-8", errors="replace")):
                self._fail(f"{rel} was written after the search index was asked for and is not in it")
                return

    def _write(self, folder: Path, files: object) -> None:
        """Write the index files the service handed back (each ``{"path": ..., "content": base64}``): relative
        paths inside the folder only, each folder made once. Runs in its own thread: a problem is kept in
        ``_write_failure`` for ``finish``."""
        if not isinstance(files, list):
            self._write_failure = "pagefind sent no index files"
            return
        made: set[Path] = set()
        for item in files:
            path, content = (item.get("path"), item.get("content")) if isinstance(item, dict) else (None, None)
            parts = PurePosixPath(path).parts if isinstance(path, str) else ()
            if not parts or not isinstance(content, str) or parts[0] == "/" or ".." in parts or "\\" in str(path):
                self._write_failure = f"pagefind sent an index file this build will not write: {str(path)[:80]!r}"
                return
            try:
                data = base64.b64decode(content, validate=True)
            except binascii.Error:
                self._write_failure = f"pagefind sent {path} in a form this build cannot read"
                return
            target = folder.joinpath(*parts)
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            target.write_bytes(data)

    def cancel(self) -> None:
        """Stop the service if it still runs (it holds nothing unwritten: the index came back in an answer)."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    pipe.close()
            self.proc = None
        self._stderr.close()

    def _send(self, payload: dict[str, Any], page: str | None = None, *, index: bool = False) -> int:
        """Write one request, reading answers meanwhile: what its answer is for (a page, the index) is noted
        first, as the answer may come before the write returns."""
        self._last_id += 1
        if page is not None:
            self.pending[self._last_id] = page
        if index:
            self._index_request = self._last_id
        self._pump(request(self._last_id, payload), lambda: True)
        return self._last_id

    def _call(self, payload: dict[str, Any]) -> Answer | None:
        return self._wait(self._send(payload), str(payload["type"]))

    def _wait(self, message_id: int, kind: str) -> Answer | None:
        """The answer to one request (None after a failure; an ``Error`` answer is one)."""
        self._pump(b"", lambda: message_id in self.answered)
        answer = self.answered.pop(message_id, None)
        if answer is not None and answer.kind == "Error":
            self._fail(f"pagefind refused {kind}: {answer.payload.get('message', '')}")
            return None
        return answer

    def _pump(self, data: bytes, done: Callable[[], bool]) -> None:
        """Write ``data`` and read the answers that come meanwhile, until both are written and ``done()``; then
        read whatever else is there without waiting."""
        view = memoryview(data)
        deadline = time.monotonic() + self.timeout
        while self.failure is None and (view or not done()):
            left = deadline - time.monotonic()
            readable, writable, _ = select.select([self._out], [self._in] if view else [], [], max(left, 0))
            if not readable and not writable:
                self._fail(f"pagefind did not answer in {self.timeout:.0f} s")
                return
            if writable:
                try:
                    view = view[os.write(self._in, view[:READ]):]
                except BlockingIOError:
                    pass
                except OSError:
                    self._fail("pagefind stopped")
                    return
            if readable:
                self._read()
        if self.failure is None:
            self._read()

    def _read(self) -> None:
        """Read what the service has written, without waiting."""
        while self.failure is None:
            try:
                chunk = os.read(self._out, PIPE_SIZE)
            except BlockingIOError:
                return
            if not chunk:
                self._fail("pagefind stopped")
                return
            if SEPARATOR not in chunk:  # base64 holds no comma: the answer goes on (joined once, when complete)
                self._partial.append(chunk)
                continue
            try:
                done, rest = answers(b"".join([*self._partial, chunk]))
                self._partial = [rest] if rest else []
            except ValueError as exc:
                self._fail(str(exc))
                return
            for answer in done:
                self._take(answer)

    def _take(self, answer: Answer) -> None:
        path = self.pending.pop(answer.message_id, None) if answer.message_id is not None else None
        if path is not None:
            if answer.kind == "Error":
                self.errors.append(f"{path}: {answer.payload.get('message', '')}")
        elif answer.message_id is not None:
            self.answered[answer.message_id] = answer
            if answer.message_id == self._index_request and answer.kind == "GetFiles" and self._site is not None \
                    and not self.errors:
                # written by a thread while the build goes on (file writes let go of the GIL)
                self._writer = threading.Thread(target=self._write, args=(self._site / OUTPUT,
                                                                          answer.payload.get("files")))
                self._writer.start()
        elif answer.kind == "Error":
            self.errors.append(str(answer.payload.get("message", "")))

    def _fail(self, message: str) -> None:
        if self.failure is None:
            tail = ""
            try:
                self._stderr.seek(0)
                tail = self._stderr.read()[-500:].decode("utf-8", errors="replace").strip()
            except (OSError, ValueError):
                pass
            self.failure = f"{message}: {tail}" if tail else message
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
