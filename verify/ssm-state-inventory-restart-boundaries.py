# %% [markdown]
# # A hybrid model's state inventory, and where a cached prefix can restart
# Jamba v0.1 (AI21's HF config, via the facts file): 32 layers, 4 attention (8 KV heads, head_dim 128) and 28
# Mamba layers with d_inner = 2 x 4096 = 8192, d_state 16, d_conv 4. Assumed dtypes: SSM state in FP32 (engines
# commonly keep the recurrence in FP32; it is configurable), conv state and KV in BF16. Conv state keeps the last
# d_conv - 1 = 3 inputs (HF's cache keeps 4; the difference is noted, not used).

# %%
from qbank.verify import check, claim, fact, given

layers = fact("jamba_v0_1.num_hidden_layers", "layers")
attn_layers = fact("jamba_v0_1.attention_layers", "attention_layers")
hidden = fact("jamba_v0_1.hidden_size", "hidden")
d_state = fact("jamba_v0_1.mamba_d_state", "d_state", unit="dims")
expand = given("mamba_expand", 2, source="Jamba v0.1 config.json mamba_expand (facts note: d_inner 8192)")
d_conv = given("mamba_d_conv", 4, source="Jamba v0.1 config.json mamba_d_conv")
kv_heads = given("kv_heads", 8, unit="heads", source="Jamba v0.1 config.json num_key_value_heads (facts note)")
head_dim = given("head_dim", 128, unit="dims", source="Jamba v0.1: hidden 4096 / 32 heads (facts note)")
fp32 = given("fp32_bytes", 4, unit="B", source="FP32 is 4 bytes")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16 is 2 bytes")
block = fact("vllm.block_size_default", "block_tokens", unit="tokens")

# %%
mamba_layers = claim("mamba_layers", layers - attn_layers, unit="layers")
d_inner = claim("d_inner", expand * hidden, unit="dims")
ssm_layer = claim("ssm_state_per_layer", d_inner * d_state * fp32, unit="B")
conv_inputs = claim("conv_inputs_kept", d_conv - 1)
conv_layer = claim("conv_state_per_layer", d_inner * (d_conv - 1) * bf16, unit="B")
ssm_total = claim("ssm_state_per_request", mamba_layers * ssm_layer, unit="B")
conv_total = claim("conv_state_per_request", mamba_layers * conv_layer, unit="B")
state = claim("state_per_request", ssm_total + conv_total, unit="B")
kv_tok = claim("kv_per_token", attn_layers * 2 * kv_heads * head_dim * bf16, unit="B")
check(ssm_total == 14 * 2**20, "14 MiB of FP32 SSM state per request (matches the facts note)")
check(kv_tok == 16 * 1024, "16 KiB of KV per token (facts: kv_bytes_per_token_jamba_bf16)")
ctx = given("context", 262144, unit="tokens", source="Jamba v0.1 max_position_embeddings 262144 (facts note)")
kv_ctx = claim("kv_at_256k", kv_tok * ctx, unit="B")
equiv = claim("state_equiv_tokens", state / kv_tok, unit="tokens")
print(
    f"state {state / 2**20:.4f} MiB (ssm {ssm_total / 2**20:.0f} + conv {conv_total / 2**20:.4f}); "
    f"KV {kv_tok / 1024:.0f} KiB/token; "
    f"KV at 256K {kv_ctx / 2**30:.0f} GiB; state = {equiv:.0f} tokens of KV"
)

# %% [markdown]
# ## Checkpoints for prefix reuse: state snapshot cost per interval, against the KV of that interval

# %%
for interval in (int(block), 1024, 4096):
    iv = (
        given(f"interval_{interval}", interval, unit="tokens", source="checkpoint interval considered")
        if interval != block
        else block
    )
    ratio = claim(f"checkpoint_over_kv_{interval}", state / (kv_tok * iv), unit="x")
    print(f"checkpoint every {interval}: state/KV = {ratio:.3f}")

# %% [markdown]
# ## Restart boundary: attention needs full blocks, Mamba needs a snapshot at exactly that position
# A 3,000-token system prompt: attention can resume at the last full block; a Mamba snapshot must sit there too.

# %%
sys_prompt = given("system_prompt_tokens", 3000, unit="tokens", source="example shared system prompt")
attn_boundary = claim("attention_restart", (sys_prompt // block) * block, unit="tokens")
tail = claim("recompute_tail_aligned", sys_prompt - attn_boundary, unit="tokens")
ck_every = 1024
grid_boundary = claim("grid_restart_1024", (sys_prompt // ck_every) * ck_every, unit="tokens")
grid_tail = claim("recompute_tail_grid", sys_prompt - grid_boundary, unit="tokens")
check(attn_boundary == 2992 and tail == 8, "aligned snapshot at 2992: 8 tokens to recompute")
print(
    f"aligned restart {attn_boundary:.0f} (recompute {tail:.0f}); "
    f"1024-grid restart {grid_boundary:.0f} (recompute {grid_tail:.0f})"
)

# %% [markdown]
# ## Speculative decoding needs a state per draft position (the recurrence cannot roll back)

# %%
draft = given("draft_tokens", 4, unit="tokens", source="example draft length")
spec_states = claim("spec_state_copies", draft + 1)
spec_bytes = claim("spec_state_bytes", (draft + 1) * state, unit="B")
print(f"{spec_states:.0f} state copies = {spec_bytes / 2**20:.2f} MiB per request")
