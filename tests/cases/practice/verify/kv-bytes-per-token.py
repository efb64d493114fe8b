# %%
from qbank.verify import check, claim, given

layers = given("layers", 32, unit="layers", source="test fixture: a Llama-3.1-8B-shaped model")
kv_heads = given("kv_heads", 8, unit="heads", source="test fixture")
head_dim = given("head_dim", 128, unit="dims", source="test fixture")
per_token = claim("kv_bytes_per_token", 2 * layers * kv_heads * head_dim * 2, unit="B")
claim("tokens_per_gib", 2**30 / per_token, unit="tokens")
claim("kv_bytes_8k", 8192 * per_token, unit="B")
claim("mha_factor", 32 / kv_heads, unit="x")
check(per_token == 131072, "128 KiB per token")
given("one_token", 1, unit="tokens", source="test fixture: the title's one token")
given("bytes_per_value", 2, unit="B", source="test fixture: bf16 stores 2 bytes per value")
