# expect: outcome=error code=verify-no-record line=here
# %%
import os  # <- here

os._exit(0)
