# %% [markdown]
# # Medusa heads against EAGLE heads
# Reported numbers: EAGLE-3 paper (Li et al., arXiv:2503.01840) Table 1, Vicuna-13B, MT-bench, temperature 0:
# average acceptance length tau and speedup for Medusa, EAGLE-1, EAGLE-2, EAGLE-3. The toy below isolates the
# structural difference: a Medusa head for position t+2 does not see the token sampled at t+1; an EAGLE-style
# autoregressive draft does.

# %%
import torch

from qbank.verify import check, claim, fact, given

T1 = "arXiv:2503.01840 Table 1 (Vicuna-13B, MT-bench, T=0)"
rows = {
    "medusa": (
        fact("reported_acceptance_lengths.medusa_vicuna13b_mtbench_tau", "tau_medusa"),
        given("speedup_medusa", 2.07, unit="x", source=T1),
    ),
    "eagle1": (
        fact("reported_acceptance_lengths.eagle1_vicuna13b_mtbench_tau", "tau_eagle1"),
        given("speedup_eagle1", 3.07, unit="x", source=T1),
    ),
    "eagle2": (
        fact("reported_acceptance_lengths.eagle2_vicuna13b_mtbench_tau", "tau_eagle2"),
        given("speedup_eagle2", 4.26, unit="x", source=T1),
    ),
    "eagle3": (
        fact("reported_acceptance_lengths.eagle3_vicuna13b_mtbench_tau", "tau_eagle3"),
        given("speedup_eagle3", 5.58, unit="x", source=T1),
    ),
}
bench_t = given("benchmark_temperature", 0, source=T1)
ahead1 = given("offset_next", 1, unit="tokens", source="the next position after the last verified token")
ahead2 = given("offset_after_next", 2, unit="tokens", source="the position a second Medusa head predicts")
for k, (tau, sp) in rows.items():
    claim(f"cycle_cost_{k}", tau / sp, unit="x")  # cost of one draft+verify cycle in vanilla steps
check(all(1 < tau / sp < 1.4 for tau, sp in rows.values()), "every method pays 1.1-1.3 vanilla steps per cycle")
claim("tau_gain_eagle3_over_medusa", rows["eagle3"][0] / rows["medusa"][0], unit="x")

# %% [markdown]
# ## Toy: why position t+2 is hard for an independent head
# x1 ~ p1 (entropy set by a temperature); x2 = f(x1) with prob 0.9, else uniform. A Medusa head can only
# output the marginal of x2; an autoregressive head sees x1. Acceptance at position 2 (given x1 accepted)
# = E_x1 [ sum min(p(x2|x1), q(x2)) ].

# %%
torch.manual_seed(0)
V = int(given("toy_vocab", 50, unit="tokens", source="toy"))
follow = given("follow_prob", 0.9, unit="fraction", source="toy: x2 is a function of x1 with this probability")
f = torch.randperm(V)
cond = torch.full((V, V), (1 - follow) / V, dtype=torch.float64)
cond[torch.arange(V), f] += follow
base = torch.randn(V, dtype=torch.float64) * 3


def accept2(temp: float) -> tuple[float, float]:
    p1 = torch.softmax(base / temp, 0)
    marg = p1 @ cond  # what a Medusa head can at best predict
    medusa = float((p1 * torch.minimum(cond, marg.unsqueeze(0)).sum(1)).sum())
    return medusa, 1.0  # a perfect autoregressive head matches cond exactly


for name, t in (("peaked", 0.3), ("flat", 1.5)):
    temp = given(f"temp_{name}", t, source="toy temperature of the first-token distribution")
    p1 = torch.softmax(base / temp, 0)
    claim(f"p1_top_{name}", float(p1.max()), unit="fraction")
    claim(f"medusa_accept2_{name}", accept2(temp)[0], unit="fraction")
check(accept2(0.3)[0] > accept2(1.5)[0], "an independent head loses more when the next token is uncertain")
