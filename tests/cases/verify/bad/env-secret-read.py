# expect: outcome=error code=verify-exception line=here
# %%
import os

from qbank.verify import claim

claim("secret_length", len(os.environ["AWS_SECRET_ACCESS_KEY"]))  # <- here
