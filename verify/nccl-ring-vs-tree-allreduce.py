# %% [markdown]
# # Ring or tree: NCCL's all-reduce cost model across 2 to 16 H100 nodes
# Every constant is NCCL v2.30.7-1's (github:NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults and
# ncclTopoTuneModel). For an all-reduce over n ranks on N nodes with ppn = n/N GPUs per node:
#   ring latency = baseLat + (2(n-1) - 2(N-1)) * intraLat + 2(N-1) * interLat
#   tree latency = baseLat + 2 * ((ppn-1) * intraLat + log2(N) * interLat)
# and algorithm bandwidth = busBw * n / (2(n-1)) for the ring, busBw * 0.92 * 0.5 for the tree, then refined per
# message size as ncclTopoGetAlgoTime does (below). Left out, because
# they depend on the topology NCCL detects: the graph's latencyInter and the NIC overhead (both add to every
# inter-node step, and the ring has more of them) and the per-channel bandwidth caps.

# %%
import math

from qbank.verify import check, claim, fact, given

ppn = fact("h100_sxm.nvlink_domain", "gpus_per_node", unit="GPUs")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
base_ring = given("base_ring_simple", 8.4e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc baseLatencies Ring Simple 8.4 us")
base_tree = given("base_tree_simple", 8.4e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc baseLatencies Tree Simple 8.4 us")
nvl_ring = given("nvlink_ring_simple", 3.4e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NVLINK Ring Simple 3.4 us")
nvl_tree = given("nvlink_tree_simple", 4.0e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NVLINK Tree Simple 4.0 us")
net_ring = given("net_ring_simple", 14.0e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NET Ring Simple 14.0 us")
net_tree = given("net_tree_simple", 14.0e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NET Tree Simple 14 us")
tree_eff = given("tree_bw_factor", 0.92, source="NCCL v2.30.7-1 tuning.cc: tree all-reduce busBw * .92")
tree_ratio = given("tree_alg_ratio", 0.5, source="NCCL v2.30.7-1 tuning.cc: non-ring algorithms algBw = busBw * .5")
phases = given("ring_phases", 2, source="NCCL v2.30.7-1 tuning.cc: an all-reduce ring takes nsteps = 2*(nRanks-1)")
nvlink = fact("h100_sxm.nvlink_bw_per_gpu", "nvlink_gbs")
# Eight NICs per node and NCCL spreads its channels over them, so each rank's share of the inter-node traffic
# crosses its own NIC: the bus bandwidth is bounded by ppn x 50 GB/s per node, and by NVLink inside it.
nic_dir = claim("nic_per_direction", nic / 8, unit="GB/s")
bus = claim("bus_bw", min(ppn * nic_dir, nvlink / 2), unit="GB/s")


def ring(nodes: int) -> tuple[float, float]:
    """(latency in s, algorithm bandwidth in B/s) of a ring all-reduce over `nodes` full nodes."""
    n = nodes * ppn
    steps, inter = phases * (n - 1), phases * (nodes - 1)
    return base_ring + (steps - inter) * nvl_ring + inter * net_ring, bus * 1e9 * n / steps


def tree(nodes: int) -> tuple[float, float]:
    """(latency in s, algorithm bandwidth in B/s) of NCCL's tree all-reduce over `nodes` full nodes."""
    return base_tree + 2 * ((ppn - 1) * nvl_tree + math.log2(nodes) * net_tree), bus * 1e9 * tree_eff * tree_ratio


# ncclTopoGetAlgoTime (same file, v2.30.7-1) refines both per message size before it compares them:
# - "Plateau effect of ring": a multi-node Simple ring all-reduce has its latency multiplied by 1.4 on compute
#   capability >= 80 once nBytes / (nChannels * nRanks) >= 64, true for every message below even at 64 channels;
# - treeCorrectionFactor: the tree's bandwidth is multiplied by a factor indexed by log2(nBytes / 64), below 1 for
#   medium sizes ("Trees are not perfectly sticking to the model for medium sizes"); the Simple row:
plateau = given("ring_plateau_factor", 1.4, source="NCCL v2.30.7-1 src/graph/tuning.cc ncclTopoGetAlgoTime: "
                "lat *= comm->minCompCap < 80 ? 1.9 : 1.4 (Plateau effect of ring), Simple, nNodes > 1, all-reduce")
TREE_CORRECTION_SIMPLE = (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9)
claim("tree_correction_min", min(TREE_CORRECTION_SIMPLE))


def tree_factor(size: float) -> float:
    """treeCorrectionFactor[Simple][log2i(nBytes >> 6)], applied below index 23."""
    log_size = int(size) // 64
    index = log_size.bit_length() - 1
    return TREE_CORRECTION_SIMPLE[index] if 0 <= index < len(TREE_CORRECTION_SIMPLE) else 1.0


def ring_time(nodes: int, size: float) -> float:
    lat, bw = ring(nodes)
    check(size / (64 * nodes * ppn) >= 64, "the ring plateau applies (at up to 64 channels)")
    return lat * plateau + size / bw


def tree_time(nodes: int, size: float) -> float:
    lat, bw = tree(nodes)
    return lat + size / (bw * tree_factor(size))


def crossover(nodes: int) -> float:
    """The message size above which the ring is cheaper, solved exactly on each power-of-two piece."""
    (lr, br), (lt, bt) = ring(nodes), tree(nodes)
    roots = []
    for k in range(40):
        lo, hi = 64.0 * 2**k, 64.0 * 2 ** (k + 1)
        f = tree_factor(lo)
        # lr*plateau + S/br = lt + S/(bt*f)  ->  S = (lr*plateau - lt) / (1/(bt*f) - 1/br)
        gap = 1 / (bt * f) - 1 / br
        if gap > 0:
            root = (lr * plateau - lt) / gap
            if lo <= root < hi:
                roots.append(root)
        if gap > 0 and (lr * plateau - lt) / gap < lo and not roots:
            roots.append(lo)  # the ring already wins at this piece's smallest size
    check(len(roots) == 1, f"one crossover at {nodes} nodes")
    return roots[0]


# %% [markdown]
# ## Latency and the crossover message size, by cluster size

# %%
rows = {}
for nodes in (2, 4, 8, 16):
    (lr, br), (lt, bt) = ring(nodes), tree(nodes)
    cross = crossover(nodes)
    check(ring_time(nodes, cross * 1.01) < tree_time(nodes, cross * 1.01) and
          tree_time(nodes, cross * 0.99) < ring_time(nodes, cross * 0.99), "the crossover separates the two")
    rows[nodes] = (lr, lt, cross)
    claim(f"ring_lat_{nodes}n", lr, unit="s")
    claim(f"tree_lat_{nodes}n", lt, unit="s")
    claim(f"crossover_{nodes}n", cross, unit="B")
    given(f"nodes_{nodes}", nodes, unit="nodes", source="the question's cluster sizes")
    claim(f"gpus_{nodes}n", nodes * ppn, unit="GPUs")
    check(lt < lr, f"tree latency is below ring latency at {nodes} nodes")
claim("ring_over_tree_16n", rows[16][0] / rows[16][1], unit="x")
claim("ring_lat_growth", rows[16][0] / rows[2][0], unit="x")
claim("tree_lat_growth", rows[16][1] / rows[2][1], unit="x")
check(rows[16][2] > rows[2][2], "the crossover moves to larger messages as the cluster grows")
lr16, br16 = ring(16)
lt16, bt16 = tree(16)
claim("ring_alg_bw_16n", br16, unit="B/s")
claim("tree_alg_bw_16n", bt16, unit="B/s")

# %% [markdown]
# ## What inference sends: decode-sized and prefill-sized messages

# %%
hidden = fact("llama3_1_405b.hidden_size", "hidden")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
batch = given("decode_batch", 128, unit="sequences", source="the question's hypothetical decode batch")
prompt = given("prefill_tokens", 8192, unit="tokens", source="the question's hypothetical prefill chunk")
dec = claim("decode_message", batch * hidden * bf16, unit="B")
pre = claim("prefill_message", prompt * hidden * bf16, unit="B")
for name, size in (("decode", dec), ("prefill", pre)):
    claim(f"{name}_ring_2n", ring_time(2, size), unit="s")
    claim(f"{name}_tree_2n", tree_time(2, size), unit="s")
    claim(f"{name}_ring_16n", ring_time(16, size), unit="s")
    claim(f"{name}_tree_16n", tree_time(16, size), unit="s")
    claim(f"{name}_tree_factor", tree_factor(size))
check(dec < rows[2][2], "a decode-sized message favours the tree at every cluster size here")
check(rows[4][2] < pre < rows[8][2], "a prefill-sized message favours the ring up to 4 nodes, the tree from 8")

# %% [markdown]
# ## The low-latency protocol does not change the ranking

# %%
ll = {
    "base_ring": given("base_ring_ll", 6.6e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc baseLatencies Ring LL"),
    "base_tree": given("base_tree_ll", 6.8e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc baseLatencies Tree LL"),
    "nvl": given("nvlink_ll", 0.6e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NVLINK Ring/Tree LL 0.6 us"),
    "net_ring": given("net_ring_ll", 2.7e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NET Ring LL"),
    "net_tree": given("net_tree_ll", 5.0e-6, unit="s", source="NCCL v2.30.7-1 tuning.cc hwLatencies NET Tree LL"),
}
n16 = 16 * ppn
ring_ll = claim("ring_lat_ll_16n", ll["base_ring"] + (phases * (n16 - 1) - phases * 15) * ll["nvl"] + phases * 15 * ll["net_ring"], unit="s")
tree_ll = claim("tree_lat_ll_16n", ll["base_tree"] + 2 * ((ppn - 1) * ll["nvl"] + math.log2(16) * ll["net_tree"]), unit="s")
claim("ring_over_tree_ll_16n", ring_ll / tree_ll, unit="x")
check(tree_ll < ring_ll, "with LL too, the tree's latency is lower at 16 nodes")
for nodes, (lr, lt, c) in rows.items():
    print(f"{nodes:>2} nodes: ring {lr*1e6:7.1f} us, tree {lt*1e6:6.1f} us, crossover {c/1e6:8.1f} MB")
given("algorithms", 2, source="NCCL's classic all-reduce algorithms, ring and tree (tuning.cc NCCL_ALGO_RING, NCCL_ALGO_TREE)")
given("double_trees", 2, source="NCCL v2.30.7-1 src/graph/trees.cc ncclGetDtree: a binary tree over the nodes and a "
      "second one mirrored or shifted from it; NCCL 2.4.2 release notes: tree-based all-reduce 'at scale and with "
      "small and medium size messages'")
