# %% [markdown]
# # Speculative decoding on a hybrid: three ways to undo a rejected token in the recurrent state
# Attention rolls back by truncating KV; a Mamba-2 state cannot subtract a token. vLLM's Mamba bookkeeping
# (vllm/model_executor/layers/mamba/mamba_utils.py @02d71083) shows two of the designs: with num_spec
# speculative tokens the conv state keeps conv_kernel - 1 + num_spec rows, and get_temporal_copy_spec picks the
# SSM state of block_ids[cur + num_accepted_tokens - 1], i.e. one stored state per draft position; the same
# file sizes a 'ReplaySSM' ring of per-token inputs (x: heads x len x head_dim in the activation dtype,
# dt: heads x len in FP32, B: groups x len x d_state) from which a state can be re-derived.
# Model Nemotron-H-8B (facts), one H100 80GB, a memory-bound verify step priced with weights + KV + state traffic.

# %%
from model_shapes import mamba2_state_bytes

from qbank.verify import check, claim, fact, given

m_layers = fact("nemotron_h_8b.mamba_layers", "mamba_layers")
a_layers = fact("nemotron_h_8b.attention_layers", "attention_layers")
heads = fact("nemotron_h_8b.mamba_num_heads", "heads")
hd = fact("nemotron_h_8b.mamba_head_dim", "head_dim")
groups = fact("nemotron_h_8b.n_groups", "groups")
d_state = fact("nemotron_h_8b.ssm_state_size", "d_state")
d_conv = fact("nemotron_h_8b.conv_kernel", "conv_kernel")
kv_heads = fact("nemotron_h_8b.num_key_value_heads", "kv_heads")
attn_hd = fact("nemotron_h_8b.attention_head_dim", "attn_head_dim")
hbm_bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
flops = fact("h100_sxm.bf16_dense", "bf16_flops")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
util = fact("vllm.gpu_memory_utilization_default", "util")
bf16 = fact("nemotron_h_8b.state_dtype_bytes", "bf16_bytes")
fp32 = given("fp32_bytes", 4, unit="B", source="FP32 is 4 bytes (the ring's dt, per mamba_utils.py)")
weights = claim("weight_bytes", fact("derived.nemotron_h_8b_params", "nh_params") * bf16, unit="B")
k = given("draft_tokens", 4, unit="tokens", source="the question's hypothetical draft length")
batch = given("batch", 32, unit="sequences", source="the question's hypothetical decode batch")
ctx = given("context", 4096, unit="tokens", source="the question's hypothetical context per sequence")
alpha = given("acceptance", 0.7, unit="fraction", source="the question's hypothetical per-token acceptance rate; "
              "the sensitivity below varies it")
bw_eff = given("bw_efficiency", 0.8, unit="fraction", source="the question's hypothetical achieved fraction of "
               "datasheet bandwidth; it scales every design alike")

# %% [markdown]
# ## Per-sequence sizes

# %%
conv_layer, ssm_b = mamba2_state_bytes(heads, hd, d_state, groups, d_conv, ssm_bytes=bf16, conv_bytes=bf16)
ssm_layer = claim("ssm_state_per_layer", ssm_b, unit="B")
ssm_seq = claim("ssm_state_per_seq", m_layers * ssm_layer, unit="B")
conv_seq = m_layers * conv_layer
state_seq = claim("state_per_seq", ssm_seq + conv_seq, unit="B")
kv_tok = claim("kv_per_token", a_layers * 2 * kv_heads * attn_hd * bf16, unit="B")
ring_tok_layer = claim("ring_per_token_layer", heads * hd * bf16 + heads * fp32 + groups * d_state * bf16, unit="B")
ring_tok = m_layers * ring_tok_layer
ring_vs_state = claim("state_over_ring_token", ssm_layer / ring_tok_layer, unit="x")
positions = claim("verify_positions", k + 1, unit="tokens")

# %% [markdown]
# ## One verify step of the batch, memory-bound, three designs
# All read the weights once, every sequence's KV once and every sequence's state once.
# Snapshot: write a full SSM state per verified position (k+1). Replay: write one state (the committed one,
# after replaying the accepted tokens from the ring) plus the ring's inputs. Recompute: like replay, but the
# accepted tokens re-enter the next step as extra query tokens (their FLOPs, negligible at this batch).

# %%
w_read = weights
kv_read = claim("kv_read", batch * ctx * kv_tok, unit="B")
st_read = claim("state_read", batch * state_seq, unit="B")
snap_write = claim("snapshot_writes", batch * positions * ssm_seq, unit="B")
replay_write = claim("replay_writes", batch * (ssm_seq + positions * ring_tok), unit="B")
plain_write = claim("plain_writes", batch * ssm_seq, unit="B")
# Kernels run in series, so each is priced on its own roofline and the times add: the GEMMs take
# max(weight bytes, GEMM FLOPs) over the batch's verify positions; attention, the Mamba scans and the state writes
# are bandwidth-bound (a few FLOPs per byte) and are priced by their bytes.
t_flop = claim("t_step_flops", 2 * (weights / bf16) * batch * positions / (flops * 1e12), unit="s")
t_w = claim("t_weights", w_read / (hbm_bw * 1e12 * bw_eff), unit="s")
t_gemm = max(t_w, t_flop)
base_bytes = kv_read + st_read


def step_time(writes: float) -> float:
    return t_gemm + (base_bytes + writes) / (hbm_bw * 1e12 * bw_eff)


t_snap = claim("t_step_snapshot", step_time(snap_write), unit="s")
t_replay = claim("t_step_replay", step_time(replay_write), unit="s")
t_plain = claim("t_step_no_spec", step_time(batch * ssm_seq), unit="s")
check(t_flop < t_w, "the verify step's GEMMs stay bandwidth-bound at this batch")
flop_share = claim("flop_over_memory_time", t_flop / t_w, unit="fraction")
claim("gemm_ridge_batch", batch * t_w / t_flop, unit="sequences")
snap_over = claim("snapshot_write_share", snap_write / (w_read + base_bytes + snap_write), unit="fraction")

# the batch fits: weights + KV + states (snapshots need k+1 SSM copies) within vLLM's request
pool = claim("vllm_request", cuda_total * util, unit="B")
need_snap = claim("memory_snapshot", weights + batch * (ctx * kv_tok + state_seq + k * ssm_seq), unit="B")
check(need_snap < pool, "the snapshot design's batch fits the H100's vLLM request")


def tokens_per_step(a: float, g: float) -> float:
    return (1 - a ** (g + 1)) / (1 - a)


e_tok = claim("expected_tokens", tokens_per_step(alpha, k), unit="tokens")
tps_plain = claim("tps_no_spec", batch / t_plain, unit="tokens/s")
tps_snap = claim("tps_snapshot", batch * e_tok / t_snap, unit="tokens/s")
tps_replay = claim("tps_replay", batch * e_tok / t_replay, unit="tokens/s")
gain_snap = claim("gain_snapshot", tps_snap / tps_plain, unit="x")
gain_replay = claim("gain_replay", tps_replay / tps_plain, unit="x")
check(gain_replay > gain_snap, "replay beats snapshots at any acceptance rate")

# %% [markdown]
# ## Sensitivity: the acceptance rate at which speculation stops paying, per design

# %%
def breakeven(t_spec: float) -> float:
    lo, hi = 0.0, 0.999
    for _ in range(60):
        mid = (lo + hi) / 2
        if tokens_per_step(mid, k) / t_spec > 1 / t_plain:
            hi = mid
        else:
            lo = mid
    return hi


be_snap = claim("breakeven_snapshot", breakeven(t_snap), unit="fraction")
be_replay = claim("breakeven_replay", breakeven(t_replay), unit="fraction")
claim("replay_step_over_plain", t_replay / t_plain - 1, unit="fraction")
check(be_replay < be_snap, "replay breaks even at a lower acceptance rate")

# %% [markdown]
# ## A draft tree: snapshots scale with nodes, and so does the ring, but at a ring entry per node

# %%
nodes = given("tree_nodes", 16, unit="nodes", source="the question's hypothetical draft tree size")
tree_snap_mem = claim("tree_snapshot_memory", batch * nodes * ssm_seq, unit="B")
tree_snap_write = claim("tree_snapshot_writes", batch * nodes * ssm_seq, unit="B")
tree_ring = claim("tree_ring_bytes", batch * nodes * ring_tok, unit="B")
t_tree_snap = claim("t_step_tree_snapshot", step_time(tree_snap_write), unit="s")
print(f"state {state_seq / 2**20:.2f} MiB; ring {ring_tok / 1024:.1f} KiB/token; steps: plain {t_plain * 1e3:.2f} ms,"
      f" snapshot {t_snap * 1e3:.2f}, replay {t_replay * 1e3:.2f}, flops {t_flop * 1e3:.2f}; gains {gain_snap:.2f}x"
      f" / {gain_replay:.2f}x; breakeven {be_snap:.3f} / {be_replay:.3f}; tree snapshot {t_tree_snap * 1e3:.2f} ms")
