# %% [markdown]
# # Decode over two nodes: TP16 against a single-node TP8 for Llama-3.1-405B (FP8 weights)
# Weights FP8 (1 byte per parameter), KV cache BF16. Llama-3.1-405B has 8 KV heads, so at TP16 each rank still
# holds one whole KV head (vLLM QKVParallelLinear replicates it, and its K/V projection, once tp > kv heads:
# vllm/model_executor/layers/linear.py @8c94938c): per-GPU KV per token is the same at TP8 and TP16.
# All-reduces priced with NCCL v2.30.7-1's model (src/graph/tuning.cc), taking the cheapest of ring and tree with
# the LL and Simple protocols per message (and NVLS inside one node); the topology's own inter-node latency is left out (it only adds, and
# only to TP16). For TP8, NCCL's model overstates what vLLM's in-node custom all-reduce costs, so TP16's
# advantage at small batch below is an upper bound.

# %%
import math

from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_405b.num_hidden_layers", "layers")
hidden = fact("llama3_1_405b.hidden_size", "hidden")
q_heads = fact("llama3_1_405b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_405b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_405b.head_dim", "head_dim")
inter = fact("llama3_1_405b.intermediate_size", "inter")
vocab = fact("llama3_1_405b.vocab_size", "vocab")
hbm_bw = fact("h100_sxm.hbm_bandwidth", "hbm_tbs")
nvlink = fact("h100_sxm.nvlink_bw_per_gpu", "nvlink_gbs")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total")
util = fact("vllm.gpu_memory_utilization_default", "util")
node = fact("h100_sxm.nvlink_domain", "gpus_per_node", unit="GPUs")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 weights: 1 byte per parameter")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16 activations and KV cache")
context = given("context", 8192, unit="tokens", source="the question's hypothetical mean context")
overheads = given("runtime_overheads", 4.0e9, unit="B", source="example per-GPU activation peak + non-torch + CUDA "
                  "graphs, as in the max-concurrent-requests-memory-budget answer (2.5 + 1.0 + 0.5 GB)")
ar_per_layer = given("allreduces_per_layer", 2, source="Megatron-LM tensor parallelism (arXiv:1909.08053 §3)")
tp16 = given("tp16", 16, unit="GPUs", source="the question's layout: two 8-GPU nodes")

# NCCL v2.30.7-1 src/graph/tuning.cc constants (us): base Ring LL 6.6, Tree LL 6.8, Ring/Tree Simple 8.4;
# hw NVLINK Ring LL 0.6, Tree LL 0.6, Ring Simple 3.4, Tree Simple 4.0; NET Ring LL 2.7, Tree LL 5.0, Simple 14;
# LL busBw * 0.5 (ring) or / 3.8 (tree), capped by llMaxBws Hopper-N1 141 / N2 45 GB/s; tree busBw * 0.92,
# tree algBw = busBw * 0.5.
C = {k: given(f"nccl_{k}", v, unit="s" if k.startswith(("b_", "h_")) else None,
              source="NCCL v2.30.7-1 src/graph/tuning.cc ncclTunerConstantsDefaults")
     for k, v in {"b_ring_ll": 6.6e-6, "b_tree_ll": 6.8e-6, "b_simple": 8.4e-6,
                  "h_nvl_ll": 0.6e-6, "h_nvl_ring_s": 3.4e-6, "h_nvl_tree_s": 4.0e-6,
                  "h_net_ring_ll": 2.7e-6, "h_net_tree_ll": 5.0e-6, "h_net_s": 14.0e-6}.items()}
ll_cap_1n = given("ll_max_bw_1node", 141.0, unit="GB/s", source="NCCL v2.30.7-1 tuning.cc llMaxBws Hopper-N1")
ll_cap_2n = given("ll_max_bw_2nodes", 45.0, unit="GB/s", source="NCCL v2.30.7-1 tuning.cc llMaxBws Hopper-N2")
nvl_dir = nvlink / 2
nic_dir = nic / 8
# ncclTopoGetAlgoTime (same file) refines the table per message before picking: a multi-node Simple ring all-reduce's
# latency x1.4 on compute capability >= 80 ("Plateau effect of ring"), and a tree all-reduce's bandwidth x
# treeCorrectionFactor[protocol][log2(nBytes / 64)] below index 23 ("Trees are not perfectly sticking to the model
# for medium sizes"). Rows for LL and Simple:
plateau = given("nccl_ring_plateau", 1.4, source="NCCL v2.30.7-1 src/graph/tuning.cc ncclTopoGetAlgoTime: "
                "lat *= comm->minCompCap < 80 ? 1.9 : 1.4 (Plateau effect of ring)")
TREE_CORRECTION = {
    "ll": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    "simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
}


# Inside one NVSwitch node NCCL also prices NVLS (the switch reduces): hwLatencies NVLINK NVLS 25 us, no base latency,
# busBw = link x nvlsEfficiency (Hopper 0.85) x 2 ("AllReduce pipelines two operations"), times nRanks/nsteps.
nvls_lat = given("nccl_nvls_lat", 25e-6, unit="s", source="NCCL v2.30.7-1 src/graph/tuning.cc hwLatencies NVLINK NVLS")
nvls_eff = given("nccl_nvls_eff", 0.85, source="NCCL v2.30.7-1 src/graph/tuning.cc nvlsEfficiency Hopper")


def tree_factor(size: float, proto: str) -> float:
    index = (int(size) // 64).bit_length() - 1
    return TREE_CORRECTION[proto][index] if 0 <= index < 23 else 1.0


def allreduce(size: float, nodes: int, extra_net: float = 0.0) -> float:
    """Cheapest of ring/tree x LL/Simple for one all-reduce of `size` bytes over `nodes` full nodes (s)."""
    n = nodes * node
    steps, inter_steps = 2 * (n - 1), 2 * (nodes - 1)
    bus = (nvl_dir if nodes == 1 else min(node * nic_dir, nvl_dir)) * 1e9
    cap = (ll_cap_1n if nodes == 1 else ll_cap_2n) * 1e9
    ring_ll = C["b_ring_ll"] + (steps - inter_steps) * C["h_nvl_ll"] + inter_steps * C["h_net_ring_ll"] \
        + size / (min(cap, bus * 0.5) * n / steps)
    ring_s = (C["b_simple"] + (steps - inter_steps) * C["h_nvl_ring_s"] + inter_steps * C["h_net_s"]) \
        * (plateau if nodes > 1 else 1.0) + size / (bus * n / steps)
    tree_ll = C["b_tree_ll"] + 2 * ((node - 1) * C["h_nvl_ll"] + math.log2(nodes) * C["h_net_tree_ll"]) \
        + size / (min(cap, bus * 0.92 / 3.8) * 0.5 * tree_factor(size, "ll"))
    tree_s = C["b_simple"] + 2 * ((node - 1) * C["h_nvl_tree_s"] + math.log2(nodes) * C["h_net_s"]) \
        + size / (bus * 0.92 * 0.5 * tree_factor(size, "simple"))
    nvls = nvls_lat + size / (nvl_dir * 1e9 * nvls_eff * 2 * n / steps) if nodes == 1 else math.inf
    return min(ring_ll, ring_s, tree_ll, tree_s, nvls) + 2 * (nodes - 1) * extra_net


# %% [markdown]
# ## Bytes per GPU per step

# %%
per_layer = hidden * q_heads * head_dim * 2 + 2 * hidden * kv_heads * head_dim + 3 * hidden * inter + 2 * hidden
params = 2 * vocab * hidden + layers * per_layer + hidden
kv_proj = layers * 2 * hidden * kv_heads * head_dim
w8 = claim("weights_per_gpu_tp8", params * fp8 / node, unit="B")
w16 = claim("weights_per_gpu_tp16", ((params - kv_proj) / tp16 + kv_proj / node) * fp8, unit="B")
kv_gpu_tok = claim("kv_per_token_per_gpu", layers * max(1, kv_heads / node) * 2 * head_dim * bf16, unit="B")
check(layers * max(1, kv_heads / tp16) * 2 * head_dim * bf16 == kv_gpu_tok, "TP16 holds as much KV per token per GPU as TP8")
seq_kv = claim("kv_per_seq_per_gpu", context * kv_gpu_tok, unit="B")
request = cuda_total * util
max8 = int(claim("max_seqs_tp8", math.floor((request - w8 - overheads) / seq_kv), unit="sequences"))
max16 = int(claim("max_seqs_tp16", math.floor((request - w16 - overheads) / seq_kv), unit="sequences"))
n_ar = claim("allreduces_per_step", ar_per_layer * layers)


def tpot(batch: float, tp_nodes: int, ar_scale: float = 1.0, extra_net: float = 0.0) -> tuple[float, float, float]:
    """(time per output token, HBM part, all-reduce part) in s for a decode batch."""
    w = w8 if tp_nodes == 1 else w16
    hbm = (w + batch * seq_kv) / (hbm_bw * 1e12)
    ar = n_ar * ar_scale * allreduce(batch * hidden * bf16, tp_nodes, extra_net)
    return hbm + ar, hbm, ar


# %% [markdown]
# ## Time per output token by batch

# %%
rows = {}
for b in (1, 16, 40):
    given(f"batch_{b}", b, unit="sequences", source="the question's batch sweep (40 is near TP8's capacity)")
    t8, h8, a8 = tpot(b, 1)
    t16, h16, a16 = tpot(b, 2)
    rows[b] = (t8, t16)
    claim(f"tpot_tp8_b{b}", t8, unit="s")
    claim(f"tpot_tp16_b{b}", t16, unit="s")
    claim(f"ar_tp16_b{b}", a16, unit="s")
claim("tput_per_gpu_tp8_b40", 40 / rows[40][0] / node, unit="tokens/s")
claim("tput_per_gpu_tp16_b40", 40 / rows[40][1] / tp16, unit="tokens/s")
check(rows[1][1] < rows[1][0], "at batch 1 TP16 delivers a lower time per token")
check(40 <= max8, "batch 40 fits TP8")
claim("speedup_b1", rows[1][0] / rows[1][1], unit="x")
# the batch where TP16's time per token stops beating TP8's
cross = next(b for b in range(1, max8 + 1) if tpot(b, 2)[0] >= tpot(b, 1)[0])
claim("crossover_batch", cross, unit="sequences")
slo = given("slo", 0.020, unit="s", source="the question's hypothetical 20 ms time-per-output-token target")
best8 = claim("max_batch_slo_tp8", max(b for b in range(1, max8 + 1) if tpot(b, 1)[0] <= slo), unit="sequences")
best16 = claim("max_batch_slo_tp16", max(b for b in range(1, max16 + 1) if tpot(b, 2)[0] <= slo), unit="sequences")
claim("tput_per_gpu_slo_tp8", best8 / tpot(best8, 1)[0] / node, unit="tokens/s")
claim("tput_per_gpu_slo_tp16", best16 / tpot(best16, 2)[0] / tp16, unit="tokens/s")
for b, (t8, t16) in rows.items():
    print(f"batch {b:>3}: TP8 {t8*1e3:6.2f} ms, TP16 {t16*1e3:6.2f} ms")
print(f"max seqs tp8 {max8}, tp16 {max16}; crossover {cross}; SLO batches {best8} / {best16}")

# %% [markdown]
# ## Sensitivity: what the model leaves out
# Two omissions push in opposite directions: vLLM's custom all-reduce makes TP8's collectives cheaper than NCCL's
# model, and the network's own latency per inter-node step makes TP16's dearer. Both sizes are the question's
# hypotheticals, chosen to show how far the conclusion moves.

# %%
ar_scale = given("tp8_custom_ar_scale", 0.5, unit="fraction", source="the question's hypothetical: vLLM's custom "
                 "all-reduce at half of NCCL's modelled time in one node")
extra = given("extra_net_latency", 5e-6, unit="s", source="the question's hypothetical topology latency per "
              "inter-node step (NCCL adds graph latencyInter there)")
s8 = claim("max_batch_slo_tp8_custom_ar", max(b for b in range(1, max8 + 1) if tpot(b, 1, ar_scale)[0] <= slo), unit="sequences")
s16 = claim("max_batch_slo_tp16_extra_net", max(b for b in range(1, max16 + 1) if tpot(b, 2, 1.0, extra)[0] <= slo), unit="sequences")
g8 = claim("tput_per_gpu_slo_tp8_custom_ar", s8 / tpot(s8, 1, ar_scale)[0] / node, unit="tokens/s")
g16 = claim("tput_per_gpu_slo_tp16_extra_net", s16 / tpot(s16, 2, 1.0, extra)[0] / tp16, unit="tokens/s")
check(g8 > g16, "with both omissions priced in, TP8 wins per GPU again: the conclusion is sensitive")
print(f"sensitivity: TP8 custom AR batch {s8} ({g8:.1f} tok/s/GPU), TP16 +net batch {s16} ({g16:.1f})")
claim("step_cost_per_us", n_ar * 1e-6, unit="s")  # one microsecond more per all-reduce, per token
claim("tp16_share", node / tp16, unit="x")
claim("ar_bytes_per_seq", hidden * bf16, unit="B")
given("nodes", 2, unit="nodes", source="the question's layout: two 8-GPU nodes")
claim("tput_ratio_b40", (40 / rows[40][0] / node) / (40 / rows[40][1] / tp16), unit="x")
