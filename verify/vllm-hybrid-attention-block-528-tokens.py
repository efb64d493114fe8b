# %% [markdown]
# # Why vLLM serves Nemotron-H-8B with 528-token attention blocks
# vLLM v0.18.1, vllm/model_executor/models/config.py, HybridAttentionMambaModelConfig.verify_and_update_config
# (read at docs.vllm.ai/en/v0.18.1/api/vllm/model_executor/models/config/): every layer's cache comes out of one
# pool of equal-size pages, so the attention block size is raised until one attention page (block_size tokens of
# one layer's K and V) is at least one Mamba page (one sequence's conv + SSM state of one layer); the Mamba page is
# then padded up to the attention page. Without Mamba prefix caching:
#   attn_block_size = 16 * cdiv(mamba_page, 16 * attn_page_1_token)      (16 = FlashAttention's alignment)
# With mamba_cache_mode 'all' the block is rounded to a multiple of lcm(chunk_size, 16) instead.
# (v0.18.2 moved this computation to Platform.update_block_size_for_backend.)
# Model: Nemotron-H-8B-Base-8K config.json; state shapes and dtypes: vllm/model_executor/layers/mamba/mamba_utils.py.

# %%
import math

from model_shapes import mamba2_state_bytes

from qbank.verify import check, claim, fact, given

VLLM = "vLLM v0.18.1 vllm/model_executor/models/config.py HybridAttentionMambaModelConfig.verify_and_update_config"
heads = fact("nemotron_h_8b.mamba_num_heads", "mamba_heads")
head_dim = fact("nemotron_h_8b.mamba_head_dim", "mamba_head_dim")
groups = fact("nemotron_h_8b.n_groups", "n_groups")
d_state = fact("nemotron_h_8b.ssm_state_size", "d_state")
d_conv = fact("nemotron_h_8b.conv_kernel", "conv_kernel")
chunk = fact("nemotron_h_8b.chunk_size", "ssd_chunk_size")
kv_heads = fact("nemotron_h_8b.num_key_value_heads", "kv_heads")
attn_hd = fact("nemotron_h_8b.attention_head_dim", "attn_head_dim")
attn_layers = fact("nemotron_h_8b.attention_layers", "attention_layers")
mamba_layers = fact("nemotron_h_8b.mamba_layers", "mamba_layers")
align = given("kernel_block_alignment", 16, unit="tokens", source=VLLM + ": kernel_block_alignment_size = 16 "
              "(FlashAttention needs a multiple of 16)")
default_block = given("default_block", 16, unit="tokens", source="vllm/config/cache.py DEFAULT_BLOCK_SIZE = 16")
bf16 = fact("nemotron_h_8b.state_dtype_bytes", "bf16_bytes")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 KV cache (--kv-cache-dtype fp8) stores 1 byte per value")
fp32 = given("fp32_bytes", 4, unit="B", source="--mamba-ssm-cache-dtype float32 stores 4 bytes per value")


def mamba_page(ssm_bytes: float) -> float:
    return sum(mamba2_state_bytes(heads, head_dim, d_state, groups, d_conv, ssm_bytes=ssm_bytes, conv_bytes=bf16))


def block_none(mpage: float, attn_1tok: float) -> int:
    return int(align * math.ceil(mpage / (align * attn_1tok)))


# %% [markdown]
# ## The two page sizes and the block that reconciles them

# %%
conv_rows = claim("conv_rows", d_conv - 1)
conv_dim_c = claim("conv_dim", heads * head_dim + 2 * groups * d_state, unit="dims")
mpage = claim("mamba_page", mamba_page(bf16), unit="B")
attn_1 = claim("attn_page_per_token", 2 * kv_heads * attn_hd * bf16, unit="B")
attn_16 = claim("attn_page_16", default_block * attn_1, unit="B")
ratio_16 = claim("mamba_over_attn16", mpage / attn_16, unit="x")
ceil16 = claim("ceil_16", math.ceil(mpage / attn_16))
blk = claim("block_tokens", block_none(mpage, attn_1), unit="tokens")
check(blk == 528, "528-token attention blocks, as vLLM logs for this model")
padded = claim("padded_page", blk * attn_1, unit="B")
pad = claim("mamba_padding", (blk * attn_1 - mpage) / mpage, unit="fraction")
tok_per_state = claim("attn_tokens_per_state", math.ceil(mpage / attn_1), unit="tokens")

# prefix caching in 'all' mode: round to a multiple of lcm(chunk_size, 16)
step = math.lcm(int(chunk), int(align))
blk_all = claim("block_tokens_all_mode", step * math.ceil(tok_per_state / step), unit="tokens")
pad_all = claim("mamba_padding_all_mode", (blk_all * attn_1 - mpage) / mpage, unit="fraction")
check(blk_all == 640, "640-token blocks when the block is rounded to the 128-token SSD chunk")

# %% [markdown]
# ## What the block size costs: fragmentation and prefix granularity

# %%
waste_tok = claim("worst_waste_tokens", blk - 1, unit="tokens")
waste_b = claim("worst_waste_bytes", (blk - 1) * attn_1 * attn_layers, unit="B")
waste_b16 = claim("worst_waste_bytes_16", (default_block - 1) * attn_1 * attn_layers, unit="B")
state = claim("state_per_seq", mamba_layers * blk * attn_1, unit="B")  # padded Mamba pages
waste_share = claim("worst_waste_over_state", waste_b / state, unit="fraction")
prompt = given("shared_prefix", 3000, unit="tokens", source="the question's hypothetical shared system prompt")
cached_all = claim("cached_prefix_all", blk_all * (prompt // blk_all), unit="tokens")
recompute_all = claim("recompute_all", prompt - cached_all, unit="tokens")
cached_16 = claim("cached_prefix_16", default_block * (prompt // default_block), unit="tokens")

# %% [markdown]
# ## Two knobs that move the block size

# %%
blk_fp8 = claim("block_tokens_fp8_kv", block_none(mpage, 2 * kv_heads * attn_hd * fp8), unit="tokens")
blk_fp32 = claim("block_tokens_fp32_ssm", block_none(mamba_page(fp32), attn_1), unit="tokens")
check(blk_fp8 == 2 * blk, "FP8 KV doubles the block: 1056 tokens")
half = claim("fp8_page_factor", fp8 / bf16, unit="x")
tw = claim("fp8_block_factor", blk_fp8 / blk, unit="x")
dbl = claim("fp32_ssm_factor", fp32 / bf16, unit="x")
print(f"Mamba page {mpage} B, attention {attn_1} B/token -> {blk} tokens (pad {pad:.2%}); all-mode {blk_all} "
      f"(pad {pad_all:.2%}); fp8 KV {blk_fp8}; fp32 SSM {blk_fp32}")
