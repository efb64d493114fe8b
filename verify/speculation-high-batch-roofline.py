# %% [markdown]
# # At what batch size does speculative decoding stop paying?
# Target Llama-3.1-70B, draft Llama-3.1-8B (configs from Meta's sku_list.py via facts.yaml), bf16 weights and
# KV, both on one tensor-parallel group of H100 SXM GPUs treated as one device of N times the FLOP/s and
# bandwidth (TP communication ignored: it adds the same fixed cost to both sides). Roofline step time:
# t(tokens) = max(bytes read / bandwidth, FLOP / peak FLOP/s). Speedup model: Leviathan et al. 2023
# (arXiv:2211.17192) Eq. (1) for tokens per step, with the target pass priced by the roofline instead of
# Theorem 3.8's constant.

# %%
from qbank.verify import check, claim, fact, given


def params(prefix: str) -> tuple[float, float, float]:
    L = fact(f"{prefix}.num_hidden_layers", f"{prefix}_layers")
    d = fact(f"{prefix}.hidden_size", f"{prefix}_hidden")
    kvh = fact(f"{prefix}.num_key_value_heads", f"{prefix}_kv_heads")
    hd = fact(f"{prefix}.head_dim", f"{prefix}_head_dim")
    ffn = fact(f"{prefix}.intermediate_size", f"{prefix}_ffn")
    v = fact(f"{prefix}.vocab_size", f"{prefix}_vocab")
    total = L * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * v * d
    kv_per_token = 2 * L * kvh * hd * 2  # K and V, bf16
    attn_flops_per_ctx = 4 * L * d  # QK^T and PV: 2 FLOP each per head-dim per context token
    return total, kv_per_token, attn_flops_per_ctx


P70, kv70, att70 = params("llama3_1_70b")
P8, kv8, att8 = params("llama3_1_8b")
claim("target_params", P70, unit="params")
claim("draft_params", P8, unit="params")
check(70.0e9 < P70 < 71.0e9, "70B count lands at ~70.6B")
gpus = given(
    "tp_gpus", 4, unit="GPUs", source="assumed TP=4: 141 GB of bf16 weights plus KV need more than two 80 GB H100s"
)
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw") * 1e12 * gpus
fl = fact("h100_sxm.bf16_dense", "bf16_flops") * 1e12 * gpus
ctx_short = given("context_short", 512, unit="tokens", source="assumed mean context per request in a short-chat mix")
ctx_long = given("context_long", 2048, unit="tokens", source="assumed mean context per request in a longer-context mix")
alpha = given("alpha", 0.8, unit="fraction", source="assumed acceptance of an 8B draft for the 70B target at T=1")
ridge = claim("ridge_flop_per_byte", fl / bw)
flop_per_param = given("flop_per_param_token", 2, unit="FLOP", source="one multiply-add per weight per token")
bytes_per_param = given("bytes_per_param", 2, unit="B", source="bf16 weights")
claim("compute_bound_tokens", ridge * bytes_per_param / flop_per_param, unit="tokens")  # tokens per weight pass


def step(P: float, kv: float, att: float, batch: float, q_tokens: int, ctx: float) -> float:
    """Roofline time of one pass scoring q_tokens new tokens for each of `batch` requests."""
    bytes_read = 2 * P + batch * ctx * kv  # weights once, each request's KV once
    flop = batch * q_tokens * (2 * P + att * ctx)
    return max(bytes_read / bw, flop / fl)


def speedup(batch: float, gamma: int, ctx: float) -> float:
    tokens = (1 - alpha ** (gamma + 1)) / (1 - alpha)
    t_spec = gamma * step(P8, kv8, att8, batch, 1, ctx) + step(P70, kv70, att70, batch, gamma + 1, ctx)
    return (batch * tokens / t_spec) / (batch / step(P70, kv70, att70, batch, 1, ctx))


# %% [markdown]
# ## Speedup against batch size, gamma = 4 and best gamma

# %%
gamma = int(given("gamma", 4, unit="tokens", source="typical draft length"))
c_small = claim(
    "c_at_batch1", step(P8, kv8, att8, 1, 1, ctx_short) / step(P70, kv70, att70, 1, 1, ctx_short), unit="fraction"
)
for b in (1, 32, 64, 128, 192, 256):
    given(f"batch_{b}", b, unit="requests", source="table row")
    claim(f"speedup_g4_b{b}", speedup(b, gamma, ctx_short), unit="x")
    best = max(range(1, 13), key=lambda g: speedup(b, g, ctx_short))
    claim(f"best_gamma_b{b}", best, unit="tokens")
    claim(f"speedup_best_b{b}", speedup(b, best, ctx_short), unit="x")


def breakeven(fn) -> int:
    b = 1
    while fn(b) > 1:
        b += 1
    return b


b_g4 = claim("breakeven_batch_g4", breakeven(lambda b: speedup(b, gamma, ctx_short)), unit="requests")
b_best = claim(
    "breakeven_batch_best", breakeven(lambda b: max(speedup(b, g, ctx_short) for g in range(1, 13))), unit="requests"
)
b_g4_w = claim("breakeven_batch_g4_weights_only", breakeven(lambda b: speedup(b, gamma, 0)), unit="requests")
b_g4_long = claim("breakeven_batch_g4_long", breakeven(lambda b: speedup(b, gamma, ctx_long)), unit="requests")
check(b_g4_w < b_g4 < b_best, "KV reads and a shorter draft both push the break-even batch up")

# %% [markdown]
# ## Memory capacity caps the batch: KV of target and draft must fit next to both models' weights

# %%
hbm = fact("h100_sxm.hbm_capacity", "hbm_capacity") * 1e9 * gpus
free = hbm - 2 * P70 - 2 * P8
cap_short = claim("max_batch_short", int(free // (ctx_short * (kv70 + kv8))), unit="requests")
cap_long = claim("max_batch_long", int(free // (ctx_long * (kv70 + kv8))), unit="requests")
check(b_g4 < cap_short, "short context: the break-even batch fits in memory, so it is reachable")
check(b_g4_long > cap_long, "long context: memory runs out before speculation stops paying")

# %% [markdown]
# ## The simple bound: when does the verify pass turn compute-bound?
# Ignoring KV, a bf16 pass does 2 FLOP and reads 2 bytes per parameter per token, so it turns compute-bound
# once the tokens in the pass exceed the ridge FLOP/s / bandwidth; a verify pass holds gamma+1 per request.

# %%
verify_tokens = claim("verify_tokens_per_request", gamma + 1, unit="tokens")
verify_bound = claim("verify_compute_bound_batch_g4", ridge / (gamma + 1), unit="requests")
plain_bound = claim("plain_compute_bound_batch", ridge, unit="requests")
kv_req = claim("kv_bytes_per_request_long", ctx_long * kv70, unit="B")
weights = claim("target_weight_bytes", bytes_per_param * P70, unit="B")
print(
    {b: round(speedup(b, 4, ctx_short), 2) for b in (1, 32, 64, 128, 192, 256)},
    b_g4,
    b_best,
    b_g4_w,
    b_g4_long,
    cap_short,
    cap_long,
    round(c_small, 3),
)
