# %% [markdown]
# # Capacity factor at serving time: what a training-style cap would drop in a Mixtral decode batch
# Mixtral-8x7B's router (8 experts, top-2; config.json via the fact base). Capacity as Switch Transformer defines it
# (arXiv:2101.03961 §2.2): capacity = tokens_per_batch / num_experts * capacity_factor, counted here in
# (token, expert) assignments since each token makes top_k of them. Routing is taken as uniform first (the best case
# for a cap), then with one hot expert to show how fast drops grow with skew.

# %%
import math

import torch

from qbank.verify import check, claim, fact, given

E = fact("mixtral_8x7b.num_local_experts", "experts")
k = fact("mixtral_8x7b.num_experts_per_tok", "top_k")
batch = given(
    "batch_tokens", 64, unit="tokens", source="the question's hypothetical: 64 sequences decoding, 1 token each"
)
cf = given(
    "capacity_factor",
    1.25,
    source="the question's hypothetical: the training recipe's factor; capacity as defined in Switch Transformer "
    "arXiv:2101.03961 §2.2 (expert capacity = tokens per batch / experts x capacity factor)",
)
hot = given(
    "hot_expert_multiple",
    1.5,
    source="the question's hypothetical: one expert drawing 1.5x its even share, for sensitivity",
)

# %% [markdown]
# ## The cap and the expected overflow, exactly
# Each token picks 2 distinct experts; under uniform routing a given expert is among them with probability k/E,
# independently across tokens, so its load is Binomial(batch, k/E).

# %%
mean_load = claim("mean_assignments_per_expert", batch * k / E, unit="tokens")
cap = int(claim("capacity_per_expert", math.floor(cf * batch * k / E), unit="tokens"))


def overflow(p: float) -> tuple[float, float]:
    """Expected assignments over the cap and P(load > cap) for one expert chosen with probability p per token."""
    nb = int(batch)
    pmf = [math.comb(nb, j) * p**j * (1 - p) ** (nb - j) for j in range(nb + 1)]
    over = sum((j - cap) * pmf[j] for j in range(cap + 1, nb + 1))
    return over, sum(pmf[cap + 1 :])


over_u, p_over_u = overflow(k / E)
claim("p_expert_over_cap_uniform", p_over_u, unit="fraction")
drop_u = claim("dropped_share_uniform", E * over_u / (batch * k), unit="fraction")

# %% [markdown]
# ## Per step: how often does any token lose an expert? (simulated, seeded)

# %%
gen = torch.Generator().manual_seed(0)
trials = given("trials", 20000, source="Monte Carlo trials (seeded)")


def sim(weights: torch.Tensor) -> tuple[float, float]:
    """P(some assignment dropped in a step), P(a given token loses at least one expert)."""
    picks = torch.multinomial(weights.expand(int(trials) * int(batch), -1), int(k), replacement=False, generator=gen)
    picks = picks.view(int(trials), int(batch), int(k))
    onehot = torch.nn.functional.one_hot(picks, int(E)).sum(dim=2)  # trials x batch x E
    # tokens keep their slot in arrival order: the first `cap` assignments to an expert survive
    rank = onehot.cumsum(dim=1) * onehot
    dropped = (rank > cap).any(dim=2)
    return dropped.any(dim=1).float().mean().item(), dropped.float().mean().item()


p_step_u, p_tok_u = sim(torch.ones(int(E)))
claim("p_step_drops_uniform", p_step_u, unit="fraction")
claim("p_token_dropped_uniform", p_tok_u, unit="fraction")
skew_w = torch.ones(int(E))


def inclusion(w0: float) -> float:
    """P(expert 0 is among a token's k picks) when it has weight w0 and the others weight 1 (no replacement)."""
    others = E - 1
    first = w0 / (w0 + others)
    return first + (others / (w0 + others)) * (w0 / (w0 + others - 1)) if k == 2 else float("nan")


# expert 0 must draw `hot` times its even share of the *assignments* (k/E per token), not of the first pick:
# solve inclusion(w0) = hot * k / E by bisection
lo_w, hi_w = 1.0, 10.0
for _ in range(60):
    mid = (lo_w + hi_w) / 2
    lo_w, hi_w = (mid, hi_w) if inclusion(mid) < hot * k / E else (lo_w, mid)
skew_w[0] = lo_w
check(abs(inclusion(lo_w) / (k / E) - hot) < 1e-6, "expert 0's share of assignments is hot x the even share")
p_step_s, p_tok_s = sim(skew_w)
claim("p_step_drops_skewed", p_step_s, unit="fraction")
claim("p_token_dropped_skewed", p_tok_s, unit="fraction")
check(p_step_u > 0.5, "even with perfectly uniform routing, most steps drop something")
check(p_tok_s > p_tok_u, "skew raises each token's drop rate")
claim("skew_token_ratio", p_tok_s / p_tok_u, unit="x")

resp = given("response_tokens", 256, unit="tokens", source="the question's hypothetical: a 256-token reply")
exp_drop = claim("expected_dropped_tokens_per_reply", resp * p_tok_u, unit="tokens")
claim("p_reply_untouched", (1 - p_tok_u) ** resp, unit="fraction")
print(f"mean {mean_load}, cap {cap}, P(expert>cap) {p_over_u:.3f}, dropped share {drop_u:.4f}")
print(f"uniform: step {p_step_u:.3f} token {p_tok_u:.4f}; skewed: step {p_step_s:.3f} token {p_tok_s:.4f}")
