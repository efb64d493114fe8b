# expect: outcome=timeout code=verify-timeout line=here timeout=10
# %%
from qbank.verify import claim

claim("x", 1)
x = 0
while True: x += 1  # <- here
