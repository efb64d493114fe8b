# %% [markdown]
# # When expert skew costs compute, and what placement and replication recover
# Expert size from DeepSeek-V3's config (fact base), FP8 weights; H100 SXM datasheet figures. Each expert
# GEMM takes max(weight bytes / HBM bandwidth, FLOPs / peak): below the ridge it costs the same at any
# token count, so skew is free; above it, time grows with tokens and the hottest GPU sets the step.
# Popularity model (an assumption, stated in the answer): expert popularity lognormal with sigma 0.6,
# seeded; traffic drift from one day to the next multiplies each expert's popularity by a lognormal
# factor with sigma 0.5. Layout: 64 GPUs, 4 experts each; replication adds 1 slot per GPU (64 replicas),
# as DeepSeek-V3's EPLB does with redundant experts (arXiv:2412.19437 §3.4).

# %%
import math
import random

from qbank.verify import check, claim, fact, given

E = fact("deepseek_v3.n_routed_experts", "routed_experts")
k = fact("deepseek_v3.num_experts_per_tok", "top_k")
d = fact("deepseek_v3.hidden_size", "d_model")
ffn = fact("deepseek_v3.moe_intermediate_size", "expert_ffn")
fp8_peak = fact("h100_sxm.fp8_dense", "h100_fp8")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
gpus = given("ep_gpus", 64, unit="GPUs", source="example expert-parallel group: 8 HGX nodes")
sigma = given("popularity_sigma", 0.6, source="assumed lognormal spread of expert popularity")
drift = given("drift_sigma", 0.5, source="assumed day-to-day lognormal drift of expert popularity")
redundant = given("redundant_slots", 64, unit="replicas", source="example: one redundant expert slot per GPU "
    "(EPLB-style)")
claim("replicated_experts", redundant, unit="experts")  # each redundant slot replicates a distinct hot expert

# %%
expert_bytes = claim("expert_bytes", 3 * d * ffn, unit="B")          # FP8: 1 byte per parameter
flops_tok = claim("expert_flops_per_token", 2 * 3 * d * ffn, unit="FLOP")
ridge_tokens = claim("ridge_tokens_per_expert", fp8_peak * 1e12 / (bw * 1e12) * expert_bytes / flops_tok, unit="tokens")
t_read = claim("expert_read_time", expert_bytes / (bw * 1e12), unit="s")
batch_even = claim("batch_skew_free_even", ridge_tokens * E / k, unit="tokens")

# %% [markdown]
# ## Popularity profiles, and the imbalance of three placements
# Averaged over 30 seeded popularity draws (a single draw can mislead: the spread is wide).

# %%
trials = given("trials", 30, source="number of seeded popularity draws averaged")
per_gpu = int(E // gpus)


def imbalance(slots: list[list[int]], load: list[float], replicas: dict[int, int]) -> float:
    """Max over GPUs of load (replicated experts split evenly) divided by the mean GPU load."""
    g_load = [sum(load[e] / replicas.get(e, 1) for e in g) for g in slots]
    return max(g_load) / (sum(g_load) / len(g_load))


def lpt(items: list[tuple[float, int]], cap: int) -> list[list[int]]:
    """Greedy longest-processing-time placement with a slot cap per GPU."""
    slots: list[list[int]] = [[] for _ in range(int(gpus))]
    loads = [0.0] * int(gpus)
    for w, e in sorted(items, reverse=True):
        g = min((i for i in range(int(gpus)) if len(slots[i]) < cap), key=lambda i: loads[i])
        slots[g].append(e)
        loads[g] += w
    return slots


def replicated_plan(load: list[float]) -> tuple[list[list[int]], dict[int, int]]:
    """Replicate the hottest experts into the redundant slots, then place all slots greedily."""
    hot = sorted(range(int(E)), key=lambda e: -load[e])[: int(redundant)]
    reps = {e: 2 for e in hot}
    items = [(load[e] / reps.get(e, 1), e) for e in range(int(E)) for _ in range(reps.get(e, 1))]
    return lpt(items, per_gpu + int(redundant // gpus)), reps


def normalized(xs: list[float]) -> list[float]:
    """Scale to sum 1."""
    t = sum(xs)
    return [x / t for x in xs]


naive = [list(range(g * per_gpu, (g + 1) * per_gpu)) for g in range(int(gpus))]
acc = {key: 0.0 for key in ("skew", "naive", "greedy", "rep", "stale", "fresh")}
worse_than_naive = 0
for seed in range(int(trials)):
    rng = random.Random(seed)
    pop = normalized([math.exp(rng.gauss(0, sigma)) for _ in range(int(E))])
    rep_slots, reps = replicated_plan(pop)
    today = normalized([p * math.exp(rng.gauss(0, drift)) for p in pop])
    fresh_slots, fresh_reps = replicated_plan(today)
    r = {
        "skew": max(pop) * E,
        "naive": imbalance(naive, pop, {}),
        "greedy": imbalance(lpt([(p, e) for e, p in enumerate(pop)], per_gpu), pop, {}),
        "rep": imbalance(rep_slots, pop, reps),
        "stale": imbalance(rep_slots, today, reps),
        "fresh": imbalance(fresh_slots, today, fresh_reps),
    }
    worse_than_naive += r["stale"] > imbalance(naive, today, {})
    for key in acc:
        acc[key] += r[key] / trials

expert_skew = claim("hottest_expert_over_mean", acc["skew"], unit="x")
batch_skewed = claim("batch_skew_starts", ridge_tokens * E / (k * expert_skew), unit="tokens")
imb_naive = claim("imbalance_naive", acc["naive"], unit="x")
imb_greedy = claim("imbalance_greedy", acc["greedy"], unit="x")
imb_rep = claim("imbalance_replicated", acc["rep"], unit="x")
check(imb_naive > imb_greedy > imb_rep >= 1, "greedy beats id order, replication beats greedy")
eff_naive = claim("efficiency_naive", 1 / imb_naive, unit="fraction")
eff_rep = claim("efficiency_replicated", 1 / imb_rep, unit="fraction")
n_layers = fact("deepseek_v3.num_hidden_layers", "layers")
n_dense = fact("deepseek_v3.first_k_dense_replace", "dense_layers")
moe_layers = claim("moe_layers", n_layers - n_dense, unit="layers")
experts_per_gpu = claim("experts_per_gpu", E / gpus, unit="experts")
slot_mem = claim("replica_memory_per_gpu", expert_bytes * redundant / gpus, unit="B")

slot_mem_all = claim("replica_memory_per_gpu_all_layers", slot_mem * moe_layers, unit="B")

# %% [markdown]
# ## Decay: yesterday's replicated placement under today's traffic

# %%
imb_stale = claim("imbalance_stale_plan", acc["stale"], unit="x")
imb_fresh = claim("imbalance_refit_plan", acc["fresh"], unit="x")
check(worse_than_naive == 0, "in every draw the stale plan still beats a placement blind to popularity")
check(imb_stale > imb_rep and imb_fresh < imb_stale, "a stale plan loses balance; refitting restores it")
print(f"ridge {ridge_tokens:.1f} tread {t_read*1e6:.2f}us even {batch_even:.0f} skew {expert_skew:.2f} batch "
    "{batch_skewed:.0f}")
print(f"naive {imb_naive:.3f} greedy {imb_greedy:.3f} rep {imb_rep:.3f} stale {imb_stale:.3f} fresh {imb_fresh:.3f}")
