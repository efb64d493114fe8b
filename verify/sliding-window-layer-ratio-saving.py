# %% [markdown]
# # Sliding-window layers at 128K: the layer ratio sets the saving
# The seed's hypothetical (half the layers on a 128-token window) is applied to Llama-3.1-70B's KV shape so the
# bytes are concrete; Gemma 2's 1:1 / 4096 and Gemma 3's 5:1 / 1024 layouts come from their reports (facts).
# We avoid the unconfirmed Gemma-3-27B layer count and Gemma-3-1B window by using only ratios and windows.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
ctx = given("context", 131072, unit="tokens", source="128K read as 2^17 tokens (Llama-3.1 native context)")
w_seed = given("seed_window", 128, unit="tokens", source="the question's hypothetical window")
local_share_seed = given(
    "seed_local_share", 0.5, unit="fraction", source="the question's hypothetical: half the layers local"
)
g2_window = fact("gemma_sliding_window.gemma2_sliding_window", "gemma2_window")
g3_window = fact("gemma_sliding_window.gemma3_sliding_window", "gemma3_window")
g2_local = given(
    "gemma2_local_share",
    0.5,
    unit="fraction",
    source="Gemma 2 report arXiv:2408.00118 §2.1: local and global alternate 1:1",
)
g3_local = given(
    "gemma3_local_share",
    5 / 6,
    unit="fraction",
    source="Gemma 3 report arXiv:2503.19786 §2: 5 local layers per global layer",
)
g2_locals_per_global = given(
    "gemma2_locals_per_global", 1, unit="layers", source="Gemma 2 report arXiv:2408.00118 §2.1 (1:1)"
)
g3_locals_per_global = given(
    "gemma3_locals_per_global", 5, unit="layers", source="Gemma 3 report arXiv:2503.19786 §2 (5:1)"
)

# %%
per_layer_token = 2 * kv_heads * head_dim * bf16
full = claim("kv_full", layers * per_layer_token * ctx, unit="B")
check(full == 40 * 2**30, "40 GiB for a full-attention 70B request at 131,072 tokens")


def kept(local_share: float, window: float) -> float:
    """Fraction of the full-attention cache kept at this context."""
    return (1 - local_share) + local_share * min(window, ctx) / ctx


f_seed = kept(local_share_seed, w_seed)
f_seed_w4k = kept(local_share_seed, g2_window)
f_g3 = kept(g3_local, g3_window)
saving_seed = claim("saving_seed", 1 - f_seed, unit="fraction")
saving_w4k = claim("saving_4096_window", 1 - f_seed_w4k, unit="fraction")
saving_g3 = claim("saving_gemma3_layout", 1 - f_g3, unit="fraction")
cap_half = claim("saving_cap_half_local", local_share_seed, unit="fraction")
cap_g3 = claim("saving_cap_gemma3", g3_local, unit="fraction")
bytes_seed = claim("kv_seed", full * f_seed, unit="B")
bytes_w4k = claim("kv_4096", full * f_seed_w4k, unit="B")
bytes_g3 = claim("kv_gemma3_layout", full * f_g3, unit="B")
check(
    saving_seed < cap_half and cap_half - saving_seed < 0.001,
    "the 128-token window gets within 0.1 point of the 50% cap",
)
window_gain = claim("window_32x_gain_points", (saving_seed - saving_w4k) * 100, unit="%")
window_ratio = claim("window_ratio", g2_window / w_seed, unit="x")
print(
    f"full {full / 2**30:.2f} GiB; seed {bytes_seed / 2**30:.2f} GiB ({saving_seed:.2%}); "
    f"4096 window {bytes_w4k / 2**30:.2f} GiB ({saving_w4k:.2%}); gemma3 {bytes_g3 / 2**30:.2f} GiB ({saving_g3:.2%})"
)

# %% [markdown]
# ## Short contexts: at 8192 tokens the window matters more

# %%
short = given(
    "short_context", 8192, unit="tokens", source="Gemma 2's global span (arXiv:2408.00118 §2.1), a typical chat length"
)
kept_short_w4k = (1 - g2_local) + g2_local * g2_window / short
saving_short_w4k = claim("saving_short_4096", 1 - kept_short_w4k, unit="fraction")
claim("gemma2_window_share_short", g2_window / short, unit="fraction")

# %% [markdown]
# ## The allocator: a uniform pool gives nothing back
# If every layer's cache is sized for the full context (one block table, same blocks per layer), local layers hold
# blocks they will never read again unless the allocator frees out-of-window blocks per layer group.

# %%
block = fact("vllm.block_size_default", "block_size", unit="tokens")
uniform_saving = claim("saving_uniform_allocator", 0.0, unit="fraction")
blocks_full = claim("blocks_per_layer_full", ctx / block, unit="blocks")
blocks_local = claim("blocks_per_layer_local", w_seed / block + 1, unit="blocks")
check(blocks_local == 9, "a 128-token window spans at most 9 blocks of 16")
print(f"blocks per layer: full {blocks_full:.0f}, local window {blocks_local:.0f}")
