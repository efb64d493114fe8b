# %%
from qbank.verify import claim, given

layers = given("layers", 80, unit="layers", source="test fixture")
claim("double_layers", 2 * layers)
given("requests", 1, unit="requests", source="test fixture: the title's one request")
