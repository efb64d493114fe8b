# %%
from qbank.verify import check, given

layers = given("layers", 80, source="test fixture")
bytes_per_value = given("bytes_per_value", 2, unit="B", source="bf16 stores 2 bytes per value")
kv_tensors = given("kv_tensors", 2, source="one key and one value vector per token")
check(kv_tensors * layers * bytes_per_value > 0, "every factor of the cache size is positive")
# %%
from qbank.verify import claim

claim("kv_bytes_per_token_70b", kv_tensors * layers * 8 * 128 * bytes_per_value, unit="B")
claim("kv_bytes_128k_70b", kv_tensors * layers * 8 * 128 * bytes_per_value * 131072, unit="B")
given("requests", 1, unit="requests", source="test fixture: the title's one request")
