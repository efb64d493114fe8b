# expect: outcome=error code=verify-exception line=here
# %%
from qbank.verify import claim

claim("before", 1)

# %%
def ratio(a: float, b: float) -> float:
    return a / b  # <- here


claim("after", ratio(1, 0))
