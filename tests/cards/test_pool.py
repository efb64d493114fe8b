"""Cards made in worker processes: the same bytes as drawn in the build's process, failures fail the build."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from qbank.cards import pool
from qbank.cards.cache import card_key, entry_path
from qbank.cards.make import CardJob
from qbank.cards.pool import CardDrawing, default_workers

JOBS: list[CardJob] = [
    (f"assets/cards/q-{i}.png", (f"Question {i}: how the batch scales" + " long" * (i % 7), "Question · Topic",
                                "footer", "Prefill"))
    for i in range(9)
]


def files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_write_the_bytes_this_process_draws(tmp_path: Path, method: str) -> None:
    here = CardDrawing(tmp_path / "here", None, workers=0)
    here.add(JOBS)
    assert here.finish().drawn == len(JOBS) and here.executor is None
    pooled = CardDrawing(tmp_path / "pool", tmp_path / "cache", workers=2, min_pool=1, batch=2, method=method)
    pooled.add(JOBS[:5])
    assert pooled.executor is not None  # started: enough cards to draw
    pooled.add(JOBS[3:])  # the hand-written pages' cards, later; a path added twice is made once
    counts = pooled.finish()
    assert (counts.cards, counts.drawn) == (len(JOBS), len(JOBS))
    assert pooled.executor is None  # workers stopped
    assert files(tmp_path / "pool") == files(tmp_path / "here")
    assert pooled.keys == {card_key(text) for _, text in JOBS}
    assert all(entry_path(tmp_path / "cache", k).is_file() for k in pooled.keys)


def test_stored_cards_are_copied_without_workers(tmp_path: Path) -> None:
    first = CardDrawing(tmp_path / "a", tmp_path / "cache", workers=2, min_pool=1)
    first.add(JOBS)
    first.finish()
    again = CardDrawing(tmp_path / "b", tmp_path / "cache", workers=2, min_pool=1)
    again.add(JOBS)
    assert again.executor is None
    assert again.finish().drawn == 0
    assert files(tmp_path / "b") == files(tmp_path / "a")


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_many_stored_cards_are_copied_by_the_workers(tmp_path: Path, method: str) -> None:
    first = CardDrawing(tmp_path / "a", tmp_path / "cache", workers=0)
    first.add(JOBS)
    first.finish()
    again = CardDrawing(tmp_path / "b", tmp_path / "cache", workers=2, min_pool=1, min_copy=len(JOBS), copy_batch=4,
                        method=method)
    again.add(JOBS[:-1])
    assert again.executor is None and len(again.here) == len(JOBS) - 1  # one card fewer than min_copy: here
    more = CardDrawing(tmp_path / "c", tmp_path / "cache", workers=2, min_pool=1, min_copy=len(JOBS), copy_batch=4,
                       method=method)
    more.add(JOBS)
    assert more.executor is not None and not more.here and len(more.tasks) == 3  # 9 copies in batches of 4
    assert more.finish() == pool.CardCounts(len(JOBS), 0)
    assert files(tmp_path / "c") == files(tmp_path / "a")


def test_few_cards_are_drawn_in_this_process(tmp_path: Path) -> None:
    drawing = CardDrawing(tmp_path / "site", None, workers=2, min_pool=len(JOBS) + 1)
    drawing.add(JOBS)
    assert drawing.executor is None and drawing.finish().drawn == len(JOBS)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_card_that_fails_fails_finish(tmp_path: Path, workers: int) -> None:
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "assets" / "cards").write_text("a file where the cards' folder goes")
    drawing = CardDrawing(site, None, workers=workers, min_pool=1, batch=2)
    drawing.add(JOBS)
    with pytest.raises(OSError):
        drawing.finish()
    assert drawing.executor is None


def test_cancel_stops_the_workers(tmp_path: Path) -> None:
    drawing = CardDrawing(tmp_path / "site", None, workers=1, min_pool=1, batch=1)
    drawing.add(JOBS)
    executor = drawing.executor
    assert executor is not None
    drawing.cancel()
    assert drawing.executor is None
    with pytest.raises(RuntimeError):  # shut down: takes no more work
        executor.submit(print)


def test_a_threaded_process_spawns_its_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setattr(pool.threading, "active_count", lambda: 1)
        assert pool.start_method() == "fork"
    stop = threading.Event()
    server = threading.Thread(target=stop.wait)
    server.start()
    try:
        assert pool.start_method() == "spawn"
    finally:
        stop.set()
        server.join()


@pytest.mark.parametrize(("cpus", "workers"), [(1, 0), (2, 2), (3, 3), (64, 8)])
def test_one_worker_per_usable_cpu_and_none_on_one(monkeypatch: pytest.MonkeyPatch, cpus: int, workers: int) -> None:
    monkeypatch.setattr(pool, "usable_cpus", lambda: cpus)
    assert default_workers() == workers


def test_card_workers_run_below_the_build(tmp_path: Path) -> None:
    import os
    from concurrent.futures import ProcessPoolExecutor

    from qbank.priority import NICE

    drawing = CardDrawing(tmp_path / "site", None, workers=1, min_pool=1, method="fork")
    drawing.add([("a/card.png", ("A title", "Question · Topic", "footer", "Prefill"))])
    try:
        executor = drawing.executor
        assert isinstance(executor, ProcessPoolExecutor)
        seen = executor.submit(os.getpriority, os.PRIO_PROCESS, 0).result()
        assert seen == min(os.getpriority(os.PRIO_PROCESS, 0) + NICE, 19)
    finally:
        drawing.cancel()
