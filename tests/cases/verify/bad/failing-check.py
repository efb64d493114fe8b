# expect: outcome=fail code=verify-check-failed line=here
# %%
from qbank.verify import check, claim

claim("kv_bytes", 2 * 80 * 8 * 128 * 2)
check(2 + 2 == 5, "arithmetic still works")  # <- here
