"""``qbank gpu-check`` and ``qbank gpu-keygen``: kernel checks on a GPU, frozen and signed; the signing key."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .common import EXIT_OK, UsageError, emit, repo_root

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``gpu-check`` and ``gpu-keygen`` to the subcommands."""
    p = sub.add_parser("gpu-check", parents=[common], help="on a GPU: run, time, freeze and sign every kernel check")
    p.add_argument("slugs", nargs="*", metavar="SLUG", help="only these scripts (default: every one with a kernel)")
    p.set_defaults(func=cmd_gpu_check)

    p = sub.add_parser("gpu-keygen", parents=[common], help="make the GPU runner's key for signing frozen results")
    p.add_argument("--out", required=True, metavar="PATH", help="where the private key goes (0600; never overwritten)")
    p.set_defaults(func=cmd_gpu_keygen)


def cmd_gpu_keygen(args: argparse.Namespace) -> int:
    """Make the GPU runner's signing key: the private key to --out (0600), the public key to commit."""
    from ..verify.frozen import SIGNING_ENV, generate_key

    root = repo_root(args)
    try:
        kid, pub = generate_key(Path(args.out), root)
    except FileExistsError as exc:
        raise UsageError(f"{args.out} exists; refusing to overwrite a key") from exc
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror}") from exc
    print(f"private key (keep it on the GPU runner only; point {SIGNING_ENV} at it): {args.out}")
    print(f"public key {kid} (commit it): {pub.relative_to(root).as_posix()}")
    return EXIT_OK


def cmd_gpu_check(args: argparse.Namespace) -> int:
    """On a GPU: run every kernel check compiled, time the Triton kernels, freeze and sign the results, and
    print one line per kernel (time, GB/s, fraction of the datasheet peak, the PyTorch reference's time)."""
    from ..verify import engine
    from ..verify.frozen import SIGNING_ENV, FreezeError, load_signing_key
    from ..verify.kernels.summary import rows, text
    from ..verify.options import RunOptions

    root = repo_root(args)
    fake = os.environ.get("QBANK_FAKE_CUDA") or None
    try:
        engine.resolve_device("cuda", fake)
        load_signing_key(os.environ.get(SIGNING_ENV))  # before minutes of GPU time, not after
    except (engine.VerifyUsageError, FreezeError) as exc:
        raise UsageError(str(exc)) from exc
    scripts = engine.discover(root)
    slugs = args.slugs or [s for s, p in scripts.items() if engine.GPU_HINT.search(Path(p).read_text("utf-8"))]
    config = engine.VerifyConfig(
        slugs=slugs, jobs=1, device="cuda", force=True, strict=args.strict, options=RunOptions(fake_cuda=fake)
    )
    log = None if args.format == "json" else (lambda line: print(line, flush=True))
    try:
        run = engine.verify(root, config, log=log)
    except engine.VerifyUsageError as exc:
        raise UsageError(str(exc)) from exc
    print(text(rows(run.entries)), flush=True)
    written = sorted(str(r.get("frozen_written")) for r in run.results if r.get("frozen_written"))
    print(f"frozen and signed: {', '.join(written) or 'nothing'} (commit them)", flush=True)
    return emit(run.report, args)
