"""One worker process that does the pages' content work while the build's own process renders Markdown.

mkdocs renders a site in one process: each page's Markdown, then the hooks' work on its content, page after
page. The content work (``content.py``) needs nothing the next page's Markdown needs, so it can run on the
other core: the build hands each page over as mkdocs renders it (``submit``), takes the results that are ready
between pages, in the order the pages were handed over (``ready``), and waits for the rest once mkdocs has
rendered every page (``rest``), before any template is rendered.

The worker is forked, so it starts with the build's state (its release key, settings, memos) and imports
nothing again; the caller forks it only from a process with one thread (``qbank.cards.pool.start_method``).
Items and results travel through two ``multiprocessing`` queues, whose feeder threads write in the background,
so neither side can block the other with a large page. The worker is a direct child: once joined its CPU time
is in the build's ``RUSAGE_CHILDREN``.
"""

from __future__ import annotations

import multiprocessing
import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
Tag = TypeVar("Tag")

POLL = 1.0
"""Seconds between checks that the worker is still alive while waiting for a result."""


class WorkerFailed(RuntimeError):
    """The worker raised, or stopped, before handing a result back."""


@dataclass(frozen=True)
class Crashed:
    """What the worker hands back for an item whose work raised (the work should return failures as data)."""

    message: str


def _serve(work: Callable[[Any], Any], jobs: Any, results: Any) -> None:
    """The worker's loop: do each item's work, in order, until the ``None`` that ends it."""
    while (job := jobs.get()) is not None:
        number, item = job
        try:
            out = work(item)
        except Exception as exc:  # handed back, so the build fails with a message instead of waiting forever
            out = Crashed(f"{type(exc).__name__}: {exc}")
        results.put((number, out))


class PagePool(Generic[Item, Result, Tag]):
    """``work`` done in one forked worker; results come back with the caller's tag, in submission order."""

    def __init__(self, work: Callable[[Item], Result]) -> None:
        context = multiprocessing.get_context("fork")
        self._jobs: Any = context.Queue()
        self._results: Any = context.Queue()
        self._process = context.Process(target=_serve, args=(work, self._jobs, self._results), daemon=True,
                                        name="qbank-pages")
        self._process.start()
        self._tags: list[Tag] = []
        self._done: dict[int, Result] = {}
        self._taken = 0

    @property
    def outstanding(self) -> int:
        """Items handed over whose result has not been taken."""
        return len(self._tags) - self._taken

    def submit(self, item: Item, tag: Tag) -> None:
        """Hand ``item`` to the worker; its result comes back with ``tag``."""
        self._jobs.put((len(self._tags), item))
        self._tags.append(tag)

    def ready(self) -> Iterator[tuple[Tag, Result]]:
        """The results that have come back, without waiting, as long as they follow the last one taken."""
        while True:
            try:
                number, out = self._results.get_nowait()
            except queue.Empty:
                break
            self._done[number] = out
        yield from self._in_order()

    def rest(self) -> Iterator[tuple[Tag, Result]]:
        """Every result not taken yet, in order, waiting for each; ``WorkerFailed`` when the worker has died."""
        yield from self.ready()
        while self.outstanding:
            try:
                number, out = self._results.get(timeout=POLL)
            except queue.Empty:
                if not self._process.is_alive():
                    raise WorkerFailed(f"the page worker stopped (exit code {self._process.exitcode})") from None
                continue
            self._done[number] = out
            yield from self._in_order()

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
        if self._process.is_alive():
            if self.outstanding:
                self._process.terminate()
            else:
                self._jobs.put(None)
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        for q in (self._jobs, self._results):
            q.close()
            q.cancel_join_thread()


MIN_PAGES = 64
"""Fewer pages than this are done in the build's own process: forking a worker costs more than it saves."""


def wanted(pages: int, cpus: int, method: str, content_handlers: int) -> bool:
    """Whether a build should hand its pages' content work to a worker: enough ``pages``, a second CPU, a
    process that may fork (``method``, from ``qbank.cards.pool.start_method``) and qbank's hook the only
    handler of mkdocs' ``page_content`` event (another plugin's handler would see the content before it is
    sealed, and its changes would be lost)."""
    return pages >= MIN_PAGES and cpus >= 2 and method == "fork" and content_handlers == 1
