# expect: outcome=error code=verify-memory line=here
# %%
from qbank.verify import claim

data = bytearray(50 * 10**9)  # <- here
claim("size", len(data))
