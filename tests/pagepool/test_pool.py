"""The page worker (``qbank.pagepool.pool``): a real forked process, driven with work whose timing the test
controls through events shared across the fork, never with sleeps or timed assertions."""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

import pytest

from qbank.pagepool import pool
from qbank.pagepool.pool import PagePool, WorkerFailed, wanted

FORK = multiprocessing.get_context("fork")


def test_results_come_back_in_order_with_their_tags_from_another_process() -> None:
    gates = [FORK.Event() for _ in range(4)]

    def work(i: int) -> tuple[int, int]:
        gates[i].wait(30)  # item 3 is let through first, item 0 last
        return i * i, os.getpid()

    workers: PagePool[int, tuple[int, int], str] = PagePool(work)
    try:
        for i in range(4):
            workers.submit(i, f"page-{i}")
        assert list(workers.ready()) == [] and workers.outstanding == 4  # nothing done: nothing waited for
        for gate in reversed(gates):
            gate.set()
        got = list(workers.rest())
    finally:
        workers.close()
    assert [tag for tag, _ in got] == ["page-0", "page-1", "page-2", "page-3"]
    assert [square for _, (square, _) in got] == [0, 1, 4, 9]
    assert {pid for _, (_, pid) in got} != {os.getpid()} and len({pid for _, (_, pid) in got}) == 1
    assert workers.outstanding == 0


def test_ready_hands_over_only_what_follows_the_last_taken() -> None:
    first, second = FORK.Event(), FORK.Event()
    finished = FORK.Queue()

    def work(i: int) -> int:
        (first if i == 0 else second).wait(30)
        finished.put(i)
        return i

    workers: PagePool[int, int, int] = PagePool(work)
    try:
        workers.submit(0, 0)
        workers.submit(1, 1)
        first.set()
        assert finished.get(timeout=30) == 0
        taken: list[tuple[int, int]] = []
        while not taken:  # the result is on its way back: poll without blocking until it lands
            taken = list(workers.ready())
        assert taken == [(0, 0)] and workers.outstanding == 1
        second.set()
        assert list(workers.rest()) == [(1, 1)]
    finally:
        workers.close()


def test_large_items_both_ways_do_not_block_either_side() -> None:
    workers: PagePool[str, str, int] = PagePool(lambda text: text.upper() * 2)
    try:
        for i in range(12):
            workers.submit(chr(97 + i) * 1_000_000, i)  # a megabyte each way, far over a pipe's buffer
        got = list(workers.rest())
    finally:
        workers.close()
    assert [tag for tag, _ in got] == list(range(12))
    assert all(out == chr(65 + i) * 2_000_000 for i, (_, out) in enumerate(got))


def test_work_that_raises_fails_with_its_message() -> None:
    def work(i: int) -> int:
        if i == 1:
            raise KeyError("no such page")
        return i

    workers: PagePool[int, int, int] = PagePool(work)
    try:
        for i in range(3):
            workers.submit(i, i)
        got: list[tuple[int, int]] = []
        with pytest.raises(WorkerFailed, match=r"^KeyError: 'no such page'$"):
            for item in workers.rest():
                got.append(item)
        assert got == [(0, 0)]  # what came before the failure was handed over
    finally:
        workers.close()


def test_a_worker_that_dies_is_noticed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "POLL", 0.05)

    def work(i: int) -> int:
        if i == 2:
            os._exit(3)
        return i

    workers: PagePool[int, int, int] = PagePool(work)
    try:
        for i in range(4):
            workers.submit(i, i)
        with pytest.raises(WorkerFailed, match=r"^the page worker stopped \(exit code 3\)$"):
            list(workers.rest())
    finally:
        workers.close()


def test_close_stops_a_busy_worker_and_a_finished_one() -> None:
    never = FORK.Event()
    busy: PagePool[int, bool, int] = PagePool(lambda _: never.wait(600))
    busy.submit(0, 0)
    busy.close()  # a result is owed (a failed build): the worker is stopped, not waited for
    assert not busy._process.is_alive() and busy._process.exitcode is not None and busy._process.exitcode < 0
    done: PagePool[int, int, int] = PagePool(lambda i: i)
    done.submit(5, 0)
    assert list(done.rest()) == [(0, 5)]
    done.close()  # nothing owed: the worker ends its loop and exits cleanly
    assert done._process.exitcode == 0


@pytest.mark.parametrize(
    ("pages", "cpus", "method", "handlers", "expected"),
    [
        (pool.MIN_PAGES, 2, "fork", 1, True),
        (pool.MIN_PAGES - 1, 2, "fork", 1, False),  # too few pages to pay for the fork
        (pool.MIN_PAGES, 1, "fork", 1, False),  # no second CPU
        (pool.MIN_PAGES, 2, "spawn", 1, False),  # a threaded process (qbank serve) may not fork
        (pool.MIN_PAGES, 2, "fork", 2, False),  # another plugin handles page_content after the hook
        (10_000, 16, "fork", 1, True),
    ],
)
def test_when_a_build_uses_the_worker(pages: int, cpus: int, method: str, handlers: int, expected: bool) -> None:
    assert wanted(pages, cpus, method, handlers) is expected


def test_the_worker_starts_with_the_parents_state() -> None:
    state: dict[str, Any] = {"key": os.urandom(8)}
    workers: PagePool[str, Any, None] = PagePool(lambda name: state[name])
    try:
        workers.submit("key", None)
        assert list(workers.rest()) == [(None, state["key"])]
    finally:
        workers.close()


def test_close_ends_the_worker_even_when_a_later_fork_holds_its_pipe() -> None:
    """The card workers are forked after the page worker and inherit its pipes: the worker must still be told to
    stop (a ``None``), not left to wait for an end of pipe that never comes (and then be killed)."""
    done: PagePool[int, int, int] = PagePool(lambda i: i + 1)
    hold = FORK.Event()
    later = FORK.Process(target=hold.wait, args=(60,))
    later.start()
    try:
        done.submit(1, 0)
        assert list(done.rest()) == [(0, 2)]
        done.close()
        assert done._process.exitcode == 0
    finally:
        hold.set()
        later.join()


def test_the_worker_runs_below_the_build() -> None:
    from qbank.priority import NICE

    ours = os.getpriority(os.PRIO_PROCESS, 0)
    workers: PagePool[int, int, int] = PagePool(lambda _: os.getpriority(os.PRIO_PROCESS, 0))
    try:
        workers.submit(0, 0)
        assert list(workers.rest()) == [(0, min(ours + NICE, 19))]
    finally:
        workers.close()


def test_handing_over_to_a_worker_that_has_died_fails_with_a_message() -> None:
    workers: PagePool[int, int, int] = PagePool(lambda _: os._exit(4))
    try:
        workers.submit(0, 0)
        workers._process.join(30)
        with pytest.raises(WorkerFailed, match=r"^the page worker stopped \(exit code 4\)$"):
            workers.submit(1, 1)
    finally:
        workers.close()
