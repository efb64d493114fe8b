# expect: outcome=error code=verify-syntax line=here
# %%
from qbank.verify import claim

claim("x", 1)

# %%
claim("y", (1 + )  # <- here
