# %%
from qbank.verify import claim, given

layers = given("layers", 80, source="test fixture")
claim("double_layers", 2 * layers)
given("bytes_per_value", 2, unit="B", source="bf16 stores 2 bytes per value")
given("kv_tensors", 2, source="one key and one value vector per token")
