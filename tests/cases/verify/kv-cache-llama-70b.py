# %% [markdown]
# # KV cache of one Llama-3.1-70B request at 128K context
#
# Every layer stores one key and one value vector per KV head for every token. With grouped-query
# attention Llama-3.1-70B has 8 KV heads of 128 dimensions in each of its 80 layers.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
bytes_per_value = given("bytes_per_value", 2, source="bf16 is 2 bytes", unit="B")

# %% [markdown]
# Keys and values (the factor 2), per layer, per KV head, per dimension:

# %%
kv_per_token = claim("kv_per_token", 2 * layers * kv_heads * head_dim * bytes_per_value, unit="B")
print(f"KV per token: {kv_per_token:,.0f} B = {kv_per_token / 2**10:.0f} KiB")
check(kv_per_token == fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_per_token_table"),
      "matches the derived entry of the facts file")

# %% [markdown]
# At the full 128K-token context (131,072 tokens) one request holds:

# %%
context = given("context", 131072, source="Llama-3.1 max_position_embeddings", unit="tokens")
kv_per_request = claim("kv_per_request", kv_per_token * context / 2**30, unit="GiB")
print(f"KV per request: {kv_per_request:.0f} GiB")
check(kv_per_request < 80, "one request fits in one H100's 80 GB")
