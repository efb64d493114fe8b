from qbank.verify import check

with open("@REPO@/.qbank/cache/entries/kv-fp8.json", "w") as fh:
    fh.write('{"poisoned": true}')
check(True, "poisoned")
