# %% [markdown]
# # Batched top-k then top-p as one Triton kernel, per-row k and p, with vLLM's tie semantics
# Semantics are vLLM's `apply_top_k_top_p` (vllm/v1/sample/ops/topk_topp_sampler.py), which Hugging Face's
# `TopKLogitsWarper`/`TopPLogitsWarper` share:
# - top-k keeps every logit >= the k-th largest (`logits_sort < kth_value` is masked): ties AT the threshold
#   are kept, so a row can keep more than k tokens; k equal to the vocabulary keeps everything;
# - top-p runs on the softmax of the top-k survivors, sorted ascending, and drops a token when the cumulative
#   mass up to and including it is <= 1 - p (`probs_sum <= 1 - p`), always keeping the most likely token.
#   A sort orders tied tokens arbitrarily, so vLLM can split a tie group at the top-p boundary; this kernel
#   counts the whole tie group into "up to and including" (the mass of every token with probability <= its
#   own), which keeps ties at the top-p threshold too and makes the result independent of any sort order.
# Both thresholds are found without sorting: 32 bisection steps over the order-preserving int32 image of the
# float32 values, each step one pass over the row.

# %%
import torch
import triton
import triton.language as tl

from qbank.verify import check, claim, device, fact, given, triton_check

torch.manual_seed(0)


# where launch() runs outside triton_check: compiled on a real GPU, else through the interpreter on the CPU
on = "cuda" if device() == "cuda" and torch.cuda.is_available() else "cpu"


def on_device(fn, *args, **kw):
    """Call fn with its tensor arguments on `on`; tensor results come back to the CPU."""
    res = fn(*[a.to(on) if isinstance(a, torch.Tensor) else a for a in args], **kw)
    return tuple(r.cpu() for r in res) if isinstance(res, tuple) else res.cpu()


steps = int(given("bisection_steps", 32, unit="steps", source="int32 keys: 2^32 candidates, halved by each step"))


@triton.jit
def float_key(x):
    """float32 -> int64 with the same order (-0.0 folded into +0.0 first), so thresholds bisect exactly."""
    bits = (x + 0.0).to(tl.int32, bitcast=True)
    return tl.where(bits >= 0, bits, bits ^ 0x7FFFFFFF).to(tl.int64)


@triton.jit
def top_k_top_p_kernel(
    logits_ptr, k_ptr, p_ptr, out_ptr, B, V,
    ROWS: tl.constexpr, BLOCK_V: tl.constexpr, STEPS: tl.constexpr, BUG: tl.constexpr,
):  # fmt: skip
    """ROWS rows per program, each with its own k and p. BUG 1: top-p over the full softmax, not the top-k
    survivors; BUG 2: exactly k tokens by index order (ties dropped), the semantics no engine uses."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_V)
    valid = (rows < B)[:, None] & (cols < V)[None, :]
    offs = rows[:, None] * V + cols[None, :]
    x = tl.load(logits_ptr + offs, mask=valid, other=float("-inf"))
    key = tl.where(valid, float_key(x), -(2**40))  # padding sorts below every float, -inf included
    k = tl.load(k_ptr + rows, mask=rows < B, other=1).to(tl.int64)
    p = tl.load(p_ptr + rows, mask=rows < B, other=1.0)

    # top-k: the largest K with #{key >= K} >= k is the k-th largest value; k >= V leaves K at the bottom
    lo = tl.full([ROWS], -(2**31), tl.int64)
    hi = tl.full([ROWS], 2**31 - 1, tl.int64)
    for _ in range(STEPS):
        mid = lo + (hi - lo + 1) // 2
        enough = tl.sum((key >= mid[:, None]).to(tl.int64), axis=1) >= k
        lo = tl.where(enough, mid, lo)
        hi = tl.where(enough, hi, mid - 1)
    keep_k = valid & (key >= lo[:, None])
    if BUG == 2:  # the k-th value's ties admitted in index order until exactly k are kept
        at = valid & (key == lo[:, None])
        room = k - tl.sum((valid & (key > lo[:, None])).to(tl.int64), axis=1)
        keep_k = valid & ((key > lo[:, None]) | (at & (tl.cumsum(at.to(tl.int64), axis=1) <= room[:, None])))

    # softmax over the survivors (BUG 1: over the whole row)
    live = keep_k
    if BUG == 1:
        live = valid
    m = tl.max(tl.where(live, x, float("-inf")), axis=1)
    e = tl.where(live, tl.exp(x - m[:, None]), 0.0)
    prob = e / tl.sum(e, axis=1)[:, None]

    # top-p: a token goes when the probability mass at or below it is <= 1 - p; bisect for the lowest key at
    # which that cumulative mass passes 1 - p (it only increases with the key)
    floor = 1.0 - p
    lo = tl.full([ROWS], -(2**31), tl.int64)
    hi = tl.full([ROWS], 2**31 - 1, tl.int64)
    for _ in range(STEPS):
        mid = lo + (hi - lo) // 2
        above = tl.sum(tl.where(key <= mid[:, None], prob, 0.0), axis=1) > floor
        hi = tl.where(above, mid, hi)
        lo = tl.where(above, lo, mid + 1)
    keep = keep_k & (key >= hi[:, None])
    tl.store(out_ptr + offs, tl.where(keep, x, float("-inf")), mask=valid)


def launch(logits, k, p, bug=0):
    """A program holds ROWS rows of a next_pow2(V)-wide tile: many rows for a small vocabulary, one for a
    real one (spread over 16 warps on a GPU)."""
    b, v = logits.shape
    out = torch.empty_like(logits)
    block_v = triton.next_power_of_2(v)
    rows = max(1, min(16, 16384 // block_v))
    warps = 4 if rows * block_v <= 4096 else 16
    grid = (triton.cdiv(b, rows),)
    top_k_top_p_kernel[grid](
        logits, k, p, out, b, v, ROWS=rows, BLOCK_V=block_v, STEPS=steps, BUG=bug, num_warps=warps
    )
    return out


def reference(logits, k, p):
    """Row by row in PyTorch: top-k by the k-th value (ties kept), then vLLM's ascending-cumsum top-p with
    each tie group's mass counted whole (float32 softmax like the engine, sums in float64)."""
    out = torch.full_like(logits, float("-inf"))
    v = logits.shape[1]
    for r in range(logits.shape[0]):
        row = logits[r]
        kth = torch.topk(row, min(int(k[r]), v)).values[-1]
        keep_k = row >= kth
        prob = torch.softmax(row.masked_fill(~keep_k, float("-inf")), dim=-1)
        order = torch.argsort(row)  # ascending, as vLLM sorts
        cum = prob[order].double().cumsum(0)
        upto = cum[torch.searchsorted(row[order], row, right=True) - 1]  # mass of tokens <= own, ties whole
        floor = float(torch.ones((), dtype=p.dtype) - p[r])  # 1 - p in the engine's float32
        keep = keep_k & (upto > floor)
        out[r] = row.masked_fill(~keep, float("-inf"))
    return out


# %% [markdown]
# ## The kernel against the reference, with the edge rows
# Rows 0-7 are edges: k = 1; k = V and k > V with p = 1 (the row passes untouched); p = 1 alone (top-k only);
# a tiny p (only the argmax); a row of equal logits with k = 3 (ties: every token stays); a tie straddling
# the k-th value (k + 1 stay); k = V alone (top-p only).

# %%
rows = int(given("batch_rows", 32, unit="requests", source="test batch (small: the interpreter runs it in CI)"))
vocab = int(given("vocab", 1000, unit="tokens", source="test vocabulary (the kernel's tile is next_pow2(vocab))"))
tie_k = int(given("tie_k", 3, source="k of the all-equal row: ties keep the whole row whatever k is"))
tiny_p = given("tiny_p", 1e-6, source="edge row: a p below any token's mass keeps only the argmax")
p_off = given("p_off", 1.0, source="p = 1 means no top-p filtering (vLLM, HF)")
greedy_k = int(given("greedy_k", 1, source="edge row: k = 1 is greedy"))


def batch(b, v):
    logits = torch.randn(b, v) * 3
    k = torch.randint(1, 60, (b,), dtype=torch.int32)
    p = (torch.rand(b) * 0.98 + 0.01).float()
    return logits, k, p


logits, k, p = batch(rows, vocab)
k[0] = greedy_k
k[1], k[2] = vocab, vocab + 5
p[1], p[2] = p_off, p_off
p[3] = p_off
p[4] = tiny_p
logits[5] = 0.5
k[5] = tie_k
straddle_k = int(given("straddle_k", 4, source="edge row: k whose k-th and (k+1)-th logits are made equal"))
top = logits[6].topk(10).indices
logits[6, top[straddle_k]] = logits[6, top[straddle_k - 1]]  # the k-th and (k+1)-th largest tie
k[6] = straddle_k
p[6] = p_off
k[7] = vocab

triton_check("top_k_top_p_vs_reference", launch, reference, logits, k, p, bytes_moved=2 * logits.numel() * 4 + rows * 8)
out = on_device(launch, logits, k, p)
kept = torch.isfinite(out).sum(-1)
check(int(kept[0]) == 1 and int(out[0].argmax()) == int(logits[0].argmax()), "k = 1 keeps the argmax alone")
check(bool(torch.equal(out[1:3], logits[1:3])), "k = V or k > V with p = 1: the rows pass untouched")
check(int(kept[4]) == 1, "a tiny p keeps only the argmax")
check(int(kept[5]) == vocab, "equal logits: ties at the k-th value keep the whole row, whatever k is")
check(int(kept[6]) == 5, "a tie at the k-th value keeps k + 1 tokens")
check(int(kept[7]) < vocab, "k = V leaves top-p to filter alone")
check(bool((kept >= 1).all()), "no row is ever left empty")
mean_kept = claim("mean_kept_tokens", float(kept[8:].double().mean()), unit="tokens")
tie_kept = claim("tie_row_kept", int(kept[6]), unit="tokens")

# %% [markdown]
# ## p = 1 keeps every token with non-zero probability, where the "mass before < p" rule does not
# The descending form keeps a token while the mass above it is below p. In float32 that mass reaches 1.0
# before the tail ends, so at p = 1 it drops tokens that asked for no filtering; vLLM's ascending form tests
# the mass at or below against 1 - p = 0 and keeps every token whose probability did not underflow to zero.

# %%
row3 = torch.softmax(logits[3], -1)
sorted_desc = row3.sort(descending=True).values
mass_before = torch.cumsum(sorted_desc, 0) - sorted_desc
dropped_desc = claim("dropped_by_mass_before_at_p1", int((mass_before >= 1.0).sum()), unit="tokens")
check(dropped_desc > 0, "the descending float32 rule drops tokens at p = 1 on this row")
kth3 = logits[3].topk(int(k[3])).values[-1]
check(int(kept[3]) == int((logits[3] >= kth3).sum()), "p = 1: the kernel keeps exactly what top-k kept")

# %% [markdown]
# ## Broken kernels fail the same check
# Top-p on the full softmax instead of the renormalised top-k survivors, and exactly-k with ties dropped.

# %%
triton_check("bug_top_p_before_renormalising", lambda *a: launch(*a, bug=1), reference, logits, k, p, expect_mismatch=True)
bug1_diff = claim("bug_full_softmax_differing", int((on_device(launch, logits, k, p, bug=1) != reference(logits, k, p)).sum()), unit="elements")
triton_check("bug_exactly_k_drops_ties", lambda *a: launch(*a, bug=2), reference, logits, k, p, expect_mismatch=True)

# %% [markdown]
# ## At a real vocabulary
# The same kernel at Llama-3.1's vocabulary: one 131,072-wide tile per row, 64 passes over it for the two
# bisections. Through the interpreter the check runs 2 rows; compiled on a GPU it runs 64 rows and is timed
# against the reference, and the bytes it must move (read the logits, write the filtered row) set the bound.

# %%
llama_vocab = int(fact("llama3_1_8b.vocab_size", "llama_vocab"))
gpu_rows = int(given("gpu_rows", 64, unit="requests", source="rows of the compiled, timed run (a decode batch)"))
cpu_rows = int(given("cpu_rows", 2, unit="requests", source="rows of the interpreter run (CI time)"))
big_rows = gpu_rows if device() == "cuda" else cpu_rows
big = batch(big_rows, llama_vocab)
big_bytes = 2 * big_rows * llama_vocab * 4 + big_rows * 8
triton_check("top_k_top_p_llama_vocab", launch, reference, *big, bytes_moved=big_bytes)
gpu_bytes = claim("gpu_run_bytes", 2 * gpu_rows * llama_vocab * 4 + gpu_rows * 8, unit="B")
passes = claim("passes_per_row", 2 * steps)
tile = claim("tile_width", triton.next_power_of_2(llama_vocab), unit="elements")
