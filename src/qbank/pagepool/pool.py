"""One worker process that does the pages' content work while the build's own process renders Markdown.

mkdocs renders a site in one process: each page's Markdown, then the hooks' work on its content, page after
page. The content work (``content.py``) needs nothing the next page's Markdown needs, so it can run on the
other core: the build hands each page over as mkdocs renders it (``submit``), takes the results that are ready
between pages, in the order the pages were handed over (``ready``), and waits for the rest once mkdocs has
rendered every page (``rest``), before any template is rendered.

The worker is forked, so it starts with the build's state (its release key, settings, memos) and imports
nothing again; the caller forks it only from a process with one thread (``qbank.cards.pool.start_method``).
Items and results travel as length-framed pickles through two pipes that this process writes and reads
without ever waiting (what a full pipe does not take is kept and written at the next call): no thread of
this process competes with the build for the interpreter lock, and neither side can block the other with a
large page. The worker is a direct child: once joined its CPU time is in the build's ``RUSAGE_CHILDREN``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import select
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..pipes import PIPE_SIZE, widen
from ..priority import lower_this_process

Item = TypeVar("Item")
Result = TypeVar("Result")
Tag = TypeVar("Tag")

POLL = 1.0
"""Seconds between checks that the worker is still alive while waiting for a result."""
FRAME = struct.Struct(">Q")
READ = 1 << 20


class WorkerFailed(RuntimeError):
    """The worker raised, or stopped, before handing a result back."""


@dataclass(frozen=True)
class Crashed:
    """What the worker hands back for an item whose work raised (the work should return failures as data)."""

    message: str


def _frame(value: object) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return FRAME.pack(len(data)) + data


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from a blocking descriptor; None at its end."""
    parts: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, READ))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _serve(work: Callable[[Any], Any], jobs: int, results: int) -> None:
    """The worker's loop: do each item's work, in order, until the ``None`` (or the end of the pipe) that ends
    it."""
    lower_this_process()  # the build's own process renders the next pages meanwhile: it goes first
    while (head := _read_exactly(jobs, FRAME.size)) is not None:
        body = _read_exactly(jobs, FRAME.unpack(head)[0])
        job = pickle.loads(body) if body is not None else None
        if job is None:
            return
        number, item = job
        try:
            out = work(item)
        except Exception as exc:  # handed back, so the build fails with a message instead of waiting forever
            out = Crashed(f"{type(exc).__name__}: {exc}")
        _write_all(results, _frame((number, out)))


class PagePool(Generic[Item, Result, Tag]):
    """``work`` done in one forked worker; results come back with the caller's tag, in submission order."""

    def __init__(self, work: Callable[[Item], Result]) -> None:
        job_read, self._jobs = os.pipe()
        self._results, result_write = os.pipe()
        for fd in (self._jobs, self._results):
            widen(fd)
        context = multiprocessing.get_context("fork")
        self._process = context.Process(target=_serve, args=(work, job_read, result_write), daemon=True,
                                        name="qbank-pages")
        try:
            self._process.start()
        finally:
            os.close(job_read)
            os.close(result_write)
        os.set_blocking(self._jobs, False)
        os.set_blocking(self._results, False)
        self._unsent = bytearray()
        self._received = bytearray()
        self._tags: list[Tag] = []
        self._done: dict[int, Result] = {}
        self._taken = 0
        self._closed = False
        self._ended = False

    @property
    def outstanding(self) -> int:
        """Items handed over whose result has not been taken."""
        return len(self._tags) - self._taken

    def submit(self, item: Item, tag: Tag) -> None:
        """Hand ``item`` to the worker (written now as far as the pipe takes it); its result comes back with
        ``tag``."""
        self._unsent += _frame((len(self._tags), item))
        self._tags.append(tag)
        self._send()

    def ready(self) -> Iterator[tuple[Tag, Result]]:
        """The results that have come back, without waiting, as long as they follow the last one taken."""
        self._send()
        self._receive()
        yield from self._in_order()

    def rest(self) -> Iterator[tuple[Tag, Result]]:
        """Every result not taken yet, in order, waiting for each; ``WorkerFailed`` when the worker has died."""
        yield from self.ready()
        while self.outstanding:
            if self._ended:
                self._process.join(timeout=POLL)
                raise WorkerFailed(f"the page worker stopped (exit code {self._process.exitcode})")
            readable, writable, _ = select.select([self._results], [self._jobs] if self._unsent else [], [], POLL)
            if not readable and not writable and not self._process.is_alive():
                raise WorkerFailed(f"the page worker stopped (exit code {self._process.exitcode})")
            yield from self.ready()

    def _send(self) -> None:
        while self._unsent:
            try:
                with memoryview(self._unsent) as view, view[:PIPE_SIZE] as chunk:  # no copy of what waits
                    written = os.write(self._jobs, chunk)
            except BlockingIOError:
                return
            except BrokenPipeError:
                raise WorkerFailed(f"the page worker stopped (exit code {self._process.exitcode})") from None
            del self._unsent[:written]

    def _receive(self) -> None:
        while True:
            try:
                chunk = os.read(self._results, READ)
            except BlockingIOError:
                break
            if not chunk:  # the worker has exited: what it wrote is all there is
                self._ended = True
                break
            self._received += chunk
        while len(self._received) >= FRAME.size:
            size = FRAME.unpack_from(self._received)[0]
            if len(self._received) < FRAME.size + size:
                break
            number, out = pickle.loads(self._received[FRAME.size:FRAME.size + size])
            del self._received[:FRAME.size + size]
            self._done[number] = out

    def _in_order(self) -> Iterator[tuple[Tag, Result]]:
        while self._taken in self._done:
            out = self._done.pop(self._taken)
            tag = self._tags[self._taken]
            self._taken += 1
            if isinstance(out, Crashed):
                raise WorkerFailed(out.message)
            yield tag, out

    def close(self) -> None:
        """Stop the worker: at once when results are still owed (a failed build), else after its last item."""
        if self._closed:
            return
        self._closed = True
        if self._process.is_alive() and self.outstanding:
            self._process.terminate()
        elif self._process.is_alive():  # the None that ends its loop (processes forked since hold the pipe too)
            os.set_blocking(self._jobs, True)
            with contextlib.suppress(BrokenPipeError):
                _write_all(self._jobs, bytes(self._unsent) + _frame(None))
        os.close(self._jobs)
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        os.close(self._results)


MIN_PAGES = 64
"""Fewer pages than this are done in the build's own process: forking a worker costs more than it saves."""


def wanted(pages: int, cpus: int, method: str, content_handlers: int) -> bool:
    """Whether a build should hand its pages' content work to a worker: enough ``pages``, a second CPU, a
    process that may fork (``method``, from ``qbank.cards.pool.start_method``) and qbank's hook the only
    handler of mkdocs' ``page_content`` event (another plugin's handler would see the content before it is
    sealed, and its changes would be lost)."""
    return pages >= MIN_PAGES and cpus >= 2 and method == "fork" and content_handlers == 1
