"""Start-up of the command line: ``import qbank.cli`` and ``build_parser()`` in a fresh process, against another
checkout's ``src`` (``--base``) interleaved in the same run.

    .venv/bin/python bench/cli_startup.py [--n 100] [--base DIR]

``--base DIR``: the ``src`` folder of the code to compare with, e.g. ``git archive main src | tar -x -C /tmp/b``
then ``--base /tmp/b/src`` (run with ``PYTHONPATH`` at it, which the editable install lets win). Each run is
``python -X importtime -c "import qbank.cli; qbank.cli.build_parser()"``; printed per side: the cumulative
import time of ``qbank.cli`` (``-X importtime``), ``build_parser()``'s wall time, the process's CPU time
(user + sys, from ``getrusage``: steadier than wall on a shared machine) and how many modules it imported.
Medians and minima; the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
from pathlib import Path

CODE = (
    "import time; t1 = time.perf_counter(); import qbank.cli; t2 = time.perf_counter(); qbank.cli.build_parser(); "
    "t3 = time.perf_counter(); import sys; sys.stderr.write(f'PARSER {(t3 - t2) * 1e6:.0f} {qbank.cli.__file__}\\n')"
)


def once(base: Path | None) -> tuple[float, float, float, int]:
    """(import ms, build_parser ms, process CPU ms, modules imported) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    if base is not None:
        env["PYTHONPATH"] = str(base)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", CODE], env=env, capture_output=True, text=True,
                         check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    lines = re.findall(r"^import time:\s+\d+ \|\s+(\d+) \|\s*(\S+)$", run.stderr, re.M)
    cumulative = next(int(us) for us, name in lines if name == "qbank.cli")
    parser = re.search(r"PARSER (\d+) (\S+)", run.stderr)
    assert parser is not None, run.stderr
    if base is not None and not Path(parser.group(2)).is_relative_to(base):
        raise SystemExit(f"--base was not imported: qbank.cli came from {parser.group(2)}")
    return cumulative / 1e3, int(parser.group(1)) / 1e3, cpu * 1e3, len(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100, help="runs per side (default 100)")
    ap.add_argument("--base", type=Path, default=None, help="src folder of the code to compare with")
    args = ap.parse_args()
    base = args.base.resolve() if args.base else None
    sides: dict[str, Path | None] = {"this checkout": None} | ({"--base": base} if base else {})
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for side in [*sides.values()] * 2:  # bytecode written, caches warm
        once(side)
    runs: dict[str, list[tuple[float, float, float, int]]] = {name: [] for name in sides}
    for i in range(args.n):
        for name in sorted(sides, reverse=bool(i % 2)):  # interleaved, alternating who goes first
            runs[name].append(once(sides[name]))
    for name, rows in runs.items():
        imp, parser, cpu = ([r[k] for r in rows] for k in range(3))
        print(f"{name:14} import qbank.cli: median {statistics.median(imp):.2f} ms (min {min(imp):.2f}); "
              f"build_parser(): median {statistics.median(parser):.2f} ms (min {min(parser):.2f}); "
              f"process CPU: median {statistics.median(cpu):.1f} ms (min {min(cpu):.1f}); "
              f"{rows[0][3]} modules imported; n={args.n}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
