"""Run inside the sandbox by `qbank verify`'s runner: a drill's tests against its reference and its wrong solution.

Reads the drill's files from ``$QBANK_DRILL`` (JSON: file name -> text; the sandbox's view of the
repository holds only ``verify/``, so the host hands them over) and records,
through the verification API, one check per test of the reference and the edge-case results of the
known-wrong solution. The host reads the record (``drills.py``); nothing here decides pass or fail.
"""

import json
import os

from qbank.practice.harness import run_suite
from qbank.verify import check, claim

files = json.loads(os.environ["QBANK_DRILL"])
public, edge = files["public_tests.py"], files["edge_tests.py"]
suites = [("public_tests", public), ("edge_tests", edge)]
for r in run_suite(files["reference.py"], suites):
    check(r["ok"], f"reference|{r['suite']}|{r['name']}|{r['message']}")
wrong = run_suite(files["wrong.py"], [("edge_tests", edge)])
claim("wrong_edge_failures", sum(not r["ok"] for r in wrong))
claim("edge_tests", len(wrong))
