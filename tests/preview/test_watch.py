"""`qbank serve` hears saves from the kernel, and only saves: reading a watched file (every check and build reads
them all) must not set off a rebuild, or each rebuild would start the next."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from mkdocs.livereload import LiveReloadServer
from watchdog.events import FileSystemEvent, FileSystemEventHandler

from qbank.preview.serve import listen_for_saves

DEADLINE_S = 20.0


def test_reads_are_not_saves_and_writes_are(tmp_path: Path) -> None:
    watched = tmp_path / "answers"
    watched.mkdir()
    (watched / "read.md").write_text("read me\n")
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    listen_for_saves(server)
    seen: list[str] = []
    sentinel = threading.Event()

    def on_event(event: FileSystemEvent) -> None:
        if not event.is_directory:
            seen.append(Path(str(event.src_path)).name)
            if Path(str(event.src_path)).name == "saved.md":
                sentinel.set()

    handler = FileSystemEventHandler()
    handler.on_any_event = on_event  # type: ignore[method-assign]
    server.observer.schedule(handler, str(watched), recursive=True)
    server.observer.start()
    try:
        end = time.monotonic() + DEADLINE_S
        while not (watched / "probe.md").exists() or "probe.md" not in seen:  # the watch is live once it hears one
            assert time.monotonic() < end, "the observer never heard a write"
            (watched / "probe.md").write_text(str(time.monotonic()))
            time.sleep(0.05)
        seen.clear()
        assert (watched / "read.md").read_text() == "read me\n"
        (watched / "saved.md").write_text("a save\n")  # events arrive in order: the read's would come first
        assert sentinel.wait(DEADLINE_S)
        assert "read.md" not in seen and "saved.md" in seen, seen
    finally:
        server.observer.stop()
        server.observer.join()
