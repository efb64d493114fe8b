# %% [markdown]
# # KV cache of one 1M-token request on Llama-3.1-70B
# Inputs: Llama-3.1-70B's config (Meta's llama-models sku_list.py), a bf16 cache, H100 SXM memory and bandwidth.

# %%
from qbank.verify import check, claim, given

layers = given("layers", 80, unit="layers", source="Llama-3.1-70B sku_list.py n_layers")
q_heads = given("q_heads", 64, unit="heads", source="Llama-3.1-70B sku_list.py n_heads")
kv_heads = given("kv_heads", 8, unit="heads", source="Llama-3.1-70B sku_list.py n_kv_heads")
head_dim = given("head_dim", 128, unit="dims", source="8192 / 64")
kv_tensors = given("kv_tensors", 2, unit="x", source="one K and one V tensor per layer")
bytes_per_value = given("bytes_per_value", 2, unit="B", source="bf16 is 2 bytes")
tokens = given("context_tokens", 2**20, unit="tokens", source="1M read as 2^20 tokens")
short_tokens = given("short_context_tokens", 2**17, unit="tokens", source="128K read as 2^17 tokens")
hbm = given("hbm_per_gpu", 80, unit="GB", source="H100 SXM datasheet")
bandwidth = given("hbm_bandwidth", 3.35, unit="TB/s", source="H100 SXM datasheet")
params = given("params", 70.6e9, unit="params", source="Llama-3.1-70B model card")
tp = given("tp_degree", 8, unit="GPUs", source="one 8-GPU HGX node")

# %%
per_token = claim("kv_bytes_per_token", kv_tensors * layers * kv_heads * head_dim * bytes_per_value, unit="B")
per_request = claim("kv_bytes_per_request", per_token * tokens, unit="B")
check(per_request == 320 * 2**30, "320 GiB exactly when 1M means 2^20 tokens")
claim("kv_bytes_short", per_token * short_tokens, unit="B")
weights = claim("weight_bytes", params * bytes_per_value, unit="B")
gpus_for_kv = claim("gpus_for_kv", -(-per_request // (hbm * 1e9)), unit="GPUs")
claim("gpus_for_kv_short", -(-(per_token * short_tokens) // (hbm * 1e9)), unit="GPUs")
claim("cache_to_weights", per_request / weights, unit="x")
claim("gqa_group", q_heads / kv_heads, unit="x")
claim("decode_read_time", per_request / (bandwidth * 1e12) * 1e3, unit="ms")
claim("kv_share_of_node", per_request / (tp * hbm * 1e9), unit="fraction")
claim("fp8_cache_ratio", 1 / bytes_per_value, unit="x", note="FP8 is 1 byte per value")
