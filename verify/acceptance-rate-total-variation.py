# %% [markdown]
# # Acceptance rate is one minus total variation, and temperature moves it
# alpha = E_x[sum_v min(p(v|x), q(v|x))] = 1 - E[TV(p, q)]: Leviathan et al. 2023 (arXiv:2211.17192)
# Theorem 3.5 / Corollary 3.6. Toy: 512 contexts over a 2,000-token vocabulary; the draft's logits are the
# target's plus Gaussian noise. Greedy verification accepts iff the argmaxes agree (the T -> 0 limit).

# %%
import torch

from qbank.verify import check, claim, given

torch.manual_seed(0)
n_ctx = int(given("contexts", 512, unit="elements", source="toy contexts"))
V = int(given("vocab", 2000, unit="tokens", source="toy vocabulary"))
given("tv_l1_factor", 0.5, source="definition: TV(p, q) = 1/2 sum_x |p(x) - q(x)| (the total-variation distance)")
noise = given("draft_noise", 0.5, source="std of Gaussian noise added to the target logits to make the draft")
tl = torch.randn(n_ctx, V, dtype=torch.float64) * 5
dl = tl + noise * torch.randn(n_ctx, V, dtype=torch.float64)


def alpha(t_target: float, t_draft: float) -> float:
    p = torch.softmax(tl / t_target, -1)
    q = torch.softmax(dl / t_draft, -1)
    return float(torch.minimum(p, q).sum(-1).mean())


def tv(t: float) -> float:
    p, q = torch.softmax(tl / t, -1), torch.softmax(dl / t, -1)
    return float(0.5 * (p - q).abs().sum(-1).mean())


temps = {
    "t05": given("temp_low", 0.5, source="sampling temperature"),
    "t10": given("temp_one", 1.0, source="sampling temperature"),
    "t15": given("temp_high", 1.5, source="sampling temperature"),
}
for k, t in temps.items():
    a = claim(f"alpha_{k}", alpha(t, t), unit="fraction")
    check(abs(a - (1 - tv(t))) < 1e-12, f"alpha = 1 - TV at T={t}")
greedy = claim("alpha_greedy", float((tl.argmax(-1) == dl.argmax(-1)).double().mean()), unit="fraction")
mismatch = claim("alpha_draft_t1_target_t05", alpha(0.5, 1.0), unit="fraction")
check(mismatch < alpha(0.5, 0.5), "a draft sampled at the wrong temperature loses acceptance")

# entropy of the target at T = 1, in nats, to say how peaked the toy is
p1 = torch.softmax(tl, -1)
ent = claim("target_entropy_t1_nats", float(-(p1 * p1.clamp_min(1e-300).log()).sum(-1).mean()))
print({k: round(alpha(t, t), 3) for k, t in temps.items()}, greedy, mismatch, ent)

# %% [markdown]
# ## A four-token context a reader can do by hand
# Same identities on one explicit pair, so that a practice item can state its inputs: target p and draft q
# over four tokens, acceptance at T = 1 and T = 0.5 (p^(1/T) renormalized), greedy agreement, the chance
# the target rejects the draft's token 1 (1 - p/q where q > p), and the target's entropy.

# %%
p4 = torch.tensor([given(f"hand_p{i}", v, unit="fraction", source="toy four-token target distribution")
                   for i, v in enumerate((0.6, 0.25, 0.1, 0.05))], dtype=torch.float64)
q4 = torch.tensor([given(f"hand_q{i}", v, unit="fraction", source="toy four-token draft distribution")
                   for i, v in enumerate((0.3, 0.5, 0.15, 0.05))], dtype=torch.float64)
check(abs(float(p4.sum()) - 1) < 1e-12 and abs(float(q4.sum()) - 1) < 1e-12, "the hand pair sums to one")


def sharpen(d: torch.Tensor, t: float) -> torch.Tensor:
    s = d ** (1.0 / t)
    return s / s.sum()


claim("hand_alpha_t10", float(torch.minimum(p4, q4).sum()), unit="fraction")
claim("hand_alpha_greedy", float(p4.argmax() == q4.argmax()), unit="fraction")
claim("hand_alpha_t05", float(torch.minimum(sharpen(p4, 0.5), sharpen(q4, 0.5)).sum()), unit="fraction")
rej1 = claim("hand_reject_token1", float(1 - p4[1] / q4[1]), unit="fraction")
check(0 < rej1 < 1, "the draft over-proposes token 1, so it is sometimes rejected")
claim("hand_entropy_nats", float(-(p4 * p4.log()).sum()))
