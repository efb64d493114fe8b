# expect: outcome=error code=verify-stray-process line=0
# %%
import os
import time

from qbank.verify import claim

pid = os.fork()
if pid == 0:
    time.sleep(120)
    os._exit(0)
claim("child_pid", pid)
