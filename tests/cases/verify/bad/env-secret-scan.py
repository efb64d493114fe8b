# expect: outcome=pass
# %%
import os

from qbank.verify import check, claim

leaked = [k for k in os.environ if "SECRET" in k or "TOKEN" in k or k.startswith("AWS")]
check(not leaked, f"no secret reaches the script (saw {leaked})")
claim("env_vars", len(os.environ))
print(sorted(os.environ))
