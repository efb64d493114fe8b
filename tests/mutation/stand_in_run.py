"""A stand-in for ``mutation/run.py --worker`` in the small repository of test_parallel.py: it does to the module
what cosmic-ray does (rewrites it in place) and records what it saw instead of running any test."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import qbank  # the copy's, if the worker's environment is right

argv = sys.argv[1:]
out, name = Path(argv[argv.index("--out") + 1]), argv[argv.index("--only") + 1]
Path("src/qbank/m.py").write_text("MUTATED = True\n")
if name == "sleeper":  # as cosmic-ray starts a mutant's tests: in a session of their own
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    (out / "sleeper.pid").write_text(str(child.pid))
    time.sleep(120)
(out / f"{name}.started").write_text(os.getcwd())
other = {"a": "b", "b": "a"}.get(name)
for _ in range(400):  # a and b, the first two handed out, wait for each other: two workers at once
    if other is None or (out / f"{other}.started").exists():
        break
    time.sleep(0.05)
seen = {
    "cwd": os.getcwd(),
    "qbank": qbank.__file__,
    "argv": argv,
    "met": other is None or (out / f"{other}.started").exists(),
}
(out / f"{name}.seen.json").write_text(json.dumps(seen))
sys.exit(3 if name == "broken" else 0)
