# %% [markdown]
# # Batched top-k and top-p with per-row parameters, against a per-row reference
# Semantics follow the common engine convention (vLLM's TopKTopPSampler, HF's TopPLogitsWarper): top-k keeps
# exactly k tokens (ties broken by sort order); top-p keeps the smallest prefix of the sorted distribution
# whose mass reaches p (always at least one token); when both are set, top-k runs first and top-p
# is applied to the renormalized survivors.

# %%
import time

import torch

from qbank.verify import check, claim, fact, given, kernel_check, timing

torch.manual_seed(0)
B = int(given("batch_rows", 64, unit="requests", source="test batch"))
V = int(given("vocab", 1000, unit="tokens", source="test vocabulary (small for a Python reference)"))
logits = torch.randn(B, V) * 3
k = torch.randint(1, 50, (B,))
greedy_k = int(given("greedy_k", 1, source="edge row: k = 1 is greedy decoding"))
p_off = given("p_off", 1.0, unit="fraction", source="edge row: p = 1 disables top-p by convention")
k[0], k[1] = greedy_k, V  # edges: greedy row and a no-op row
p = torch.rand(B) * 0.98 + 0.01
p[2], p[3] = p_off, 1e-6  # edges: keep all, keep only the argmax


def top_k_mask(logits: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Batched top-k: -inf outside each row's k largest logits."""
    sorted_idx = logits.argsort(dim=-1, descending=True, stable=True)
    keep_sorted = torch.arange(logits.shape[-1], device=logits.device) < k.unsqueeze(-1)
    keep = torch.zeros_like(keep_sorted).scatter(-1, sorted_idx, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_mask(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Batched top-p: keep tokens while the mass *before* them is below p (so the first always stays)."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, sorted_idx = probs.sort(dim=-1, descending=True, stable=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = (mass_before < p.unsqueeze(-1)) | (p.unsqueeze(-1) >= 1)  # fp32 cumsum can hit 1 early
    keep = torch.zeros_like(keep_sorted).scatter(-1, sorted_idx, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_k_top_p(logits: torch.Tensor, k: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return top_p_mask(top_k_mask(logits, k), p)


def reference(
    logits: torch.Tensor, k: torch.Tensor, p: torch.Tensor, use_k: bool = True, use_p: bool = True
) -> torch.Tensor:
    """Row by row, in float64 accumulation, with Python control flow."""
    out = torch.full_like(logits, float("-inf"))
    for b in range(logits.shape[0]):
        row = logits[b]
        vals = row.tolist()
        order = sorted(range(len(vals)), key=lambda i: (-vals[i], i))
        cand = order[: int(k[b])] if use_k else order
        if use_p:
            sub = torch.softmax(row[cand], dim=-1).double().tolist()
            pb = float(p[b])
            kept, mass = [], 0.0
            for j, i in enumerate(cand):
                if mass >= pb and pb < 1:  # p = 1 means "off", whatever the rounding
                    break
                kept.append(i)
                mass += sub[j]
            cand = kept
        out[b, cand] = row[cand]
    return out


kernel_check("top_k_vs_rowwise", top_k_mask, lambda lg, kk: reference(lg, kk, p, True, False), logits, k)
kernel_check("top_p_vs_rowwise", top_p_mask, lambda lg, pp: reference(lg, k, pp, False, True), logits, p)
kernel_check("top_k_then_top_p_vs_rowwise", top_k_top_p, reference, logits, k, p)

# %% [markdown]
# ## Edge rows and the sampler on top

# %%
masked = top_k_top_p(logits, k, p)
kept = torch.isfinite(masked).sum(-1)
check(int(kept[0]) == 1, "k = 1 is greedy")
check(int(torch.isfinite(top_p_mask(logits, p))[3].sum()) == 1, "tiny p keeps only the argmax")
check(int(torch.isfinite(top_p_mask(logits, p))[2].sum()) == V, "p = 1 keeps the whole vocabulary")
check(bool((kept >= 1).all()), "no row is ever left empty")


def sample(masked: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Exponential-race sampling: argmax(probs / E), E ~ Exp(1); no sort, no cumsum, one pass."""
    probs = torch.softmax(masked, dim=-1)
    e = torch.empty_like(probs).exponential_(generator=gen)
    return (probs / e).argmax(-1)


gen = torch.Generator().manual_seed(1)
draws = sample(masked.repeat(50, 1), gen).view(50, -1)  # 50 draws per row, one batched call
inside = torch.isfinite(masked.gather(-1, draws.T))
check(bool(inside.all()), "every sampled token is inside its row's kept set")
probs0 = torch.softmax(logits, -1).sort(-1, descending=True).values
mass_before_top = claim("mass_before_argmax", float((probs0.cumsum(-1) - probs0)[:, 0].abs().max()), unit="fraction")
check(mass_before_top == 0.0, "the mass before the most likely token is exactly zero")
small_batch = given("small_batch", 1, unit="requests", source="latency-bound end of the batch range")
mean_kept = claim("mean_kept_tokens", float(kept.double().mean()), unit="tokens")

# %% [markdown]
# ## Cost at a real vocabulary: the sort is the expensive part
# A full sort per row over Llama-3.1's vocabulary; the script records the CPU time (not asserted).

# %%
big_v = int(fact("llama3_1_8b.vocab_size", "llama_vocab"))
rows = int(given("timing_rows", 8, unit="requests", source="rows in the timing run"))
big = torch.randn(rows, big_v)
t0 = time.perf_counter()
top_k_top_p(big, torch.full((rows,), 50), torch.full((rows,), 0.9))
timing("top_k_top_p_8_rows_llama_vocab", time.perf_counter() - t0)
print(float(mean_kept))
