# expect: outcome=error code=verify-vacuous line=1
# %%
from qbank.verify import given

given("layers", 80, source="a config file")
