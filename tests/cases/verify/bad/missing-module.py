# expect: outcome=error code=verify-import line=here
# %%
from qbank.verify import claim

import qbank_module_that_does_not_exist  # <- here

claim("x", 1)
