# %% [markdown]
# # Expected speedup of speculative decoding, its losslessness, and where it stops paying
# Formulas: Leviathan, Kalman & Matias, "Fast Inference from Transformers via Speculative Decoding",
# ICML 2023, arXiv:2211.17192 — Eq. (1) expected tokens per step, Theorem 3.8 walltime improvement,
# Corollary 3.9 (a gain exists iff alpha > c), Theorem 3.5 / Corollary 3.6 (alpha = sum min(p, q)).
# Assumptions of the paper: acceptances i.i.d. with rate alpha; a target step costs the same for 1 or
# gamma+1 tokens (memory-bound decode); c = time(draft step) / time(target step).

# %%
import torch

from qbank.verify import check, claim, given

SRC = "Leviathan et al. 2023 (arXiv:2211.17192)"


def tokens_per_step(a: float, g: int) -> float:
    """Eq. (1): E[# tokens per verification step] = (1 - a^(g+1)) / (1 - a)."""
    return (1 - a ** (g + 1)) / (1 - a)


def speedup(a: float, g: int, c: float) -> float:
    """Theorem 3.8: (1 - a^(g+1)) / ((1 - a)(g c + 1))."""
    return tokens_per_step(a, g) / (g * c + 1)


c_small = given("c_small", 0.05, unit="fraction", source=f"{SRC} §3.5/§4: observed draft/target cost ratios c < 0.05")
c_big = given(
    "c_big",
    0.2,
    unit="fraction",
    source="assumed: a draft a fifth as costly as the target (e.g. a mid-size draft on the same GPU)",
)
alphas = {
    "a06": given("alpha_low", 0.6, unit="fraction", source="example acceptance rate"),
    "a08": given("alpha_mid", 0.8, unit="fraction", source="example acceptance rate"),
    "a09": given("alpha_high", 0.9, unit="fraction", source="example acceptance rate"),
}
gammas = [int(given(f"gamma_{g}", g, unit="tokens", source="example draft length")) for g in (1, 3, 5, 8)]

# %% [markdown]
# ## Tables: tokens per step and speedup at c = 0.05

# %%
for key, a in alphas.items():
    for g in gammas:
        check(tokens_per_step(a, g) < 1 / (1 - a), f"tokens per step stay under the ceiling at {key}, gamma={g}")
        claim(f"speedup_{key}_g{g}", speedup(a, g, c_small), unit="x")
    claim(f"ceiling_{key}", 1 / (1 - a), unit="tokens")  # gamma -> infinity

# %% [markdown]
# ## Optimal gamma (integer search) at both cost ratios

# %%
for key, a in alphas.items():
    for cname, c in (("c005", c_small), ("c02", c_big)):
        best = max(range(1, 41), key=lambda g: speedup(a, g, c))
        claim(f"gamma_opt_{key}_{cname}", best, unit="tokens")
        claim(f"speedup_opt_{key}_{cname}", speedup(a, best, c), unit="x")

# %% [markdown]
# ## Corollary 3.9: gamma = 1 gives (1 + a)/(1 + c), so any a > c helps; a <= c never does

# %%
for a in (0.1, 0.5, 0.9):
    for c in (0.05, 0.3):
        check(abs(speedup(a, 1, c) - (1 + a) / (1 + c)) < 1e-12, f"gamma=1 speedup is (1+a)/(1+c) at a={a}, c={c}")
        gains = max(speedup(a, g, c) for g in range(1, 60)) > 1
        check(gains == (a > c), f"a gain exists iff a > c (a={a}, c={c})")
removed = min(
    (
        speedup(a, max(range(1, 41), key=lambda g: speedup(a, g, c_small)), c_small)
        - speedup(a, max(range(1, 41), key=lambda g: speedup(a, g, c_big)), c_big)
    )
    / (speedup(a, max(range(1, 41), key=lambda g: speedup(a, g, c_small)), c_small) - 1)
    for a in alphas.values()
)
gain_removed = claim("gain_removed_min", removed, unit="fraction")
c_ratio = claim("c_ratio", c_big / c_small, unit="x")
one_token = claim("speedup_gamma0", speedup(0.8, 0, 0.05), unit="x")
check(one_token == 1.0, "gamma = 0 is plain decoding")
breakeven_alpha = claim("breakeven_alpha_c02", c_big, unit="fraction")


def speedup_compute_bound(a: float, g: int, c: float) -> float:
    """Theorem 3.8 with the target step rescaled: a compute-bound pass over g + 1 tokens costs g + 1 steps."""
    return tokens_per_step(a, g) / ((g + 1) + g * c)


check(
    all(speedup_compute_bound(a, g, c) < 1 for a in alphas.values() for g in gammas for c in (c_small, c_big)),
    "once the target pass is compute-bound, speculation lowers throughput at every alpha, gamma and c",
)
g_best_a08 = max(range(1, 41), key=lambda g: speedup(alphas["a08"], g, c_small))
claim("speedup_compute_bound_a08", speedup_compute_bound(alphas["a08"], g_best_a08, c_small), unit="x")

# %% [markdown]
# ## Losslessness, exact: P(emit y) = min(p, q)(y) + (1 - alpha) r(y) = p(y) for random p, q

# %%
torch.manual_seed(0)
worst = 0.0
for _ in range(100):
    p = torch.softmax(torch.randn(50, dtype=torch.float64) * 2, 0)
    q = torch.softmax(torch.randn(50, dtype=torch.float64) * 2, 0)
    alpha = torch.minimum(p, q).sum()
    resid = torch.clamp(p - q, min=0)
    check(abs(float(resid.sum()) - (1 - float(alpha))) < 1e-12, "residual mass equals rejection probability")
    emit = torch.minimum(p, q) + (1 - alpha) * resid / resid.sum()
    worst = max(worst, float((emit - p).abs().max()))
max_err = claim("max_abs_error_emit_vs_p", worst, unit="fraction")
check(worst < 1e-14, "emitted distribution equals p to float64 rounding")
print({k: round(speedup(a, g, c_small), 3) for k, a in alphas.items() for g in gammas})
