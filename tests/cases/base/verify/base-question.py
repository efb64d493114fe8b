# %%
from qbank.verify import claim, given

layers = given("layers", 80, unit="layers", source="test fixture")
claim("double_layers", 2 * layers)
