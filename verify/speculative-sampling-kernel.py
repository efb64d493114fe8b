# %% [markdown]
# # Speculative sampling: accept/reject, the residual, and a test that the output is the target's
# The accept/reject rule and the residual distribution are from Leviathan, Kalman & Matias (ICML 2023,
# arXiv:2211.17192, Algorithm 1 and Theorem 3.5's setup). Draft q and target p are fixed random
# distributions over a small vocabulary, so positions are i.i.d. and Eq. (1) holds exactly.

# %%
import torch

from qbank.verify import check, claim, given, kernel_check

torch.manual_seed(0)
vocab = int(given("vocab", 8, unit="tokens", source="toy vocabulary, small enough for a chi-square test"))
n_samples = int(given("n_samples", 200_000, unit="elements", source="sample count for the empirical test"))
false_alarm = given(
    "false_alarm_rate", 0.001, unit="fraction", source="chosen test level: a correct kernel fails 1 run in 1000"
)
gamma = int(given("gamma", 4, unit="tokens", source="draft length for the multi-token run"))
n_steps = int(given("n_steps", 50_000, unit="steps", source="verification steps for the accepted-length test"))

logits = torch.randn(vocab, dtype=torch.float64) * 1.5
p = torch.softmax(logits, dim=0)  # target
q = torch.softmax(logits + 0.7 * torch.randn(vocab, dtype=torch.float64), dim=0)  # draft: a noisy copy


# %% [markdown]
# ## The kernel
# Batched over rows: each row has a drafted token `x ~ q`, a uniform `u` for the accept test and a
# uniform `v` for the residual draw (inverse CDF), so the kernel is deterministic given its inputs.


# %%
def speculative_step(
    p: torch.Tensor, q: torch.Tensor, x: torch.Tensor, u: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """Return the emitted token per row: x if accepted, else a draw from norm(max(0, p - q))."""
    px, qx = p[x], q[x]
    accept = u * qx < px  # u < p/q without dividing by a zero q
    resid = torch.clamp(p - q, min=0)
    resid = resid / resid.sum()
    cdf = torch.cumsum(resid, 0)
    r = torch.searchsorted(cdf, (v * cdf[-1]).unsqueeze(-1)).squeeze(-1).clamp(max=p.numel() - 1)
    return torch.where(accept, x, r)


def reference_step(p: torch.Tensor, q: torch.Tensor, x: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Row-by-row Python version of the same rule, written for clarity."""
    out = []
    resid = [max(0.0, float(a) - float(b)) for a, b in zip(p, q, strict=False)]
    total = sum(resid)
    for xi, ui, vi in zip(x.tolist(), u.tolist(), v.tolist(), strict=False):
        if ui < float(p[xi]) / float(q[xi]):
            out.append(xi)
            continue
        acc, pick = 0.0, len(resid) - 1
        for tok, r in enumerate(resid):
            acc += r / total
            if vi <= acc:
                pick = tok
                break
        out.append(pick)
    return torch.tensor(out)


x = torch.multinomial(q, 4096, replacement=True)
u, v = torch.rand(4096, dtype=torch.float64), torch.rand(4096, dtype=torch.float64)
kernel_check("speculative_step_vs_rowwise", speculative_step, reference_step, p, q, x, u, v)

# %% [markdown]
# ## Exact algebra: P(emit y) = q(y) min(1, p/q) + (1 - alpha) r(y) = p(y)

# %%
alpha_formula = claim("alpha_formula", float(torch.minimum(p, q).sum()), unit="fraction")
tv = claim("tv_distance", 0.5 * float((p - q).abs().sum()), unit="fraction")
check(abs(alpha_formula - (1 - tv)) < 1e-12, "sum of min(p, q) equals 1 - TV(p, q)")
resid = torch.clamp(p - q, min=0)
emit = q * torch.minimum(torch.ones_like(p), p / q) + (1 - alpha_formula) * resid / resid.sum()
check(torch.allclose(emit, p, atol=1e-15), "analytic output distribution equals p")
check(abs(float(p.sum()) - 1) < 1e-12, "p is a distribution")
prob_total = claim("prob_total", float(emit.sum()), unit="fraction")
check(float(resid.min()) == 0.0, "the residual max(0, p - q) is 0 wherever q covers p")

# %% [markdown]
# ## Empirical test: chi-square goodness of fit at a stated false-alarm rate
# Critical value by the Wilson–Hilferty approximation (Wilson & Hilferty 1931):
# chi2_{k,1-a} ~= k (1 - 2/(9k) + z_{1-a} sqrt(2/(9k)))^3, with z from torch.special.ndtri.

# %%
dof = claim("dof", vocab - 1, unit="dims")
z = float(torch.special.ndtri(torch.tensor(1 - false_alarm, dtype=torch.float64)))
crit = claim("chi2_critical", dof * (1 - 2 / (9 * dof) + z * (2 / (9 * dof)) ** 0.5) ** 3)
table = given(
    "chi2_critical_table",
    24.322,
    source="chi-square table, 7 d.o.f., upper 0.001 point (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4)",
)
wh_tol = given("wh_tolerance", 0.01, unit="fraction", source="acceptance band for the approximation against the table")
check(abs(crit - table) / table < wh_tol, "Wilson-Hilferty within 1% of the tabulated critical value")

xs = torch.multinomial(q, n_samples, replacement=True)
us, vs = torch.rand(n_samples, dtype=torch.float64), torch.rand(n_samples, dtype=torch.float64)
ys = speculative_step(p, q, xs, us, vs)
counts = torch.bincount(ys, minlength=vocab).double()
stat = claim("chi2_stat", float(((counts - n_samples * p) ** 2 / (n_samples * p)).sum()))
check(stat < crit, "kernel output passes the goodness-of-fit test against p")

accepted = (us * q[xs] < p[xs]).double()
alpha_measured = claim("alpha_measured", float(accepted.mean()), unit="fraction")
band = given(
    "sigma_band",
    4,
    source="tolerance in standard errors of a binomial proportion; 4 sigma keeps false alarms below 1e-4",
)
sigma = (alpha_formula * (1 - alpha_formula) / n_samples) ** 0.5
check(abs(alpha_measured - alpha_formula) < band * sigma, "measured acceptance within 4 sigma of sum min(p, q)")


# %% [markdown]
# ## The test has power: resampling from p on rejection (a common bug) fails it


# %%
def buggy_step(p: torch.Tensor, q: torch.Tensor, x: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Wrong: on rejection, draw from p instead of the residual."""
    cdf = torch.cumsum(p, 0)
    r = torch.searchsorted(cdf, (v * cdf[-1]).unsqueeze(-1)).squeeze(-1).clamp(max=p.numel() - 1)
    return torch.where(u * q[x] < p[x], x, r)


bc = torch.bincount(buggy_step(p, q, xs, us, vs), minlength=vocab).double()
bug_stat = claim("chi2_stat_buggy", float(((bc - n_samples * p) ** 2 / (n_samples * p)).sum()))
check(bug_stat > crit, "the buggy residual is rejected by the same test")
bug_ratio = claim("bug_over_critical", bug_stat / crit, unit="x")

# %% [markdown]
# ## Accepted length per verification step against Leviathan Eq. (1)
# Each step drafts gamma tokens and stops at the first rejection (which still emits one token); if all
# gamma are accepted the target's extra position emits a bonus token: E[tokens] = (1 - a^(g+1))/(1 - a).

# %%
u_steps = torch.rand(n_steps, gamma, dtype=torch.float64)
x_steps = torch.multinomial(q, n_steps * gamma, replacement=True).view(n_steps, gamma)
acc = u_steps * q[x_steps] < p[x_steps]
run = torch.cumprod(acc.long(), dim=1).sum(1)  # accepted prefix length
tokens_measured = claim("tokens_per_step_measured", float((run + 1).double().mean()), unit="tokens")
a = alpha_formula
tokens_formula = claim("tokens_per_step_formula", (1 - a ** (gamma + 1)) / (1 - a), unit="tokens")
check(abs(tokens_measured - tokens_formula) < 0.02, "measured tokens per step within 0.02 of Eq. (1)")
print(
    f"alpha={alpha_formula:.4f} measured={alpha_measured:.4f} chi2={stat:.2f} crit={crit:.2f} bug={bug_stat:.0f} "
    f"tokens {tokens_measured:.3f} vs {tokens_formula:.3f}"
)
