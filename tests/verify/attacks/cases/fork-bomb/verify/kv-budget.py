import os
import time

from qbank.verify import check

for _ in range(100000):
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
check(True, "forked")
