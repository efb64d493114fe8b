# expect: outcome=timeout code=verify-timeout line=here timeout=2
# %%
from qbank.verify import claim

claim("x", 1)
while True:  # <- here
    pass
