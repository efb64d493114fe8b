# %% [markdown]
# # Two all-reduces per layer: what TP8 decode pays on NVLink, PCIe and across nodes
# Llama-3.1-70B (facts file: 80 layers, hidden 8192) at TP8 on H100s. Every collective is priced with NCCL's
# own cost model, `time = latency + bytes / algorithm_bandwidth`, using the constants of NCCL v2.30.7-1
# (github:NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults and ncclTopoTuneModel): a ring
# all-reduce over n ranks takes 2(n-1) steps, its latency is baseLat + steps x hwLat, and its algorithm
# bandwidth is busBw x n / (2(n-1)). The bus bandwidths are the links' datasheet peaks, so every
# bandwidth term here is a lower bound.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
q_heads = fact("llama3_1_70b.num_attention_heads", "q_heads")
inter = fact("llama3_1_70b.intermediate_size", "inter")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
hbm_bw = fact("h100_sxm.hbm_bandwidth", "hbm_tbs")
nvlink = fact("h100_sxm.nvlink_bw_per_gpu", "nvlink_gbs")
pcie = fact("networking.pcie_gen5_x16", "pcie_gbs")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total")
util = fact("vllm.gpu_memory_utilization_default", "util")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
tp = given("tp", 8, unit="GPUs", source="the question's layout: TP8, one H100 node (TP equal to the 8 KV heads)")
ar_per_layer = given("allreduces_per_layer", 2, source="Megatron-LM tensor parallelism (arXiv:1909.08053 §3): one "
                     "all-reduce after the attention output projection, one after the MLP down projection")
batch = given("batch", 64, unit="sequences", source="the question's hypothetical decode batch")
context = given("context", 4096, unit="tokens", source="the question's hypothetical mean context per sequence")

# NCCL v2.30.7-1 src/graph/tuning.cc ncclTunerConstantsDefaults, in microseconds
base_ll = given("nccl_base_lat_ring_ll", 6.6e-6, unit="s", source="NCCL v2.30.7-1 src/graph/tuning.cc "
                "baseLatencies Ring LL = 6.6 us")
hw_nvl = given("nccl_hw_lat_nvlink_ring_ll", 0.6e-6, unit="s", source="NCCL v2.30.7-1 src/graph/tuning.cc "
               "hwLatencies NVLINK Ring LL = 0.6 us per step")
hw_pci = given("nccl_hw_lat_pci_ring_ll", 1.0e-6, unit="s", source="NCCL v2.30.7-1 src/graph/tuning.cc "
               "hwLatencies PCI Ring LL = 1.0 us per step")
hw_net = given("nccl_hw_lat_net_ring_ll", 2.7e-6, unit="s", source="NCCL v2.30.7-1 src/graph/tuning.cc "
               "hwLatencies NET Ring LL = 2.7 us per inter-node step (before the topology's latencyInter)")
ll_bw_factor = given("nccl_ll_bw_factor", 0.5, source="NCCL v2.30.7-1 src/graph/tuning.cc ncclTopoTuneModel: "
                     "Ring LL busBw = min(llMaxBw, busBw * .5) (LL sends 8-byte flag+data words)")
ll_max_bw = given("nccl_ll_max_bw_hopper", 141.0, unit="GB/s", source="NCCL v2.30.7-1 src/graph/tuning.cc llMaxBws "
                  "Hopper-N1 = 141.0 GB/s")

# %% [markdown]
# ## Bytes and count per decode step

# %%
allreduces = claim("allreduces_per_step", ar_per_layer * layers)
claim("bytes_per_sequence", hidden * bf16, unit="B")
msg = claim("message_bytes", batch * hidden * bf16, unit="B")
phases = given("ring_phases", 2, source="NCCL v2.30.7-1 src/graph/tuning.cc: an all-reduce ring runs nsteps = "
               "2*(nRanks-1) (a reduce-scatter, then an all-gather)")
steps = claim("ring_steps", phases * (tp - 1), unit="steps")
check(allreduces == 160 and msg == 1024 * 1024, "160 all-reduces of 1 MiB each at batch 64")

# %% [markdown]
# ## The decode step they sit in: weights AND KV, and the batch must fit

# %%
per_layer = hidden * q_heads * head_dim * 2 + 2 * hidden * kv_heads * head_dim + 3 * hidden * inter + 2 * hidden
params = 2 * vocab * hidden + layers * per_layer + hidden
w_gpu = claim("weights_per_gpu", params * bf16 / tp, unit="B")
kv_token = 2 * layers * kv_heads * head_dim * bf16
kv_gpu = claim("kv_per_gpu", batch * context * kv_token / tp, unit="B")
overheads = given("runtime_overheads", 4.0e9, unit="B", source="example per-GPU activation peak + non-torch + "
                  "CUDA graphs, as in the max-concurrent-requests-memory-budget answer (2.5 + 1.0 + 0.5 GB)")
pool = claim("kv_pool_per_gpu", cuda_total * util - w_gpu - overheads, unit="B")
check(kv_gpu <= pool, "the batch's KV fits the vLLM pool on every GPU")
t_weights = claim("t_weights", w_gpu / (hbm_bw * 1e12), unit="s")
t_kv = claim("t_kv", kv_gpu / (hbm_bw * 1e12), unit="s")
t_hbm = claim("t_hbm", t_weights + t_kv, unit="s")
flops_per_gpu = 2 * params / tp * batch
check(flops_per_gpu / (989e12) < 0.25 * t_hbm, "batch 64 is far below the ridge: the step is memory-bound")

# %% [markdown]
# ## Each link under NCCL's model (LL protocol, the one NCCL picks for small messages)

# %%
def ring_allreduce(hw_lat_intra: float, inter_steps: int, bus_bw_gbs: float) -> tuple[float, float]:
    """NCCL's ring all-reduce: (latency, bandwidth time) for one message."""
    lat = base_ll + (steps - inter_steps) * hw_lat_intra + inter_steps * hw_net
    alg_bw = min(ll_max_bw, bus_bw_gbs * ll_bw_factor) * tp / steps
    return lat, msg / (alg_bw * 1e9)


nvl_dir = claim("nvlink_per_direction", nvlink / 2, unit="GB/s")
lat_nvl, bw_nvl = ring_allreduce(hw_nvl, 0, nvl_dir)
lat_pci, bw_pci = ring_allreduce(hw_pci, 0, pcie)
lat_nvl = claim("lat_nvlink", lat_nvl, unit="s")
lat_pci = claim("lat_pcie", lat_pci, unit="s")
bw_nvl = claim("bwtime_nvlink", bw_nvl, unit="s")
bw_pci = claim("bwtime_pcie", bw_pci, unit="s")
step_nvl = claim("ar_step_nvlink", allreduces * (lat_nvl + bw_nvl), unit="s")
step_pci = claim("ar_step_pcie", allreduces * (lat_pci + bw_pci), unit="s")
share_nvl = claim("ar_share_nvlink", step_nvl / (step_nvl + t_hbm), unit="fraction")
share_pci = claim("ar_share_pcie", step_pci / (step_pci + t_hbm), unit="fraction")
lat_frac_nvl = claim("latency_fraction_nvlink", lat_nvl / (lat_nvl + bw_nvl), unit="fraction")
check(lat_nvl > bw_nvl, "on NVLink the latency term exceeds the bandwidth term at batch 64")
check(bw_pci > lat_pci, "on PCIe the bandwidth term dominates at batch 64")

# Two nodes, TP16 (what a 405B-class model forces): the ring has 2 inter-node steps out of 30.
tp16 = given("tp16", 16, unit="GPUs", source="the question's hypothetical: TP over two 8-GPU nodes")
nodes = given("nodes", 2, unit="nodes", source="the question's hypothetical: two 8-GPU nodes")
steps16 = claim("ring_steps_16", 2 * (tp16 - 1), unit="steps")
inter_steps = claim("inter_steps", 2 * (nodes - 1), unit="steps")  # NCCL nInterSteps for an all-reduce ring
nic_gbs = claim("nic_per_direction", nic / 8, unit="GB/s")
lat16 = claim("lat_two_nodes", base_ll + (steps16 - inter_steps) * hw_nvl + inter_steps * hw_net, unit="s")
check(lat16 > lat_nvl, "crossing nodes adds latency even before the network's own latencyInter")

# %% [markdown]
# ## Sensitivity: batch size and a derated HBM

# %%
hbm_eff = given("hbm_efficiency", 0.8, unit="fraction", source="the question's hypothetical derating of the HBM "
                "roofline (sustained decode rarely reaches datasheet bandwidth); the share below shows the effect")
share_nvl_derated = claim("ar_share_nvlink_derated", step_nvl / (step_nvl + t_hbm / hbm_eff), unit="fraction")
batch1 = given("batch1", 1, unit="sequences", source="the question's single-stream case")
b1_msg = batch1 * hidden * bf16
lat1, bw1 = ring_allreduce(hw_nvl, 0, nvl_dir)
bw1 = bw1 * b1_msg / msg
step_b1 = claim("ar_step_nvlink_batch1", allreduces * (lat1 + bw1), unit="s")
t_hbm_b1 = claim("t_hbm_batch1", (w_gpu + context * kv_token / tp) / (hbm_bw * 1e12), unit="s")
share_b1 = claim("ar_share_nvlink_batch1", step_b1 / (step_b1 + t_hbm_b1), unit="fraction")
custom_ar_max = given("custom_ar_max_bytes", 8192 * 1024, unit="B", source="vllm/distributed/device_communicators/"
                      "custom_all_reduce.py @00d618aa CustomAllreduce max_size=8192 * 1024; _SUPPORTED_WORLD_SIZES "
                      "[2, 4, 6, 8]; disabled across nodes and on more than two PCIe-only GPUs")
max_batch_custom = claim("custom_ar_max_batch", custom_ar_max / (hidden * bf16), unit="sequences")
print(f"step: weights {t_weights*1e3:.2f} ms, kv {t_kv*1e3:.2f} ms; AR nvlink {step_nvl*1e3:.2f} ms "
      f"({share_nvl:.1%}), pcie {step_pci*1e3:.2f} ms ({share_pci:.1%}); batch1 {share_b1:.1%}")
print(f"lat nvl {lat_nvl*1e6:.1f} us bw {bw_nvl*1e6:.2f} us; pci {lat_pci*1e6:.1f} / {bw_pci*1e6:.1f}; 2-node {lat16*1e6:.1f}")

# %% [markdown]
# ## Which protocol NCCL would pick, and where it switches
# LL128's per-channel cap (perChMaxRingLL128Bws, 36.7 GB/s per channel on Hopper) depends on the channel count the
# topology search finds; it is left out, which makes LL128 look faster and its crossover an earliest bound.

# %%
base_ll128 = given("nccl_base_lat_ring_ll128", 14.0e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc baseLatencies Ring LL128")
base_simple = given("nccl_base_lat_ring_simple", 8.4e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc baseLatencies Ring Simple")
hw_nvl_ll128 = given("nccl_hw_lat_nvlink_ring_ll128", 1.9e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NVLINK Ring LL128")
hw_nvl_simple = given("nccl_hw_lat_nvlink_ring_simple", 3.4e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NVLINK Ring Simple")
ll128_factor = given("nccl_ll128_bw_factor", 0.92, source="NCCL v2.30.7-1 tuning.cc: Ring LL128 busBw * 0.92 (120/128)")
alg_ll = min(ll_max_bw, nvl_dir * ll_bw_factor) * tp / steps * 1e9
alg_ll128 = nvl_dir * ll128_factor * tp / steps * 1e9
alg_simple = nvl_dir * tp / steps * 1e9
lat_ll128 = claim("lat_nvlink_ll128", base_ll128 + steps * hw_nvl_ll128, unit="s")
lat_simple = claim("lat_nvlink_simple", base_simple + steps * hw_nvl_simple, unit="s")
t_ll128 = claim("ar_nvlink_ll128", lat_ll128 + msg / alg_ll128, unit="s")
t_simple = claim("ar_nvlink_simple", lat_simple + msg / alg_simple, unit="s")
t_ll = claim("ar_nvlink_ll", lat_nvl + bw_nvl, unit="s")
check(t_ll < t_ll128 < t_simple, "at 1 MiB LL is NCCL's cheapest ring protocol on NVLink")
cross_ll128 = claim("crossover_ll_ll128", (lat_ll128 - lat_nvl) / (1 / alg_ll - 1 / alg_ll128), unit="B")
claim("crossover_batch_ll128", cross_ll128 / (hidden * bf16), unit="sequences")
check(cross_ll128 > msg, "the switch to LL128 comes only at batches larger than 64")
# On an NVSwitch board NCCL also prices NVLS (the switch reduces; Simple protocol only): latency = hwLatencies NVLINK
# NVLS 25 us with no base latency; busBw = bwIntra * nvlsEfficiency (Hopper 0.85) * (nCh-1)/nCh * 2 ("AllReduce
# pipelines two operations"), times nRanks/nsteps like the ring. (nCh-1)/nCh is taken as 1, so NVLS's bandwidth and
# its crossover with LL are best cases.
hw_nvls = given("nccl_hw_lat_nvlink_nvls", 25e-6, unit="s", source="NCCL v2.30.7-1 src/graph/tuning.cc hwLatencies "
                "NVLINK NVLS Simple = 25 us; baseLatencies NVLS = 0; ncclTopoTuneModel: latency = intraLat for one node")
nvls_eff = given("nccl_nvls_efficiency_hopper", 0.85, source="NCCL v2.30.7-1 src/graph/tuning.cc nvlsEfficiency Hopper")
alg_nvls = nvl_dir * nvls_eff * 2 * tp / steps * 1e9
t_nvls = claim("ar_nvlink_nvls", hw_nvls + msg / alg_nvls, unit="s")
cross_nvls = claim("crossover_ll_nvls", (hw_nvls - lat_nvl) / (1 / alg_ll - 1 / alg_nvls), unit="B")
claim("crossover_batch_nvls", cross_nvls / (hidden * bf16), unit="sequences")
claim("nvls_latency_over_ll", hw_nvls / lat_nvl, unit="x")
check(cross_nvls < msg < cross_ll128, "on an NVSwitch board NVLS, not LL128, is what takes over from LL near batch 64")
claim("ar_step_nvlink_nvls", allreduces * min(t_nvls, t_ll), unit="s")
claim("pcie_bw_over_latency", bw_pci / lat_pci, unit="x")
given("h100_pcie_hbm_bw", 2.0, unit="TB/s", source="NVIDIA H100 PCIe: GPU memory bandwidth 2,000 GB/s (NVIDIA H100 "
      "datasheet table via the archive-lib.hpctech.co.jp reproduction; product brief PB-11133-001_v02)")
