# %% [markdown]
# # Prompt-lookup (n-gram) drafting: a free draft for copy-heavy outputs
# The draft is a lookup, not a model (prompt lookup decoding, Saxena 2023,
# github.com/apoorvumang/prompt-lookup-decoding;
# vLLM's "ngram" speculative method): find the last n generated tokens earlier in the context and propose
# the tokens that followed them. Verification here is greedy against a known target sequence, so a step
# accepts the longest matching prefix plus the target's own next token.

# %%
import random

from qbank.verify import check, claim, given

rng = random.Random(0)
V = int(given("vocab", 500, unit="tokens", source="toy vocabulary"))
plen = int(given("prompt_tokens", 400, unit="tokens", source="toy document length"))
edit_rate = given("edit_rate", 0.05, unit="fraction", source="share of positions the 'edit' changes")
n = int(given("ngram", 3, unit="tokens", source="match length, vLLM's prompt_lookup_max-style parameter"))
gamma = int(given("gamma", 8, unit="tokens", source="max tokens proposed per step"))

prompt = [rng.randrange(V) for _ in range(plen)]
edited = [rng.randrange(V) if rng.random() < edit_rate else t for t in prompt]
fresh = [rng.randrange(V) for _ in range(plen)]


def propose(context: list[int]) -> list[int]:
    """Latest earlier occurrence of the last n tokens; propose up to gamma tokens that followed it."""
    if len(context) < n:
        return []
    key = context[-n:]
    for start in range(len(context) - n - 1, -1, -1):
        if context[start : start + n] == key:
            return context[start + n : start + n + gamma]
    return []


def run(target: list[int]) -> tuple[int, int, int]:
    """Decode `target` after the prompt; return (steps, drafted tokens, accepted draft tokens)."""
    out: list[int] = []
    steps = drafted = accepted = 0
    while len(out) < len(target):
        draft = propose(prompt + out)
        drafted += len(draft)
        i = 0
        while i < len(draft) and len(out) + i < len(target) and draft[i] == target[len(out) + i]:
            i += 1
        accepted += i
        out += target[len(out) : len(out) + i + 1]  # accepted prefix + the target's own token
        steps += 1
    check(out[: len(target)] == target, "greedy verification reproduces the target exactly")
    return steps, drafted, accepted


s_edit, d_edit, a_edit = run(edited)
s_fresh, d_fresh, _ = run(fresh)
tps_edit = claim("tokens_per_step_edit", plen / s_edit, unit="tokens")
tps_fresh = claim("tokens_per_step_fresh", plen / s_fresh, unit="tokens")
acc_edit = claim("accept_rate_edit", a_edit / d_edit, unit="fraction")
drafts_fresh = claim("drafted_tokens_fresh", d_fresh, unit="tokens")
check(tps_edit > 3 and tps_fresh < 1.1, "copy-heavy output gains several-fold; fresh text gains nothing")
ceiling = claim("ceiling_tokens_per_step", gamma + 1, unit="tokens")
print(s_edit, d_edit, tps_edit, acc_edit, s_fresh, d_fresh, tps_fresh)
