"""What a script may see (``verify/sandbox/view.py``), driven directly on folders made here (no sandbox started)."""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

import pytest

from qbank.verify.sandbox import view
from qbank.verify.sandbox.bwrap import Bind


def test_the_lists_named_in_full() -> None:
    assert view.SYSTEM_LIBS == ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/etc/ld.so.cache")
    assert view.TOOLCHAIN == ("/usr/bin", "/bin", "/usr/include", "/usr/libexec")
    assert view.LIBCUDA_DIRS == (
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/local/nvidia/lib64",
        "/usr/lib/wsl/lib",
    )


def _driver(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "libcuda.so.1").write_bytes(b"")
    return folder


def test_libcuda_searches_the_extra_list_first_then_the_known_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _driver(tmp_path / "first"), _driver(tmp_path / "second")
    known = _driver(tmp_path / "known")
    monkeypatch.setattr(view, "LIBCUDA_DIRS", (str(tmp_path / "absent"), str(known)))
    assert view.libcuda_dir(f"{tmp_path / 'none'}:{second}:{first}") == str(second)
    assert view.libcuda_dir(str(tmp_path / "none")) == str(known)
    assert view.libcuda_dir(None) == str(known)
    assert view.libcuda_dir() == str(known)
    monkeypatch.setattr(view, "LIBCUDA_DIRS", (str(tmp_path / "absent"),))
    assert view.libcuda_dir(str(tmp_path / "none")) is None
    assert view.libcuda_dir(None) is None


def test_libcuda_skips_empty_entries_of_the_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty entry (``::``, a trailing ``:``) is not the working directory, even when it holds the library."""
    _driver(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(view, "LIBCUDA_DIRS", ())
    assert view.libcuda_dir("") is None
    assert view.libcuda_dir("::") is None


def test_libcuda_folder_is_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _driver(tmp_path / "real")
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setattr(view, "LIBCUDA_DIRS", ())
    assert view.libcuda_dir(str(tmp_path / "link")) == str(real)


def test_roots_are_the_binds_then_the_symlinks() -> None:
    v = view.View(
        binds=[Bind(dest="/usr/lib", src="/usr/lib"), Bind(dest="/venv", fd=9)],
        symlinks=[("usr/lib", "/lib"), ("usr/lib64", "/lib64")],
    )
    assert v.roots == ["/usr/lib", "/venv", "/lib", "/lib64"]
    assert view.View().roots == []


def test_close_closes_every_descriptor_once_and_forgets_them(tmp_path: Path) -> None:
    a = os.open(tmp_path, os.O_PATH)
    b = os.open(tmp_path, os.O_PATH)
    os.close(b)  # already closed: its error is swallowed, and the rest are still closed
    c = os.open(tmp_path, os.O_PATH)
    v = view.View(fds=[a, b, c])
    v.close()
    assert v.fds == []
    for fd in (a, c):
        with pytest.raises(OSError):
            os.fstat(fd)
    v.close()  # nothing left to close


@pytest.mark.parametrize(
    ("path", "roots", "covered"),
    [
        ("/a/b", ["/a/b"], True),
        ("/a/b/c", ["/a/b"], True),
        ("/a/b/c", ["/x", "/a/b/"], True),
        ("/a/bc", ["/a/b"], False),
        ("/a", ["/a/b"], False),
        ("/anything", ["/"], True),
        ("/a/b", [], False),
        ("/a/b", ["/x", "/y"], False),
    ],
)
def test_covered(path: str, roots: list[str], covered: bool) -> None:
    assert view._covered(path, roots) is covered


def test_wanted_outermost_first_nested_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "py"
    venv = base / "venv"  # a venv inside the base interpreter's folder: covered by it
    repo = tmp_path / "repository"
    src = repo / "src"
    for p in (venv, src, repo / "verify"):
        p.mkdir(parents=True)
    monkeypatch.setattr(sys, "base_prefix", str(base))
    monkeypatch.setattr(sys, "prefix", str(venv))
    assert view.wanted(repo, src) == [str(base), str(src), str(repo / "verify")]


def test_wanted_resolves_links_and_keeps_siblings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "interpreter"
    repo = tmp_path / "r"
    venv = repo / "s"  # a prefix of "src" as text, not its parent
    for p in (base, venv, repo / "src", repo / "verify"):
        p.mkdir(parents=True)
    (tmp_path / "linked-src").symlink_to(repo / "src")
    monkeypatch.setattr(sys, "base_prefix", str(base))
    monkeypatch.setattr(sys, "prefix", str(venv))
    # sorted by length (shortest first); a prefix of a name as text is not its parent
    assert view.wanted(repo, tmp_path / "linked-src") == [
        str(venv),
        str(repo / "src"),
        str(repo / "verify"),
        str(base),
    ]


def _layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """System folders, an interpreter and a repository under tmp_path, and the module's lists pointed at them."""
    sysroot = tmp_path / "sys"
    (sysroot / "usr-lib").mkdir(parents=True)
    (sysroot / "lib").symlink_to("usr-lib")
    (sysroot / "cache").write_text("")
    (sysroot / "bin").mkdir()
    (sysroot / "include").mkdir()
    monkeypatch.setattr(
        view,
        "SYSTEM_LIBS",
        (str(sysroot / "usr-lib"), str(sysroot / "lib"), str(sysroot / "absent"), str(sysroot / "cache")),
    )
    monkeypatch.setattr(view, "TOOLCHAIN", (str(sysroot / "bin"), str(sysroot / "no-bin"), str(sysroot / "include")))
    monkeypatch.setattr(view, "LIBCUDA_DIRS", ())
    py = tmp_path / "py"
    py.mkdir()
    monkeypatch.setattr(sys, "base_prefix", str(py))
    monkeypatch.setattr(sys, "prefix", str(py))
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "verify").mkdir()
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    return sysroot, repo


def test_build_names_each_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sysroot, repo = _layout(tmp_path, monkeypatch)
    v = view.build(repo, repo / "src")
    paths = [
        str(sysroot / "usr-lib"),
        str(sysroot / "cache"),
        str(tmp_path / "py"),
        str(repo / "src"),
        str(repo / "verify"),
    ]
    assert v.binds == [Bind(dest=p, src=p) for p in paths]
    assert v.symlinks == [("usr-lib", str(sysroot / "lib"))]
    assert v.fds == []
    assert v.roots == [*paths, str(sysroot / "lib")]


def test_build_with_the_toolchain_and_the_driver_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sysroot, repo = _layout(tmp_path, monkeypatch)
    cuda = _driver(tmp_path / "cuda")
    inside = _driver(sysroot / "usr-lib" / "nvidia")  # already in view through /usr/lib: not bound twice
    monkeypatch.setenv("LD_LIBRARY_PATH", str(cuda))
    v = view.build(repo, repo / "src", toolchain=True)
    dests = [b.dest for b in v.binds]
    assert dests == [
        str(sysroot / "usr-lib"),
        str(sysroot / "cache"),
        str(sysroot / "bin"),
        str(sysroot / "include"),
        str(tmp_path / "py"),
        str(repo / "src"),
        str(repo / "verify"),
        str(cuda),
    ]
    monkeypatch.setenv("LD_LIBRARY_PATH", str(inside))
    assert [b.dest for b in view.build(repo, repo / "src", toolchain=True).binds] == dests[:-1]
    monkeypatch.setenv("LD_LIBRARY_PATH", str(cuda))
    without = [b.dest for b in view.build(repo, repo / "src").binds]  # a CPU run: no compiler, no driver
    assert without == [
        str(sysroot / "usr-lib"),
        str(sysroot / "cache"),
        str(tmp_path / "py"),
        str(repo / "src"),
        str(repo / "verify"),
    ]


def test_build_as_descriptors_opens_each_with_o_path_and_cloexec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, repo = _layout(tmp_path, monkeypatch)
    v = view.build(repo, repo / "src", as_fds=True)
    try:
        assert len(v.fds) == 5 and [b.fd for b in v.binds] == v.fds
        assert all(b.src is None for b in v.binds)
        for bind in v.binds:
            assert bind.fd is not None
            assert os.path.samestat(os.fstat(bind.fd), os.stat(bind.dest))
            assert fcntl.fcntl(bind.fd, fcntl.F_GETFL) & os.O_PATH == os.O_PATH
            assert fcntl.fcntl(bind.fd, fcntl.F_GETFL) & (os.O_WRONLY | os.O_RDWR) == 0
            assert fcntl.fcntl(bind.fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    finally:
        v.close()


def test_build_closes_what_it_opened_when_a_source_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = _layout(tmp_path, monkeypatch)
    (repo / "verify").rmdir()
    opened: list[int] = []
    real_open = os.open

    def spy(path: str, flags: int) -> int:
        fd = real_open(path, flags)
        opened.append(fd)
        return fd

    monkeypatch.setattr(os, "open", spy)
    with pytest.raises(FileNotFoundError):
        view.build(repo, repo / "src", as_fds=True)
    assert len(opened) == 4  # the two system entries, the interpreter, src
    for fd in opened:
        with pytest.raises(OSError):
            os.fstat(fd)


def test_gpu_devices_with_the_caps_folder(tmp_path: Path) -> None:
    for name in ("nvidia0", "nvidia1", "nvidiactl", "null", "nvme0"):
        (tmp_path / name).write_text("")
    (tmp_path / "nvidia-caps").mkdir()
    for name in ("nvidia-cap2", "nvidia-cap1"):
        (tmp_path / "nvidia-caps" / name).write_text("")
    (tmp_path / "nvidia-folder").mkdir()  # a folder named like a node is never bound
    assert view.gpu_devices(str(tmp_path)) == [
        str(tmp_path / "nvidia0"),
        str(tmp_path / "nvidia1"),
        str(tmp_path / "nvidiactl"),
        str(tmp_path / "nvidia-caps" / "nvidia-cap1"),
        str(tmp_path / "nvidia-caps" / "nvidia-cap2"),
    ]


def test_gpu_devices_of_a_missing_or_empty_folder(tmp_path: Path) -> None:
    assert view.gpu_devices(str(tmp_path / "absent")) == []
    assert view.gpu_devices(str(tmp_path)) == []
    (tmp_path / "nvidia-caps").write_text("")  # a file of that name, not the folder: no caps listed, itself a node
    assert view.gpu_devices(str(tmp_path)) == [str(tmp_path / "nvidia-caps")]


def test_build_goes_on_past_a_source_already_in_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An interpreter under a system folder already bound is skipped; the sources after it are still bound."""
    sysroot, _ = _layout(tmp_path, monkeypatch)
    py = sysroot / "usr-lib" / "py"
    py.mkdir()
    monkeypatch.setattr(sys, "base_prefix", str(py))
    monkeypatch.setattr(sys, "prefix", str(py))
    repo = tmp_path / "a-repository-with-a-long-name"
    (repo / "src").mkdir(parents=True)
    (repo / "verify").mkdir()
    assert view.wanted(repo, repo / "src")[0] == str(py)  # the covered one comes first
    assert [b.dest for b in view.build(repo, repo / "src").binds] == [
        str(sysroot / "usr-lib"),
        str(sysroot / "cache"),
        str(repo / "src"),
        str(repo / "verify"),
    ]
