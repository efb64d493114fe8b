# %% [markdown]
# # One decode step of a Mamba-2 layer over a pooled state cache, with padded slots
# The engine keeps every running sequence's SSM state in a pool indexed by slot; a decode batch carries a
# state index per row, and rows that only pad the batch to a CUDA-graph size carry PAD_SLOT_ID = -1
# (vllm/v1/attention/backends/utils.py; the Mamba metadata carries state_indices_tensor). Per head:
#   h <- exp(dt A) h + dt x B^T ;  y = h C + D x        (Dao & Gu, arXiv:2405.21060, §3)
# Reference: a loop over rows. Drill: a vectorised gather-update-scatter that must skip padded rows.
# Broken variant: index the pool with -1 like any other index; PyTorch reads that as the LAST slot.

# %%
import torch

from model_shapes import mamba2_state_bytes

from qbank.verify import check, claim, fact, given, kernel_check

PAD = int(given("pad_slot_id", -1, source="vllm/v1/attention/backends/utils.py PAD_SLOT_ID = -1"))
torch.manual_seed(0)
slots = int(given("pool_slots", 10, unit="slots", source="test pool size"))
H, P, N = 4, 8, 16  # small test shapes
live_rows = given("live_rows", 4, unit="sequences", source="test batch: live rows")
pad_rows = given("pad_rows", 2, unit="sequences", source="test batch: padding rows")
tol = given("tolerance", 1e-12, source="float64 comparison tolerance")
rows = int(given("test_rows", 6, unit="sequences", source="test batch: 4 live rows padded to a graph size of 6"))
pool0 = torch.randn(slots, H, P, N, dtype=torch.float64)
idx = torch.tensor([7, 2, 5, 0, PAD, PAD])  # 4 live rows in scattered slots, 2 padding rows
check(int((idx >= 0).sum()) == live_rows and int((idx < 0).sum()) == pad_rows, "test batch shape")
x = torch.randn(rows, H, P, dtype=torch.float64)
dt = torch.nn.functional.softplus(torch.randn(rows, H, dtype=torch.float64))
A = -torch.rand(H, dtype=torch.float64) - 0.5
B = torch.randn(rows, N, dtype=torch.float64)
C = torch.randn(rows, N, dtype=torch.float64)
D = torch.randn(H, dtype=torch.float64)


def step_reference(pool, idx, x, dt, A, B, C, D):
    pool = pool.clone()
    y = torch.zeros_like(x)
    for r in range(idx.shape[0]):
        s = int(idx[r])
        if s < 0:
            continue  # a padded row: no state, output ignored
        h = torch.exp(dt[r] * A)[:, None, None] * pool[s] + dt[r][:, None, None] * x[r][:, :, None] * B[r]
        pool[s] = h
        y[r] = torch.einsum("hpn,n->hp", h, C[r]) + D[:, None] * x[r]
    return y, pool


def step_pooled(pool, idx, x, dt, A, B, C, D):
    pool = pool.clone()
    live = idx >= 0
    s = idx[live]
    h = pool[s]  # gather: (live, H, P, N)
    decay = torch.exp(dt[live] * A)[:, :, None, None]
    h = decay * h + dt[live][:, :, None, None] * x[live][:, :, :, None] * B[live][:, None, None, :]
    pool[s] = h  # scatter back; slots are unique per step
    y = torch.zeros_like(x)
    y[live] = torch.einsum("bhpn,bn->bhp", h, C[live]) + D[None, :, None] * x[live]
    return y, pool


def step_pooled_broken(pool, idx, x, dt, A, B, C, D):
    pool = pool.clone()
    h = pool[idx]  # -1 silently gathers the last slot
    decay = torch.exp(dt * A)[:, :, None, None]
    h = decay * h + dt[:, :, None, None] * x[:, :, :, None] * B[:, None, None, :]
    pool[idx] = h  # ... and scatters a padded row's garbage into it
    y = torch.einsum("bhpn,bn->bhp", h, C) + D[None, :, None] * x
    return y, pool


# %% [markdown]
# ## Checks: outputs of live rows and the whole pool after the step

# %%
args = (pool0, idx, x, dt, A, B, C, D)
y_ref, pool_ref = step_reference(*args)
live = idx >= 0
kernel_check("pooled_step_outputs", lambda *a: step_pooled(*a)[0][live], lambda *a: step_reference(*a)[0][live],
             *args, rtol=tol, atol=tol)
kernel_check("pooled_step_pool", lambda *a: step_pooled(*a)[1], lambda *a: step_reference(*a)[1], *args,
             rtol=tol, atol=tol)
_, pool_bad = step_pooled_broken(*args)
untouched = claim("untouched_slots", int(slots - live.sum()), unit="slots")
check(torch.equal(pool_ref[slots - 1], pool0[slots - 1]), "the correct step leaves slot 9 (not in the batch) alone")
corrupt = claim("broken_last_slot_change", float((pool_bad[slots - 1] - pool0[slots - 1]).abs().max()))
check(corrupt > 1e-3, "the broken step overwrites slot 9, a sequence that was not even scheduled")

# %% [markdown]
# ## What the step costs at Nemotron-H-8B's shape: bytes, FLOPs, and why batching does not help
# Per head and token: read and write the P x N state (2 x 2 B x P N in BF16); FLOPs: decay multiply (PN),
# outer-product add (2 PN), output dot (2 PN) -> 5 PN.

# %%
m_layers = fact("nemotron_h_8b.mamba_layers", "mamba_layers")
heads = fact("nemotron_h_8b.mamba_num_heads", "heads")
hd = fact("nemotron_h_8b.mamba_head_dim", "head_dim")
ds = fact("nemotron_h_8b.ssm_state_size", "d_state")
bf16 = fact("nemotron_h_8b.state_dtype_bytes", "bf16_bytes")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
state_bytes_tok = claim("state_traffic_per_seq", 2 * m_layers * heads * hd * ds * bf16, unit="B")
groups = fact("nemotron_h_8b.n_groups", "groups")
d_conv = fact("nemotron_h_8b.conv_kernel", "conv_kernel")
conv_tok = claim("conv_traffic_per_seq", 2 * m_layers * mamba2_state_bytes(heads, hd, ds, groups, d_conv,
                                                                         conv_bytes=bf16)[0], unit="B")
claim("conv_over_ssm_traffic", conv_tok / state_bytes_tok, unit="fraction")
per_el = claim("flops_per_element", 5, unit="FLOP")
flops_tok = claim("state_flops_per_seq", per_el * m_layers * heads * hd * ds, unit="FLOP")
intensity = claim("state_update_intensity", flops_tok / state_bytes_tok, unit="x")
ridge = claim("h100_ridge", peak * 1e12 / (bw * 1e12), unit="x")
check(intensity < ridge / 100, "the state update is bandwidth-bound at any batch size")
batch = given("batch", 64, unit="sequences", source="the question's hypothetical decode batch")
weights = claim("weight_bytes", fact("derived.nemotron_h_8b_params", "nh_params") * bf16, unit="B")
state_step = claim("state_traffic_batch", batch * state_bytes_tok, unit="B")
t_state = claim("t_state", state_step / (bw * 1e12), unit="s")
t_weights = claim("t_weights", weights / (bw * 1e12), unit="s")
share = claim("state_over_weights", state_step / weights, unit="fraction")
be = claim("batch_state_equals_weights", weights / state_bytes_tok, unit="sequences")
