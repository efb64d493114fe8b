# %%
from qbank.verify import check, given

layers = given("layers", 80, source="test fixture")
bytes_per_value = given("bytes_per_value", 2, unit="B", source="bf16 stores 2 bytes per value")
kv_tensors = given("kv_tensors", 2, source="one key and one value vector per token")
check(kv_tensors * layers * bytes_per_value > 0, "every factor of the cache size is positive")
given("requests", 1, unit="requests", source="test fixture: the title's one request")
