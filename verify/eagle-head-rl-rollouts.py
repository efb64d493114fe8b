# %% [markdown]
# # Why a frozen EAGLE head stops speeding up RL rollouts
# Target: Llama-3.1-8B (Meta llama-models sku_list.py, via facts.yaml) as the policy, bf16 weights on an
# H100 SXM. The EAGLE head (Li et al., arXiv:2401.15077 §4) is one decoder layer fed the target's features,
# reusing the target's frozen LM head, so a draft step reads one layer plus the LM head.
# Speedup formula: Leviathan et al. 2023 (arXiv:2211.17192) Theorem 3.8; acceptance = sum min(p, q) (Thm 3.5).

# %%
import torch

from qbank.verify import check, claim, fact, given

L = fact("llama3_1_8b.num_hidden_layers", "layers")
d = fact("llama3_1_8b.hidden_size", "hidden")
kv_heads = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")  # TB/s
flops = fact("h100_sxm.bf16_dense", "bf16_flops")  # TFLOP/s, dense

layer_params = d * (d + 2 * kv_heads * head_dim + d) + 3 * d * ffn
lm_head = vocab * d
total = claim("total_params", L * layer_params + 2 * lm_head, unit="params")  # untied embedding + head
head_layers = given(
    "eagle_head_layers", 1, unit="layers", source="EAGLE arXiv:2401.15077 §3: the draft head is one decoder layer"
)
draft_params = claim("draft_params", head_layers * layer_params + lm_head, unit="params")
c = claim("cost_ratio_c", draft_params / total, unit="fraction")  # both steps weight-read bound
check(7.9e9 < total < 8.1e9, "parameter count lands at Llama-3.1-8B's ~8.0B")
head_share = claim("head_layer_share", layer_params / total, unit="fraction")

# %% [markdown]
# ## A toy policy drift: RL sharpens and shifts the policy, the draft stays at step 0
# pi_t ∝ (pi_0 · exp(shift))^beta over a 1,000-token toy vocabulary; alpha_t = sum min(pi_t, pi_0).
# The draft is idealized as *exactly* pi_0 (a perfect step-0 draft), so every lost point is drift.

# %%
torch.manual_seed(0)
given("rl_temperature", 1.0, source="on-policy RL samples the policy as it is: temperature 1, no truncation")
step0 = given("initial_step", 0, unit="steps", source="the RL step whose policy the EAGLE head was trained on")
V = int(given("toy_vocab", 1000, unit="tokens", source="toy next-token distributions"))
contexts = 256
logits0 = torch.randn(contexts, V, dtype=torch.float64) * 2.5
shift = torch.randn(contexts, V, dtype=torch.float64)
pi0 = torch.softmax(logits0, -1)


def alpha(beta: float, s: float) -> float:
    pit = torch.softmax(beta * (logits0 + s * shift), -1)
    return float(torch.minimum(pit, pi0).sum(-1).mean())


a0 = claim("alpha_step0", alpha(1.0, 0.0), unit="fraction")
a_sharp = claim("alpha_sharpened", alpha(1.5, 0.0), unit="fraction")
a_late = claim("alpha_late", alpha(1.5, 0.5), unit="fraction")
check(a0 == 1.0, "a perfect step-0 draft accepts everything at step 0")
check(a_sharp < a0 and a_late < a_sharp, "sharpening and shifting both lower acceptance against a frozen draft")

# %% [markdown]
# ## What that does to speed, at small batch (Theorem 3.8)
# Realistic step-0 acceptance is below 1; we take 0.8 (assumed, typical of EAGLE-class heads at T = 1)
# and scale it by the drift factor measured in the toy.

# %%
gamma = int(given("gamma", 4, unit="tokens", source="draft length"))
alpha_real0 = given(
    "alpha_real_step0",
    0.8,
    unit="fraction",
    source="assumed EAGLE-class acceptance at temperature 1 on in-distribution prompts",
)


def speedup(a: float, g: int, cc: float) -> float:
    return (1 - a ** (g + 1)) / ((1 - a) * (g * cc + 1))


alpha_real_late = claim("alpha_real_late", alpha_real0 * a_late, unit="fraction")
s0 = claim("speedup_step0", speedup(alpha_real0, gamma, c), unit="x")
s_late = claim("speedup_late", speedup(alpha_real_late, gamma, c), unit="x")
check(s0 > s_late > 1, "the frozen head still helps a little at small batch, far less than at step 0")

# %% [markdown]
# ## And at rollout batch sizes, where the verify pass is compute-bound (roofline)
# Step time = max(weight bytes / bandwidth, 2·params·tokens / FLOP/s) (KV traffic ignored: short prompts).

# %%
flop_per_param = given("flop_per_param_token", 2, unit="FLOP", source="one multiply-add per weight per token")
bytes_per_param = given("bytes_per_param", 2, unit="B", source="bf16 weights")
ridge = claim("ridge_tokens", flops * 1e12 / (bw * 1e12) * bytes_per_param / flop_per_param, unit="tokens")
verify_tokens = claim("verify_tokens_per_request", gamma + 1, unit="tokens")
batch = int(given("rollout_batch", 256, unit="requests", source="assumed rollout batch per GPU (RL engines run wide)"))
w_bytes = total * 2


def step_time(tokens: float) -> float:
    return max(w_bytes / (bw * 1e12), 2 * total * tokens / (flops * 1e12))


plain_tps = claim("plain_tokens_per_s", batch / step_time(batch), unit="tokens/s")
E0 = (1 - alpha_real0 ** (gamma + 1)) / (1 - alpha_real0)
spec_time = gamma * max(draft_params * 2 / (bw * 1e12), 2 * draft_params * batch / (flops * 1e12)) + step_time(
    batch * (gamma + 1)
)
spec_tps = claim("spec_tokens_per_s_step0", batch * E0 / spec_time, unit="tokens/s")
ratio = claim("spec_over_plain_at_batch", spec_tps / plain_tps, unit="x")
check(ratio < 1, "at rollout batch, even step-0 acceptance loses throughput")
breakeven_req = claim("compute_bound_requests", ridge / (gamma + 1), unit="requests")
print(
    round(c, 4),
    round(a0, 3),
    round(a_sharp, 3),
    round(a_late, 3),
    round(s0, 2),
    round(s_late, 2),
    round(ridge),
    round(ratio, 2),
    breakeven_req,
)

# %% [markdown]
# ## The tail of a rollout batch: few long generations left, small batch again

# %%
tail = int(given("tail_batch", 16, unit="requests", source="assumed: stragglers left when most rollouts have finished"))


def spec_over_plain(b: int, a: float) -> float:
    e = (1 - a ** (gamma + 1)) / (1 - a)
    t_spec = gamma * max(draft_params * 2 / (bw * 1e12), 2 * draft_params * b / (flops * 1e12)) + step_time(
        b * (gamma + 1)
    )
    return (b * e / t_spec) / (b / step_time(b))


tail_late = claim("tail_ratio_late", spec_over_plain(tail, alpha_real_late), unit="x")
tail_fresh = claim("tail_ratio_fresh", spec_over_plain(tail, alpha_real0), unit="x")
check(tail_fresh > tail_late > 1, "in the tail, speculation pays, and a refreshed head pays more")
