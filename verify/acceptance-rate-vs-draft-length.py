# %% [markdown]
# # Acceptance rate against draft length
# Eq. (1) of Leviathan, Kalman & Matias, ICML 2023 (arXiv:2211.17192): with i.i.d. acceptance a and draft
# length g, E[tokens per verification step] = (1 - a^(g+1)) / (1 - a). Below: the table, the marginal token,
# the ceiling, a depth-decaying acceptance that breaks the i.i.d. assumption, and inverting Eq. (1).

# %%
from qbank.verify import check, claim, given

SRC = "Leviathan et al. 2023, arXiv:2211.17192 Eq. (1)"


def expected(a: float, g: int) -> float:
    return (1 - a ** (g + 1)) / (1 - a)


alphas = {
    "a07": given("alpha_07", 0.7, unit="fraction", source="example acceptance rate"),
    "a08": given("alpha_08", 0.8, unit="fraction", source="example acceptance rate"),
    "a09": given("alpha_09", 0.9, unit="fraction", source="example acceptance rate"),
}
gamma0 = int(given("gamma_0", 0, unit="tokens", source="no draft: plain decoding"))
check(expected(0.8, gamma0) == 1, "without a draft a step yields exactly 1 token")
gammas = [int(given(f"gamma_{g}", g, unit="tokens", source="example draft length")) for g in (2, 4, 8)]
for k, a in alphas.items():
    for g in gammas:
        claim(f"tokens_{k}_g{g}", expected(a, g), unit="tokens")
    claim(f"ceiling_{k}", 1 / (1 - a), unit="tokens")
    # the 8th draft token adds a^8 expected tokens
    check(abs(expected(a, 8) - expected(a, 7) - a**8) < 1e-12, f"the 8th draft token adds a^8 at {k}")
for k in ("a07", "a09"):
    claim(f"marginal_{k}_g8", alphas[k] ** 8, unit="tokens")
claim("share_of_ceiling_a07_g4", expected(alphas["a07"], 4) * (1 - alphas["a07"]), unit="fraction")
for a in (0.5, 0.7, 0.95):
    for g in range(1, 20):
        s = sum(a**i for i in range(g + 1))
        check(abs(s - expected(a, g)) < 1e-12, f"Eq. (1) equals sum of P(at least i tokens) (a={a}, g={g})")

# %% [markdown]
# ## Acceptance that decays with depth (the draft conditions on its own guesses)
# a_i = a1 * decay^(i-1); E = 1 + sum_i prod_{j<=i} a_j. Compare with Eq. (1) at the first-position and mean rates.

# %%
a1 = given("alpha_first", 0.9, unit="fraction", source="assumed first-position acceptance")
decay = given("decay", 0.9, unit="fraction", source="assumed per-position decay factor")
g = 8
accs = [a1 * decay**i for i in range(g)]
e_decay = 1.0
run = 1.0
for a in accs:
    run *= a
    e_decay += run
e_decay = claim("tokens_decay_g8", e_decay, unit="tokens")
mean_a = claim("mean_alpha_decay", sum(accs) / g, unit="fraction")
e_naive = claim("tokens_eq1_at_mean_g8", expected(mean_a, g), unit="tokens")
e_first = claim("tokens_eq1_at_first_g8", expected(a1, g), unit="tokens")
check(
    e_naive < e_decay < e_first, "Eq. (1) at the first-position rate overestimates; at the mean rate it underestimates"
)
alpha_eff = claim(
    "alpha_effective_g8", next(x / 10000 for x in range(10000) if expected(x / 10000, g) >= e_decay), unit="fraction"
)
check(accs[-1] < mean_a, "the deepest position accepts less often than the mean: it should weigh less")

# %% [markdown]
# ## Inverting Eq. (1): acceptance from a measured mean of tokens per step

# %%
measured = given("measured_tokens_g4", 3.2, unit="tokens", source="example dashboard reading at g = 4")
lo, hi = 0.0, 0.999999
for _ in range(100):
    mid = (lo + hi) / 2
    lo, hi = (mid, hi) if expected(mid, 4) < measured else (lo, mid)
alpha_hat = claim("alpha_hat_g4", lo, unit="fraction")
check(abs(expected(alpha_hat, 4) - measured) < 1e-9, "bisection inverts Eq. (1)")
print({k: [round(expected(a, g), 2) for g in gammas] for k, a in alphas.items()}, e_decay, mean_a, e_naive, alpha_hat)
