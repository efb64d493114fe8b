# expect: outcome=killed code=verify-killed line=here
# %%
import os
import signal

from qbank.verify import claim

claim("x", 1)
os.kill(os.getpid(), signal.SIGSEGV)  # <- here
