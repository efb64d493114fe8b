# %% [markdown]
# # Prefix reuse on a 2,048-token chat prompt: hashed blocks against a token-level radix tree
# vLLM caches only full blocks (default 16 tokens) keyed by hash(parent, tokens, extra keys); SGLang's
# radix tree matched to the token (page size 1 in the original design). Both must recompute at least the
# last prompt token to get logits. vLLM V1 caps the hit at prompt_len - 1 tokens and then rounds down to
# full blocks (kv_cache_manager.get_computed_blocks), so a fully cached, block-aligned prompt recomputes
# its whole last block. Inputs from the fact base; the prompt length is the question's example.
# Cache keys across processes: the chain's root NONE_HASH is os.urandom(32) per process unless PYTHONHASHSEED
# is set (vllm/v1/core/kv_cache_utils.py init_none_hash), whatever the hash function; the answer says so.

# %%
from qbank.verify import check, claim, fact, given

block = fact("vllm.block_size_default", "block_size")
page = given("sglang_page_tokens", 1, unit="tokens", source="SGLang RadixAttention paper arXiv:2312.07104: page "
    "size 1 token (facts: sglang.radix_attention_eviction note)")
prompt = given("prompt_tokens", 2048, unit="tokens", source="example chat prompt from the question")
layers = fact("llama3_1_8b.num_hidden_layers", "layers")
kv_heads = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_8b.head_dim", "head_dim")

# %% [markdown]
# ## Partial hits: a shared prefix that ends mid-block
# A block-hash cache forfeits the shared tokens of the last partial block: up to b - 1, (b - 1)/2 on average.

# %%
blocks = claim("prompt_blocks", prompt / block, unit="blocks")
worst = claim("worst_lost_tokens", block - page, unit="tokens")
mean = claim("mean_lost_tokens", (block - page) / 2, unit="tokens")
worst_frac = claim("worst_lost_fraction", worst / prompt, unit="fraction")
mean_frac = claim("mean_lost_fraction", mean / prompt, unit="fraction")

# %% [markdown]
# ## Full hits: the prompt is entirely cached
# SGLang recomputes 1 token; vLLM (hit capped at prompt_len - 1, rounded down to blocks) recomputes a block
# when the prompt is block-aligned.

# %%
vllm_full = claim("vllm_full_hit_recompute", prompt - block * ((prompt - 1) // block), unit="tokens")
sgl_full = claim("sglang_full_hit_recompute", prompt - page * ((prompt - 1) // page), unit="tokens")
vllm_full_frac = claim("vllm_full_hit_fraction", vllm_full / prompt, unit="fraction")
check(vllm_full == block and sgl_full == 1, "aligned full hit: 16 tokens against 1")
check(max(worst_frac, vllm_full_frac) < 0.01, "the difference stays under one percent of the prompt")

kv_tok = claim("kv_bytes_per_token", 2 * layers * kv_heads * head_dim * 2, unit="B")
kv_prompt = claim("kv_bytes_prompt", kv_tok * prompt, unit="B")
print(blocks, worst, worst_frac, mean_frac, vllm_full, vllm_full_frac, kv_prompt / 2**20)
