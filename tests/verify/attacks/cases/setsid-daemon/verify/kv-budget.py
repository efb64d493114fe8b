import os
import time

from qbank.verify import check

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        for path in ("/tmp/qbank-attack-setsid-daemon", "@REPO@/pwned-by-attack"):
            try:
                open(path, "w").write("still alive")
            except OSError:
                pass
        time.sleep(60)
    os._exit(0)
time.sleep(0.5)
check(True, "daemon started")
