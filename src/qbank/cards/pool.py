"""Making a build's cards in worker processes while mkdocs renders the pages in the build's own process.

The build knows every generated page's card text (free fields only) before it renders anything, so it hands
the cards over as soon as the site folder is clean; the hand-written pages' cards follow once mkdocs has read
them. The workers write the cards straight into the site; the build waits for all of them at its end, and a
card that fails fails the build (``qbank build`` then throws the folder away: nothing half-written is swapped
in). Cards whose entry is in the card store are copied, not drawn: by the workers too when there are many (a
build from a warm store copies every card, a second or more of file copies at 5,000 pages that would otherwise
wait for the build's end), in this process at the end when there are few.

The workers are direct children of the build, so that once joined their CPU time is in the build's own
``RUSAGE_CHILDREN`` (what ``bench/build.py`` reports). They are forked when the build's process has a single
thread (``qbank build``, ``mkdocs build``: no start-up, nothing imported again, the caller's script not run
again) and spawned otherwise (``qbank serve`` has server threads, and forking a threaded process is unsafe).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..priority import lower_this_process
from .cache import card_key, entry_path
from .make import CardJob, make_card

BATCH = 16
"""Cards per task handed to a worker (about a third of a second of drawing)."""
MIN_POOL = 64
"""Fewer cards to draw than this are drawn in the build's own process: starting a worker costs more."""
MIN_COPY = 256
"""Fewer stored cards than this (and too few to draw for a pool) are copied in the build's own process."""
COPY_BATCH = 128
"""Stored cards per task handed to a worker (a copy costs a fraction of a millisecond)."""
MAX_WORKERS = 8


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def default_workers() -> int:
    """Worker processes for a build: one per usable CPU (the build's own process renders meanwhile and waits
    at the end), none on a single CPU, where drawing in the build's own process costs no start-up."""
    cpus = usable_cpus()
    return 0 if cpus < 2 else min(cpus, MAX_WORKERS)


def start_method() -> str:
    """``fork`` in a single-threaded process where it exists, ``spawn`` otherwise."""
    single = threading.active_count() == 1
    return "fork" if single and "fork" in multiprocessing.get_all_start_methods() else "spawn"


def make_cards(site: str, cache: str | None, jobs: list[CardJob]) -> int:
    """A worker's task: make ``jobs`` in ``site``; returns how many were drawn."""
    store = Path(cache) if cache is not None else None
    return sum(make_card(Path(site), job, store) for job in jobs)


@dataclass(frozen=True)
class CardCounts:
    """What a build's cards came to."""

    cards: int
    drawn: int


class CardDrawing:
    """The cards of one build: ``add`` them as their pages become known, ``finish`` at the build's end."""

    def __init__(self, site: Path, cache: Path | None, workers: int | None = None, *, min_pool: int = MIN_POOL,
                 batch: int = BATCH, method: str | None = None, min_copy: int = MIN_COPY,
                 copy_batch: int = COPY_BATCH) -> None:
        self.site, self.cache = site, cache
        self.workers = default_workers() if workers is None else workers
        self.min_pool, self.batch, self.method = min_pool, batch, method
        self.min_copy, self.copy_batch = min_copy, copy_batch
        self.paths: set[str] = set()
        self.keys: set[str] = set()
        """The store entries this build's cards use (a full build prunes the others)."""
        self.here: list[CardJob] = []
        self.tasks: list[Future[int]] = []
        self.executor: ProcessPoolExecutor | None = None

    def add(self, jobs: Iterable[CardJob]) -> None:
        """Start making the cards of ``jobs`` (a path already added is skipped)."""
        to_draw: list[CardJob] = []
        to_copy: list[CardJob] = []
        for job in jobs:
            if job[0] in self.paths:
                continue
            self.paths.add(job[0])
            key = card_key(job[1])
            self.keys.add(key)
            stored = self.cache is not None and entry_path(self.cache, key).is_file()
            (to_copy if stored else to_draw).append(job)
        few = len(to_draw) < self.min_pool and len(to_copy) < self.min_copy
        if self.executor is None and (self.workers < 1 or few):
            self.here.extend(to_copy + to_draw)
            return
        if self.executor is None:
            tasks = -(-len(to_draw) // self.batch) + -(-len(to_copy) // self.copy_batch)
            self.executor = ProcessPoolExecutor(min(self.workers, tasks), initializer=lower_this_process,
                                                mp_context=multiprocessing.get_context(self.method or start_method()))
        site, cache = str(self.site), str(self.cache) if self.cache is not None else None
        for group, size in ((to_draw, self.batch), (to_copy, self.copy_batch)):
            for start in range(0, len(group), size):
                self.tasks.append(self.executor.submit(make_cards, site, cache, group[start:start + size]))

    def finish(self) -> CardCounts:
        """Make the cards left to this process, wait for the workers and stop them; raises the first failure
        (the remaining tasks are cancelled)."""
        try:
            drawn = sum(make_card(self.site, job, self.cache) for job in self.here)
            drawn += sum(task.result() for task in self.tasks)
        finally:
            self.cancel()
        return CardCounts(len(self.paths), drawn)

    def cancel(self) -> None:
        """Stop the workers (tasks not started are dropped) and wait for them to exit."""
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
