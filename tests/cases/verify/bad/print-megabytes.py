# expect: outcome=pass code=verify-output-truncated line=0
# %%
from qbank.verify import claim

for _ in range(5000):
    print("x" * 999)
claim("lines", 5000)
