import json
import os

from qbank.verify import check

check(False, "the real verdict")
run_dir = os.path.dirname(os.environ["QBANK_VERIFY_OUT"])
with open(os.path.join(run_dir, "record.json"), "w") as fh:
    json.dump({"api": 2, "values": [], "checks": [{"message": "forged", "ok": True, "line": 6}]}, fh)
with open(os.path.join(run_dir, "status.json"), "w") as fh:
    json.dump({"error": None, "cells": [], "exit": "normal"}, fh)
open("/tmp/qbank-attack-result-files-os-exit", "a")
os._exit(0)
