# %% [markdown]
# # Why a frozen EAGLE head stops speeding up RL rollouts
# Target: Llama-3.1-8B (Meta llama-models sku_list.py, via facts.yaml) as the policy, bf16 weights on an
# H100 SXM. The EAGLE head (Li et al., arXiv:2401.15077 §4) is one decoder layer fed the target's features,
# reusing the target's frozen LM head, so a draft step reads one layer plus the LM head.
# Speedup formula: Leviathan et al. 2023 (arXiv:2211.17192) Theorem 3.8; acceptance = sum min(p, q) (Thm 3.5).

# %%
import math

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
# The toy's shape parameters are arbitrary illustrations, not measurements of any RL run: they set how far the
# policy drifts. The answer leans only on what holds for any drift of that size (the triangle-inequality floor).
logit_scale = given("toy_logit_scale", 2.5, source="toy: spread of the step-0 logits (illustrative choice)")
beta_late = given("toy_sharpening", 1.5, source="toy: inverse temperature RL sharpening applies (illustrative)")
shift_late = given("toy_shift", 0.5, source="toy: scale of the logit shift to new patterns (illustrative)")
logits0 = torch.randn(contexts, V, dtype=torch.float64) * logit_scale
shift = torch.randn(contexts, V, dtype=torch.float64)
pi0 = torch.softmax(logits0, -1)


def alpha(beta: float, s: float) -> float:
    pit = torch.softmax(beta * (logits0 + s * shift), -1)
    return float(torch.minimum(pit, pi0).sum(-1).mean())


a0 = claim("alpha_step0", alpha(1.0, 0.0), unit="fraction")
a_sharp = claim("alpha_sharpened", alpha(beta_late, 0.0), unit="fraction")
a_late = claim("alpha_late", alpha(beta_late, shift_late), unit="fraction")
tv_drift = claim("tv_drift", 1 - a_late, unit="fraction")
check(a0 == 1.0, "a perfect step-0 draft accepts everything at step 0")
check(a_sharp < a0 and a_late < a_sharp, "sharpening and shifting both lower acceptance against a frozen draft")

# %% [markdown]
# ## What that does to speed, at small batch (Theorem 3.8)
# Realistic step-0 acceptance is below 1; we take 0.8 (assumed, typical of EAGLE-class heads at T = 1).
# Multiplying 0.8 by the toy's 0.61 would be a guess, not a derivation. Two things are derived instead:
# (1) a bound that holds for any draft: TV(pi_t, q) <= TV(pi_t, pi_0) + TV(pi_0, q), so
#     alpha_t >= alpha_0 - TV(pi_t, pi_0) (triangle inequality for total variation);
# (2) inside the toy, an imperfect head: q = softmax(logits0 + sigma * noise) with sigma chosen so that
#     alpha(q, pi_0) = 0.8, then alpha(q, pi_late) measured directly.

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


noise = torch.randn(contexts, V, dtype=torch.float64)
pi_late = torch.softmax(beta_late * (logits0 + shift_late * shift), -1)


def head_alpha(sigma: float, target: torch.Tensor) -> float:
    q = torch.softmax(logits0 + sigma * noise, -1)
    return float(torch.minimum(q, target).sum(-1).mean())


s_lo, s_hi = 0.0, 10.0
for _ in range(60):
    s_mid = (s_lo + s_hi) / 2
    if head_alpha(s_mid, pi0) > alpha_real0:
        s_lo = s_mid
    else:
        s_hi = s_mid
check(abs(head_alpha(s_hi, pi0) - alpha_real0) < 1e-6, "the toy head accepts 0.8 against the step-0 policy")
alpha_real_late = claim("alpha_real_late", head_alpha(s_hi, pi_late), unit="fraction")
alpha_floor = claim("alpha_late_floor", alpha_real0 - tv_drift, unit="fraction")
q_head = torch.softmax(logits0 + s_hi * noise, -1)
greedy0 = claim("toy_head_greedy_agreement", float((q_head.argmax(-1) == pi0.argmax(-1)).double().mean()),
                unit="fraction")

check(alpha_floor <= alpha_real_late < alpha_real0, "the toy head's late acceptance respects the triangle-inequality floor")
draft_cost_factor = claim("draft_cost_factor", 1 + gamma * c, unit="x")
expected0 = claim("expected_tokens_step0", (1 - alpha_real0 ** (gamma + 1)) / (1 - alpha_real0), unit="tokens")
s0 = claim("speedup_step0", speedup(alpha_real0, gamma, c), unit="x")
s_floor = claim("speedup_floor", speedup(alpha_floor, gamma, c), unit="x")
s_late_tmp = speedup(head_alpha(s_hi, pi_late), gamma, c)
claim("gain_lost_toy", 1 - (s_late_tmp - 1) / (s0 - 1), unit="fraction")
claim("gain_lost_floor", 1 - (s_floor - 1) / (s0 - 1), unit="fraction")
s_late = claim("speedup_late", speedup(alpha_real_late, gamma, c), unit="x")
check(s0 > s_late > 1, "the frozen head still helps a little at small batch, far less than at step 0")

# %% [markdown]
# ## Rollout batches: what fits, and what a step reads
# An earlier version of this script priced a batch of 256 rollouts with the KV cache left out ("short prompts")
# and concluded speculation loses (0.71x). Both halves were wrong once rollouts are 2,048 tokens in: 256 sequences
# at that length do not fit on one H100 next to the weights, and the KV read, not the weight read, dominates the
# step. This cell sizes the batch against vLLM's budget: gpu_memory_utilization x the total cudaMemGetInfo
# reports, less weights, activation peak, non-torch memory and the CUDA-graph estimate
# (vllm/v1/worker/gpu_worker.py determine_available_memory, via facts.yaml). The utilization is vLLM's serving
# default; a colocated RL framework sets its own, often lower, and every batch bound here scales with it.

# %%
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
util = fact("vllm.gpu_memory_utilization_default", "util")
heads = fact("llama3_1_8b.num_attention_heads", "q_heads")
bytes_per_param = given("bytes_per_param", 2, unit="B", source="bf16 weights and bf16 KV cache")
flop_per_param = given("flop_per_param_token", 2, unit="FLOP", source="one multiply-add per weight per token")
w_bytes = claim("weight_bytes", total * bytes_per_param, unit="B")
kv_tok = claim("kv_bytes_per_token", 2 * L * kv_heads * head_dim * bytes_per_param, unit="B")
usable = claim("usable_hbm", cuda_total * util, unit="B")
act_peak = given("activation_peak", 2.5e9, unit="B", source="example figure, the same as in the "
                  "max-concurrent-requests-memory-budget answer; vLLM measures it in a dummy run at startup")
non_torch = given("non_torch", 1.0e9, unit="B", source="example figure (CUDA context, NCCL), the same as in the "
                  "max-concurrent-requests-memory-budget answer; vLLM measures it from cudaMemGetInfo")
graphs = given("cudagraph_estimate", 0.5e9, unit="B", source="example figure, the same as in the "
               "max-concurrent-requests-memory-budget answer; vLLM estimates it by a dummy capture since v0.21")
overheads = claim("runtime_overheads", act_peak + non_torch + graphs, unit="B")
kv_room_ceiling = claim("kv_room_before_overheads", usable - w_bytes, unit="B")
kv_room = claim("kv_room", usable - w_bytes - overheads, unit="B")
ctx = int(given("rollout_context", 2048, unit="tokens", source="example: a rollout 2,048 tokens in (prompt plus "
                "generation so far), early in a reasoning trace"))
old_batch = int(given("old_rollout_batch", 256, unit="requests", source="the batch the earlier version assumed"))
need_old = claim("bytes_needed_old_batch", w_bytes + old_batch * ctx * kv_tok, unit="B")  # before overheads
check(need_old > usable, "256 rollouts at 2,048 tokens do not fit beside the weights on one H100")
max_batch = claim("max_batch_at_ctx", math.floor(kv_room / (ctx * kv_tok)), unit="sequences")
# With speculation on, the head adds its own layer of weights (the LM head is the target's) and one layer of KV.
head_layer_bytes = claim("head_layer_bytes", layer_params * bytes_per_param, unit="B")
max_batch_spec = claim("max_batch_at_ctx_with_head",
                       math.floor((kv_room - head_layer_bytes) / (ctx * kv_tok * (1 + 1 / L))), unit="requests")
batch = int(given("rollout_batch", 128, unit="requests", source="example rollout batch per GPU, chosen to fit "
                  "at 2,048 tokens with room to spare (checked below)"))
need = claim("bytes_needed_batch", w_bytes + overheads + head_layer_bytes + batch * ctx * kv_tok * (1 + 1 / L),
             unit="B")
check(need <= usable, "128 rollouts at 2,048 tokens fit: weights, head and both caches within the usable HBM")
kv_read = claim("kv_read_per_step", batch * ctx * kv_tok, unit="B")
check(kv_read > w_bytes, "at this batch and length a decode step reads more KV than weights")

# %% [markdown]
# ## The roofline with the KV read
# A decode step over B sequences of context S with q query tokens each reads the weights once and every
# sequence's KV once (a verify pass reads each sequence's cache once for all its q query tokens), and does
# 2 FLOP per parameter per token plus attention, 4 * S * heads * head_dim FLOP per layer per query token.
# An EAGLE draft step reads the head's one layer and the LM head, plus that one layer's KV.

# %%
attn_flop_coeff = given("attn_flop_per_ctx_dim", 4, unit="FLOP", source="QK^T and PV: two multiply-adds per "
                        "context position per head dimension per query token")


# Peak rates give a roofline upper bound. Real kernels reach a fraction of each peak; the derated case below
# uses declared fractions (assumptions, not measurements) to show how far the crossover moves.
eff_c = given("achieved_flops_fraction", 0.7, unit="fraction", source="assumed: share of the dense BF16 peak "
              "that decode-shaped GEMMs plus attention reach on an H100 (a declared derating, not a measurement)")
eff_m = given("achieved_bw_fraction", 0.85, unit="fraction", source="assumed: share of the HBM3 peak that a "
              "decode step's weight and KV reads reach (a declared derating, not a measurement)")


def step_parts(b: int, s: int, q: int, ec: float = 1.0, em: float = 1.0) -> tuple[float, float]:
    mem = (w_bytes + b * s * kv_tok) / (bw * 1e12 * em)
    comp = (flop_per_param * total * b * q + attn_flop_coeff * s * heads * head_dim * L * b * q) / (flops * 1e12 * ec)
    return mem, comp


def step_time(b: int, s: int, q: int, ec: float = 1.0, em: float = 1.0) -> float:
    return max(step_parts(b, s, q, ec, em))


def draft_time(b: int, s: int, ec: float = 1.0, em: float = 1.0) -> float:
    mem = (draft_params * bytes_per_param + b * s * kv_tok / L) / (bw * 1e12 * em)
    comp = (flop_per_param * draft_params * b + attn_flop_coeff * s * heads * head_dim * b) / (flops * 1e12 * ec)
    return max(mem, comp)


def expected_tokens(a: float) -> float:
    return (1 - a ** (gamma + 1)) / (1 - a)


def spec_ratio(b: int, s: int, a: float, draft_cost: bool = True, ec: float = 1.0, em: float = 1.0) -> float:
    t_spec = (gamma * draft_time(b, s, ec, em) if draft_cost else 0.0) + step_time(b, s, gamma + 1, ec, em)
    return expected_tokens(a) * step_time(b, s, 1, ec, em) / t_spec


t_plain = claim("plain_step_time", step_time(batch, ctx, 1), unit="s")
t_verify = claim("verify_step_time", step_time(batch, ctx, gamma + 1), unit="s")
t_draft = claim("draft_steps_time", gamma * draft_time(batch, ctx), unit="s")
ratio = claim("spec_over_plain_at_batch", spec_ratio(batch, ctx, alpha_real0), unit="x")
ratio_late = claim("spec_over_plain_at_batch_late", spec_ratio(batch, ctx, alpha_real_late), unit="x")
ratio_max = claim("spec_over_plain_max_batch_late", spec_ratio(int(max_batch_spec), ctx, alpha_real_late), unit="x")
check(ratio > ratio_late > 1, "with the KV read counted, speculation pays at batch 128, less with a drifted head")
check(ratio_max > 1, "and still pays, drifted, at the largest batch that fits at 2,048 tokens")

# Where does the verify pass turn compute-bound at this context? Solve mem = comp for b.
mem_per_seq = ctx * kv_tok / (bw * 1e12)
comp_per_seq = (gamma + 1) * (flop_per_param * total + attn_flop_coeff * ctx * heads * head_dim * L) / (flops * 1e12)
check(comp_per_seq > mem_per_seq, "each sequence adds more verify compute than KV read time, so a crossover exists")
crossover = claim("verify_compute_bound_batch", (w_bytes / (bw * 1e12)) / (comp_per_seq - mem_per_seq),
                  unit="sequences")
claim("verify_compute_per_seq", comp_per_seq, unit="s")
claim("verify_kv_read_per_seq", mem_per_seq, unit="s")
claim("verify_compute_over_kv_per_seq", comp_per_seq / mem_per_seq - 1, unit="fraction")
check(crossover > max_batch, "at peak rates the verify pass stays memory-bound at every batch that fits")
# Derated: the compute slope rises by 1/0.7 and the memory slope by 1/0.85, so the near-tie at peak tips early.
crossover_d = claim("verify_compute_bound_batch_derated",
                    (w_bytes / (bw * 1e12 * eff_m)) / (comp_per_seq / eff_c - mem_per_seq / eff_m), unit="sequences")
check(crossover_d < max_batch_spec, "derated, the verify pass turns compute-bound before the batch that fits")
mem_max_d, comp_max_d = step_parts(int(max_batch_spec), ctx, gamma + 1, eff_c, eff_m)
claim("verify_mem_time_max_batch_derated", mem_max_d, unit="s")
claim("verify_compute_time_max_batch_derated", comp_max_d, unit="s")
check(comp_max_d > mem_max_d, "derated, the verify pass at the largest batch that fits is compute-bound")
ratio_d = spec_ratio(batch, ctx, alpha_real0, ec=eff_c, em=eff_m)
check(abs(ratio_d - ratio) < 1e-9, "at 128 x 2,048 derating changes nothing: both steps stay memory-bound")
ratio_late_d = claim("spec_over_plain_at_batch_late_derated",
                     spec_ratio(batch, ctx, alpha_real_late, ec=eff_c, em=eff_m), unit="x")
ratio_max_d = claim("spec_over_plain_max_batch_late_derated",
                    spec_ratio(int(max_batch_spec), ctx, alpha_real_late, ec=eff_c, em=eff_m), unit="x")
check(ratio_max_d < ratio_max, "derated, the widest batch loses part of its peak-rate gain")
ratio_floor = claim("spec_over_plain_at_batch_floor", spec_ratio(batch, ctx, alpha_floor), unit="x")


# Where is "no faster"? The acceptance at which speculation merely breaks even at 128 x 2,048 (peak rates).
b_lo, b_hi = 0.0, alpha_real0
for _ in range(60):
    b_mid = (b_lo + b_hi) / 2
    if spec_ratio(batch, ctx, b_mid) < 1:
        b_lo = b_mid
    else:
        b_hi = b_mid
alpha_even = claim("breakeven_alpha_at_batch", b_hi, unit="fraction")
claim("breakeven_expected_tokens", expected_tokens(alpha_even), unit="tokens")
check(alpha_even < alpha_floor, "even the triangle-inequality floor clears break-even at 128 x 2,048")

# The regime the earlier answer priced: short sequences at wide batch, where weight reads dominate.
short_ctx = int(given("short_context", 256, unit="tokens", source="example: a short prompt early in generation"))
ratio_short = claim("spec_over_plain_short", spec_ratio(old_batch, short_ctx, alpha_real0), unit="x")
ratio_short_late = claim("spec_over_plain_short_late", spec_ratio(old_batch, short_ctx, alpha_real_late), unit="x")
check(ratio_short_late < 1 < ratio_short < 1.1, "at 256 sequences of 256 tokens the verify pass is compute-bound: "
      "a fresh head barely breaks even and the drifted head loses")
ratio_nokv = claim("spec_over_plain_no_kv", spec_ratio(old_batch, 0, alpha_real0), unit="x")
check(ratio_nokv < 1, "the earlier model (no KV at all) is where the 0.71x verdict came from")

ctx_long = int(given("long_context", 16384, unit="tokens", source="example: a long reasoning rollout"))
batch_long = claim("max_batch_long_ctx",
                   math.floor((kv_room - head_layer_bytes) / (ctx_long * kv_tok * (1 + 1 / L))), unit="requests")
ratio_long = claim("spec_over_plain_long_late", spec_ratio(int(batch_long), ctx_long, alpha_real_late), unit="x")
check(ratio_long > ratio_late, "the longer the rollout, the more the KV read hides the verify compute")
ratio_long_d = spec_ratio(int(batch_long), ctx_long, alpha_real_late, ec=eff_c, em=eff_m)
check(abs(ratio_long_d - ratio_long) < 1e-9, "at 16,384 tokens derating changes nothing: memory-bound throughout")
ctx_vlong = int(given("very_long_context", 65536, unit="tokens", source="example: a reasoning rollout "
                      "64K tokens deep, the regime of long chain-of-thought RL generations"))
batch_vlong = claim("max_batch_very_long_ctx",
                    math.floor((kv_room - head_layer_bytes) / (ctx_vlong * kv_tok * (1 + 1 / L))), unit="requests")
ratio_vlong = claim("spec_over_plain_very_long_late",
                    spec_ratio(int(batch_vlong), ctx_vlong, alpha_real_late), unit="x")
ratio_vlong_d = spec_ratio(int(batch_vlong), ctx_vlong, alpha_real_late, ec=eff_c, em=eff_m)
check(abs(ratio_vlong_d - ratio_vlong) < 1e-9, "at 65,536 tokens derating changes nothing: memory-bound throughout")
print(f"usable {usable / 1e9:.1f} GB, 256x2K needs {need_old / 1e9:.1f} GB, max batch {max_batch}, "
      f"128x2K needs {need / 1e9:.1f} GB; steps {t_plain * 1e3:.2f} / {t_verify * 1e3:.2f} / {t_draft * 1e3:.2f} ms")
print(f"ratio fresh {ratio:.2f} late {ratio_late:.2f} max-batch late {ratio_max:.2f} crossover {crossover:.0f} "
      f"short {ratio_short:.2f} long ({batch_long}) {ratio_long:.2f}")

# %% [markdown]
# ## Drafting from sibling rollouts
# GRPO-style RL samples n responses per prompt; siblings share structure. A suffix tree over the finished and
# in-flight siblings' tokens proposes drafts at no weight read (SuffixDecoding, Oliaro et al.,
# arXiv:2411.04975; in RL rollouts: Seer, Qin et al., arXiv:2511.14617, "adaptive grouped speculative
# decoding" with suffix trees built from the responses of the same prompt group). A deterministic draft token x is accepted with probability p(x) (rejection sampling with a point-mass
# q), so it stays lossless, and because the siblings are samples of the current policy it does not drift.
# How good must it be? The acceptance at which a draft-free verify pass matches the frozen head's late speedup.

# %%


def sibling_ratio(a: float) -> float:
    return spec_ratio(batch, ctx, a, draft_cost=False)


lo, hi = 0.0, alpha_real_late
for _ in range(60):
    mid = (lo + hi) / 2
    if sibling_ratio(mid) < ratio_late:
        lo = mid
    else:
        hi = mid
alpha_sib = claim("sibling_breakeven_alpha", hi, unit="fraction")
check(alpha_sib < alpha_real_late, "a free drafter matches the stale head at a lower acceptance")

# %% [markdown]
# ## The tail of a rollout batch: few long generations left, small batch again
# Seer (arXiv:2511.14617) measures the last 10% of requests taking up to 50% of rollout time in its baseline.

# %%
tail = int(given("tail_batch", 16, unit="requests", source="assumed: stragglers left when most rollouts have finished"))
tail_ctx = int(given("tail_context", 16384, unit="tokens", source="example: the stragglers are the long generations"))
tail_req = given("tail_request_share", 0.1, unit="fraction", source="Seer, arXiv:2511.14617: tail requests "
                 "are defined as the last 10% of requests to finish")
tail_share = given("tail_time_share", 0.5, unit="fraction", source="Seer, Qin et al., arXiv:2511.14617: the last "
                   "10% of requests consume up to 50% of rollout time (Moonlight, Qwen2-VL-72B, veRL baseline)")
tail_late = claim("tail_ratio_late", spec_ratio(tail, tail_ctx, alpha_real_late), unit="x")
tail_fresh = claim("tail_ratio_fresh", spec_ratio(tail, tail_ctx, alpha_real0), unit="x")
check(tail_fresh > tail_late > 1, "in the tail, speculation pays, and a refreshed head pays more")
check(abs(tail_late - ratio_late) < 0.01, "16 x 16,384 tokens read the same KV as 128 x 2,048: while the step is "
      "memory-bound the ratio depends on KV bytes against weight bytes, not on the batch")
print(f"crossover {crossover:.0f} peak / {crossover_d:.0f} derated; at {max_batch_spec:.0f} seqs derated verify "
      f"{comp_max_d * 1e3:.1f} ms compute vs {mem_max_d * 1e3:.1f} ms memory; break-even alpha {alpha_even:.3f}; "
      f"late alpha {alpha_real_late:.3f} (floor {alpha_floor:.3f}); greedy agreement {greedy0:.3f}")
print(round(c, 4), round(a0, 3), round(a_sharp, 3), round(a_late, 3), round(s0, 2), round(s_late, 2),
      round(alpha_sib, 3), round(tail_late, 2), round(tail_fresh, 2))
