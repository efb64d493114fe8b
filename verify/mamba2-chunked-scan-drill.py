# %% [markdown]
# # Mamba-2's chunked scan (SSD) against the token-by-token recurrence
# The recurrence per head (Dao & Gu, "Transformers are SSMs", arXiv:2405.21060, §3 and §6):
#   h_t = exp(dt_t * A) * h_{t-1} + dt_t * x_t B_t^T        (h: head_dim x d_state)
#   y_t = h_t C_t
# The chunked (SSD) form of §6 (the paper's Listing 1, mamba_ssm/modules/ssd_minimal.py in state-spaces/mamba)
# splits the sequence into chunks of Q tokens: inside a chunk the output is a masked, decayed Q x Q "attention"
# C B^T; across chunks only the state is passed, one step per chunk. Written here from the equations, checked
# against the recurrence in float64, then costed in FLOPs per token with Nemotron-H-8B's head shape.

# %%
import torch

from qbank.verify import check, claim, fact, given, kernel_check

torch.manual_seed(0)
T = int(given("test_tokens", 64, unit="tokens", source="test shape, small for the CPU check"))
H = int(given("test_heads", 2, unit="heads", source="test shape"))
P, N = 4, 8  # head_dim, d_state of the test
x = torch.randn(T, H, P, dtype=torch.float64)
dt = torch.nn.functional.softplus(torch.randn(T, H, dtype=torch.float64) - 1)
A = -torch.rand(H, dtype=torch.float64) - 0.5
B = torch.randn(T, N, dtype=torch.float64)  # one group shared by both heads (n_groups = 1)
C = torch.randn(T, N, dtype=torch.float64)
h0 = torch.randn(H, P, N, dtype=torch.float64)


def scan_reference(x, dt, A, B, C, h0):
    """Token by token: T dependent steps."""
    h = h0.clone()
    ys = []
    for t in range(x.shape[0]):
        decay = torch.exp(dt[t] * A)  # (H,)
        h = decay[:, None, None] * h + dt[t][:, None, None] * x[t][:, :, None] * B[t][None, None, :]
        ys.append(torch.einsum("hpn,n->hp", h, C[t]))
    return torch.stack(ys), h


def ssd_chunked(x, dt, A, B, C, h0, Q, carry_decay=True):
    """Chunks of Q tokens: intra-chunk masked matmuls, one state hand-off per chunk."""
    h = h0.clone()
    ys = []
    for s in range(0, x.shape[0], Q):
        xc, dtc, Bc, Cc = x[s:s + Q], dt[s:s + Q], B[s:s + Q], C[s:s + Q]
        a = torch.cumsum(dtc * A, dim=0)  # (Q, H): log-decay from the chunk start, inclusive
        # intra-chunk: y_i += sum_{j<=i} exp(a_i - a_j) (C_i . B_j) dt_j x_j
        seg = a[:, None, :] - a[None, :, :]  # (Q, Q, H)
        mask = torch.tril(torch.ones(len(a), len(a), dtype=torch.bool))[:, :, None]
        L = torch.where(mask, torch.exp(seg), torch.zeros_like(seg))
        G = Cc @ Bc.T  # (Q, Q)
        y = torch.einsum("ijh,ij,jh,jhp->ihp", L, G, dtc, xc)
        # carried state: y_i += exp(a_i) * h C_i
        y = y + torch.exp(a)[:, :, None] * torch.einsum("hpn,in->ihp", h, Cc)
        # state at the chunk end: decay the carried state over the chunk, add the chunk's own contribution
        w = torch.exp(a[-1][None, :] - a) * dtc  # (Q, H)
        decay = torch.exp(a[-1])[:, None, None] if carry_decay else 1.0  # False: the bug the tests must catch
        h = decay * h + torch.einsum("jh,jhp,jn->hpn", w, xc, Bc)
        ys.append(y)
    return torch.cat(ys), h


# %% [markdown]
# ## The checks: same outputs and same final state, at several chunk sizes; chunked prefill resumes exactly

# %%
q_small = int(given("chunk_small", 8, unit="tokens", source="test chunk size (divides the 64-token test sequence)"))
q_big = int(given("chunk_big", 16, unit="tokens", source="test chunk size"))
y_ref, h_ref = scan_reference(x, dt, A, B, C, h0)
for q in (q_small, q_big):
    kernel_check(f"ssd_chunk{q}_outputs", lambda *a, q=q: ssd_chunked(*a, q)[0],
                 lambda *a: scan_reference(*a)[0], x, dt, A, B, C, h0, rtol=1e-10, atol=1e-10)
    kernel_check(f"ssd_chunk{q}_final_state", lambda *a, q=q: ssd_chunked(*a, q)[1],
                 lambda *a: scan_reference(*a)[1], x, dt, A, B, C, h0, rtol=1e-10, atol=1e-10)

# chunked prefill: the first 40 tokens in one scheduler step, the rest in the next, carrying only the state
split = int(given("prefill_split", 40, unit="tokens", source="test split point, not a multiple of the chunk"))
y1, h1 = ssd_chunked(x[:split], dt[:split], A, B[:split], C[:split], h0, q_small)
y2, h2 = ssd_chunked(x[split:], dt[split:], A, B[split:], C[split:], h1, q_small)
check(torch.allclose(torch.cat([y1, y2]), y_ref, rtol=1e-10, atol=1e-10) and torch.allclose(h2, h_ref),
      "two prefill steps that hand over the state equal one pass")
yb, hb = ssd_chunked(x, dt, A, B, C, h0, q_small, carry_decay=False)
broken_err = claim("broken_max_error", float((yb - y_ref).abs().max()))
check(broken_err > 1e-3, "the undecayed hand-off is caught")
ok_err = claim("chunked_max_error", float((ssd_chunked(x, dt, A, B, C, h0, q_small)[0] - y_ref).abs().max()))

# %% [markdown]
# ## Cost per token and head, Nemotron-H-8B's shape (head_dim 64, d_state 128, chunk 128)
# Recurrence: update (decay multiply PN, x B^T outer product PN, add PN) + output (2PN) = 5PN per token, as
# matrix-vector work, T dependent steps (the same 5 FLOP per state element as the decode step's kernel).
# Chunked, per token: C B^T row (2QN, computed once per B/C group and shared by its heads_per_group heads, as the
# SSD kernels' chunk bmm does per group) + masked mix into x (2QP) + chunk-state contribution (2PN) + carried-state
# output (2PN); the per-chunk state hand-off (decay and add, 2PN per chunk) is 2PN/Q per token.

# %%
p_ = fact("nemotron_h_8b.mamba_head_dim", "nh_head_dim")
n_ = fact("nemotron_h_8b.ssm_state_size", "nh_d_state")
q_ = fact("nemotron_h_8b.chunk_size", "nh_chunk")
ctx = fact("nemotron_h_8b.max_position_embeddings", "prompt")
heads = fact("nemotron_h_8b.mamba_num_heads", "nh_heads")
grp = fact("nemotron_h_8b.n_groups", "nh_groups")
hpg = claim("nh_heads_per_group", heads / grp, unit="heads")


def chunked_flops(q: float) -> float:
    return 2 * q * n_ / hpg + 2 * q * p_ + 4 * p_ * n_ + 2 * p_ * n_ / q


per_el = claim("flops_per_state_element", 5, unit="FLOP")
rec = claim("flops_recurrence", per_el * p_ * n_, unit="FLOP")
chunked = claim("flops_chunked", chunked_flops(q_), unit="FLOP")
overhead = claim("chunked_over_recurrence", chunked / rec, unit="x")
steps_rec = claim("serial_steps_recurrence", ctx, unit="steps")
steps_chunk = claim("serial_steps_chunked", ctx / q_, unit="steps")
q_alt = given("chunk_alt", 256, unit="tokens", source="Mamba-2's default chunk_size (mamba_ssm Mamba2 chunk_size=256)")
chunked_256 = claim("flops_chunked_256", chunked_flops(q_alt), unit="FLOP")
overhead_256 = claim("chunked_over_recurrence_256", chunked_256 / rec, unit="x")
print(f"recurrence {rec:.0f} FLOP/token/head; chunked Q=128 {chunked:.0f} ({overhead:.2f}x), Q=256 "
      f"{chunked_256:.0f} ({overhead_256:.2f}x); serial steps {steps_rec:.0f} -> {steps_chunk:.0f}")

# %% [markdown]
# ## Against the rest of the Mamba layer: in_proj and out_proj per token
# in_proj: hidden -> d_inner (z) + conv_dim (x, B, C) + heads (dt); out_proj: d_inner -> hidden.

# %%
hid = fact("nemotron_h_8b.hidden_size", "nh_hidden")
claim("cb_row_flops_ungrouped", 2 * q_ * n_, unit="FLOP")
d_in = heads * p_
proj = claim("flops_projections", 2 * hid * (d_in + (d_in + 2 * grp * n_) + heads) + 2 * d_in * hid, unit="FLOP")
scan_layer = claim("flops_scan_layer", heads * chunked, unit="FLOP")
scan_share = claim("scan_share_of_layer", scan_layer / (scan_layer + proj), unit="fraction")
