"""Pagefind fed page by page while mkdocs renders, instead of run over the written site at the build's end.

``pagefind --service`` reads each page as it is sent, in a process of its own: on a machine with a second core
the pages are indexed while the next ones render, and only the index itself is left to write at the end
(``finish``). The index is the one Pagefind's own command writes over the same files with the options qbank
has always given it (``--force-language en --exclude-selectors .headerlink``): ``tests/search/test_stream.py``
compares the two byte for byte.

Pages are numbered in the order they are sent, which is mkdocs' render order, so the same site gives the same
bytes. A page the build wrote without passing through ``add`` (the theme's 404 page) is read from disk by
``finish``, so the index covers every HTML file of the site, as the command's walk does.

No thread: every write to the service also reads what it has answered so far (``select`` over both pipes), so
neither side can fill a pipe and wait for the other. The index files come back in the answer to ``GetFiles`` and
are written here, whole: the service's own ``WriteFiles`` answers before its last writes have landed (stopped
then, it leaves a truncated ``pagefind-ui.js``), and it stops only once every process holding its input pipe
has let go, which card workers forked after it started never do until the build's end.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import fcntl
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..render.pagefind_stable import stabilise
from .wire import Answer, answers, request

OUTPUT = "pagefind"
"""The index's folder inside the site."""
CONFIG: dict[str, Any] = {"force_language": "en", "exclude_selectors": [".headerlink"]}
"""The service's options: the same as the command line's ``--force-language en --exclude-selectors .headerlink``."""
TIMEOUT = 600.0
"""Seconds the service may take to take a page or to answer (the command it replaces had the same limit)."""
READ = 1 << 16
PIPE_SIZE = 1 << 20
"""Bytes the pipe to the service holds (Linux's default most, ``/proc/sys/fs/pipe-max-size``): a few pages, so the
build hands a page over and renders on while Pagefind is still reading the last one."""


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
        self._buffer = b""
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open for the service's life, closed by cancel
        self.index_id = 0
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                list(command) if command else [executable(), "--service"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            )
        except OSError as exc:
            self.proc = None
            self._fail(f"pagefind did not run: {exc}")
            return
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        with contextlib.suppress(OSError, AttributeError):  # not Linux, or a lower limit: only waits more
            fcntl.fcntl(self._in, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        os.set_blocking(self._out, False)
        answer = self._call({"type": "NewIndex", "config": CONFIG})
        if answer is not None:
            self.index_id = int(answer.payload.get("index_id", 0))

    def add(self, path: str, html: str) -> None:
        """Send one page (``path`` relative to the site, as mkdocs writes it); a path sent before is skipped."""
        if self.failure is not None or path in self.sent:
            return
        self.sent.add(path)
        self._send({"type": "AddFile", "index_id": self.index_id, "file_path": path, "url": None,
                    "file_contents": html}, page=path)

    def finish(self, site: Path) -> str | None:
        """Send the site's pages not sent yet, stop the service once it has handed the index back, and write the
        index into ``site/pagefind``; returns an error message, or None when the index was written."""
        answer: Answer | None = None
        try:
            for page in sorted(site.rglob("*.html")):
                rel = page.relative_to(site).as_posix()
                if rel not in self.sent and self.failure is None:
                    self.add(rel, page.read_text("utf-8", errors="replace"))
            if self.failure is None:
                self._pump(b"", lambda: not self.pending)
            answer = self._call({"type": "GetFiles", "index_id": self.index_id}) if self.failure is None else None
        finally:
            self.cancel()
        if answer is not None and not self.errors:
            self._write(site / OUTPUT, answer.payload.get("files"))
        if self.failure is not None:
            return self.failure
        if self.errors:
            more = f" (and {len(self.errors) - 3} more)" if len(self.errors) > 3 else ""
            return "pagefind could not index: " + "; ".join(self.errors[:3]) + more
        if not (site / OUTPUT / "pagefind.js").is_file():
            return f"pagefind wrote no index into {OUTPUT}/"
        stabilise(site / OUTPUT)  # the same pages give the same bytes: a deploy uploads what changed
        return None

    def _write(self, folder: Path, files: object) -> None:
        """Write the index files the service handed back (each ``{"path": ..., "content": base64}``)."""
        if not isinstance(files, list):
            self._fail("pagefind sent no index files")
            return
        root = folder.resolve()
        for item in files:
            path, content = (item.get("path"), item.get("content")) if isinstance(item, dict) else (None, None)
            target = (folder / str(path)).resolve()
            if not isinstance(path, str) or not isinstance(content, str) or not target.is_relative_to(root) \
                    or target == root:
                self._fail(f"pagefind sent an index file this build will not write: {str(path)[:80]!r}")
                return
            try:
                data = base64.b64decode(content, validate=True)
            except binascii.Error:
                self._fail(f"pagefind sent {path} in a form this build cannot read")
                return
            target.parent.mkdir(parents=True, exist_ok=True)
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

    def _send(self, payload: dict[str, Any], page: str | None = None) -> int:
        """Write one request, reading answers meanwhile (a page's answer may come before the write returns)."""
        self._last_id += 1
        if page is not None:
            self.pending[self._last_id] = page
        self._pump(request(self._last_id, payload), lambda: True)
        return self._last_id

    def _call(self, payload: dict[str, Any]) -> Answer | None:
        message_id = self._send(payload)
        self._pump(b"", lambda: message_id in self.answered)
        answer = self.answered.pop(message_id, None)
        if answer is not None and answer.kind == "Error":
            self._fail(f"pagefind refused {payload['type']}: {answer.payload.get('message', '')}")
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
                chunk = os.read(self._out, READ)
            except BlockingIOError:
                return
            if not chunk:
                self._fail("pagefind stopped")
                return
            try:
                done, self._buffer = answers(self._buffer + chunk)
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
