# %% [markdown]
# # Speculative decoding under a grammar: which distributions get masked, and at which state
# Speculative sampling rule: Leviathan et al. 2023 (arXiv:2211.17192), Algorithm 1. With a grammar, the
# target distribution is the masked, renormalized p' = p*m / sum(p*m). Exact enumeration (no sampling):
# a tiny grammar whose allowed set at position 2 depends on the token at position 1.

# %%
import torch

from qbank.verify import check, claim, given

torch.manual_seed(0)
V = int(given("vocab", 6, unit="tokens", source="toy vocabulary"))
gamma = int(given("gamma", 2, unit="tokens", source="a two-token speculative step, the smallest where state matters"))
first = int(given("first_position", 1, source="index of the first drafted position"))
# grammar: start state allows {0,1,2,3}; after {0,1} only {4,5}; after {2,3} only {0,2,4}
M0 = torch.tensor([1, 1, 1, 1, 0, 0], dtype=torch.float64)
MA = torch.tensor([0, 0, 0, 0, 1, 1], dtype=torch.float64)
MB = torch.tensor([1, 0, 1, 0, 1, 0], dtype=torch.float64)


def next_mask(x1: int) -> torch.Tensor:
    return MA if x1 in (0, 1) else MB


def norm(v: torch.Tensor) -> torch.Tensor:
    return v / v.sum()


p1 = torch.softmax(torch.randn(V, dtype=torch.float64), 0)  # target, position 1
p2 = torch.softmax(torch.randn(V, V, dtype=torch.float64), 1)  # target, position 2 given x1
q1 = torch.softmax(torch.log(p1) + 0.8 * torch.randn(V, dtype=torch.float64), 0)  # draft
q2 = torch.softmax(torch.log(p2) + 0.8 * torch.randn(V, V, dtype=torch.float64), 1)


def accept_emit(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """P(emit y) for one speculative position: accepted min(p, q) plus rejected mass times the residual."""
    resid = torch.clamp(p - q, min=0)
    alpha = torch.minimum(p, q).sum()
    return torch.minimum(p, q) + ((1 - alpha) * resid / resid.sum() if resid.sum() > 0 else 0)


def two_token_dist(mask2_of, draft_masked: bool) -> torch.Tensor:
    """Exact joint distribution of the first two emitted tokens of a gamma=2 speculative step.

    Position 1 uses the start-state mask. Position 2 uses mask2_of(x1). After a rejection at position 1
    the next step samples position 2 from the correctly masked target.
    """
    tp1 = norm(p1 * M0)
    dq1 = norm(q1 * M0) if draft_masked else q1
    joint = torch.zeros(V, V, dtype=torch.float64)
    acc1 = torch.minimum(tp1, dq1)  # x1 proposed and accepted
    rej1 = accept_emit(tp1, dq1) - acc1  # x1 emitted by a rejection at position 1
    for x1 in range(V):
        exact2 = norm(p2[x1] * next_mask(x1))
        joint[x1] += rej1[x1] * exact2
        if acc1[x1] > 0:
            m2 = mask2_of(x1)
            tp2 = norm(p2[x1] * m2)
            dq2 = norm(q2[x1] * m2) if draft_masked else q2[x1]
            joint[x1] += acc1[x1] * accept_emit(tp2, dq2)
    return joint


truth = norm(p1 * M0).unsqueeze(1) * torch.stack([norm(p2[x] * next_mask(x)) for x in range(V)])
correct = two_token_dist(next_mask, draft_masked=True)
unmasked_draft = two_token_dist(next_mask, draft_masked=False)
stale = two_token_dist(lambda x1: M0, draft_masked=True)  # bug: position 2 uses the pre-step state

tv_correct = claim("tv_correct", 0.5 * float((correct - truth).abs().sum()), unit="fraction")
tv_unmasked = claim("tv_unmasked_draft", 0.5 * float((unmasked_draft - truth).abs().sum()), unit="fraction")
tv_stale = claim("tv_stale_state", 0.5 * float((stale - truth).abs().sum()), unit="fraction")
valid = torch.stack([next_mask(x) for x in range(V)]) * M0.unsqueeze(1)
invalid_stale = claim("invalid_mass_stale_state", float((stale * (1 - valid)).sum()), unit="fraction")
check(tv_correct < 1e-12 and tv_unmasked < 1e-12, "masked target + any draft is lossless w.r.t. the masked target")
check(
    tv_stale > 0.05 and invalid_stale > 0.05,
    "a stale grammar state at position 2 changes the distribution and emits invalid pairs",
)

# %% [markdown]
# ## Acceptance at position 1 with and without masking the draft

# %%
a_masked = claim("alpha1_masked_draft", float(torch.minimum(norm(p1 * M0), norm(q1 * M0)).sum()), unit="fraction")
a_unmasked = claim("alpha1_unmasked_draft", float(torch.minimum(norm(p1 * M0), q1).sum()), unit="fraction")
check(a_masked > a_unmasked, "masking the draft too raises acceptance")
out_mass = claim("draft_mass_outside_grammar", float((q1 * (1 - M0)).sum()), unit="fraction")
# Where the grammar forces a single token x*, the masked target is a point mass on x*: the unmasked draft is
# accepted with probability q(x*) <= 1 - (its off-grammar mass), the masked draft (renormalized onto x*) with 1.
forced_unmasked = claim("alpha_forced_unmasked", 1 - out_mass, unit="fraction")
span = int(given("forced_span", 4, unit="tokens", source="example: a forced literal span of four tokens, e.g. a key "
                 "and its quotes and colon"))
claim("forced_span_survival_unmasked", forced_unmasked ** span, unit="fraction")
print(tv_correct, tv_unmasked, tv_stale, invalid_stale, a_masked, a_unmasked, out_mass)
