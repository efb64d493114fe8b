"""The bubblewrap command line and the seccomp rules (pure; no sandbox started)."""

from __future__ import annotations

from pathlib import Path

from qbank.verify.sandbox import bwrap, seccomp, view


def _plan(**kw: object) -> bwrap.Plan:
    base: dict[str, object] = {
        "command": ("/venv/bin/python", "-m", "qbank.verify.launch", "{}"),
        "run_dir": "/qbank/run",
        "work_dir": "/qbank/run/work",
        "tmpfs_bytes": 1 << 20,
        "seccomp_fd": 7,
        "binds": (bwrap.Bind(dest="/venv", src="/venv"), bwrap.Bind(dest="/repo/verify", src="/repo/verify")),
        "env": (("HOME", "/qbank/run/work"),),
    }
    base.update(kw)
    return bwrap.Plan(**base)  # type: ignore[arg-type]


def test_every_namespace_and_hardening_flag() -> None:
    argv = bwrap.argv(_plan())
    for flag in (
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--seccomp") + 1] == "7"
    assert argv[argv.index("--proc") + 1] == "/proc"
    i = argv.index("--tmpfs")
    assert argv[i - 2 : i] == ["--size", str(1 << 20)] and argv[i + 1] == "/qbank/run"
    assert argv[argv.index("--") + 1 :] == ["/venv/bin/python", "-m", "qbank.verify.launch", "{}"]


def test_view_holds_only_the_binds() -> None:
    argv = bwrap.argv(_plan())
    binds = [argv[i + 1] for i, a in enumerate(argv) if a in {"--ro-bind", "--bind", "--dev-bind", "--ro-bind-fd"}]
    assert binds == ["/venv", "/repo/verify"]  # read-only, and nothing else: no /, no home, no .git
    assert "--bind" not in argv and "--dev-bind" not in argv
    assert argv.index("--remount-ro") > max(argv.index("--ro-bind"), argv.index("--tmpfs"))


def test_gpu_nodes_are_bound_on_a_gpu_machine(tmp_path: object) -> None:
    argv = bwrap.argv(_plan(devices=("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm")))
    pairs = [argv[i + 1 : i + 3] for i, a in enumerate(argv) if a == "--dev-bind"]
    assert pairs == [["/dev/nvidia0"] * 2, ["/dev/nvidiactl"] * 2, ["/dev/nvidia-uvm"] * 2]


def test_gpu_devices_lists_nvidia_nodes_only(tmp_path: object) -> None:
    from pathlib import Path

    dev = Path(str(tmp_path))
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm", "null", "sda"):
        (dev / name).write_text("")
    assert view.gpu_devices(str(dev)) == [str(dev / n) for n in ("nvidia-uvm", "nvidia0", "nvidiactl")]


def test_staging_makes_every_folder_above_a_bind_enterable() -> None:
    argv = bwrap.staging_argv((bwrap.Bind(dest="/root/.pyenv/py", src="/root/.pyenv/py"),), ())
    dirs = [argv[i + 3] for i, a in enumerate(argv) if a == "--perms" and argv[i + 2] == "--dir"]
    assert dirs == ["/root", "/root/.pyenv"]
    assert argv[-1] == "--" and "--unshare-user" not in argv
    caps = [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]
    assert caps == ["CAP_SETUID", "CAP_SETGID"]


def test_seccomp_denies_the_wall_breakers() -> None:
    names = {name for name, _err, _conds in seccomp.rules()}
    for syscall in (
        "mount",
        "umount2",
        "setns",
        "unshare",
        "ptrace",
        "pivot_root",
        "keyctl",
        "bpf",
        "perf_event_open",
        "socket",
        "clone",
    ):
        assert syscall in names
    assert seccomp.compile_filter()  # libseccomp is present here: the filter compiles


def test_the_compiler_is_in_view_only_for_a_gpu_run(tmp_path: Path) -> None:
    """Triton's first compile on a GPU runs gcc over C headers; a CPU run (the interpreter) never sees them."""
    from qbank.verify.runner import RunOptions, child_env

    src = Path(__file__).resolve().parents[3] / "src"
    cpu = view.build(tmp_path, src)
    gpu = view.build(tmp_path, src, toolchain=True)
    cpu_roots, gpu_roots = set(cpu.roots), set(gpu.roots)
    assert not cpu_roots & {"/usr/bin", "/bin", "/usr/include"}
    present = {p for p in ("/usr/bin", "/usr/include") if Path(p).is_dir()}
    assert present and present <= gpu_roots and cpu_roots <= gpu_roots
    env = child_env(tmp_path, tmp_path / "run", tmp_path / "work", RunOptions(device="cpu"))
    assert env["TRITON_INTERPRET"] == "1" and env["TRITON_CACHE_DIR"] == str(tmp_path / "work" / ".triton")
    env = child_env(tmp_path, tmp_path / "run", tmp_path / "work", RunOptions(device="cuda"))
    assert "TRITON_INTERPRET" not in env  # a real GPU compiles
    env = child_env(tmp_path, tmp_path / "run", tmp_path / "work", RunOptions(device="cuda", fake_cuda="Fake"))
    assert env["TRITON_INTERPRET"] == "1"  # the fake GPU is the CPU


def test_libcuda_is_found_where_the_driver_put_it(tmp_path: Path) -> None:
    (tmp_path / "libcuda.so.1").write_bytes(b"")
    assert view.libcuda_dir(f"/nonexistent:{tmp_path}") == str(tmp_path)
