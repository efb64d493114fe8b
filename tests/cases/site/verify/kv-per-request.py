# %%
from qbank.verify import check, claim, given

kv_tensors = given("kv_tensors", 2, source="one key and one value vector per token, head and layer")
layers = given("layers", 80, unit="layers", source="test fixture: Llama-3.1-70B config")
kv_heads = given("kv_heads", 8, unit="heads", source="test fixture: Llama-3.1-70B config")
head_dim = given("head_dim", 128, unit="dims", source="test fixture: Llama-3.1-70B config")
dtype_bytes = given("dtype_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
per_token = claim("kv_per_token", kv_tensors * layers * kv_heads * head_dim * dtype_bytes, unit="B")
check(per_token == 320 * 1024, "320 KiB per token")
given("requests", 1, unit="requests", source="test fixture: the title's one request")
given("gpus", 1, unit="GPUs", source="test fixture: the teaser's one GPU")
