# %% [markdown]
# # Choosing a draft for Llama-3.1-405B: quality against cost
# Configs from Meta's llama-models sku_list.py (facts.yaml). At small batch every step is weight-read bound,
# so the cost ratio c is the ratio of parameters read per step. Speedup: Leviathan et al. 2023
# (arXiv:2211.17192) Theorem 3.8 with the integer-optimal gamma; Corollary 3.9: some gamma helps iff alpha > c.
# The acceptance rates are assumptions (stated per candidate), not measurements.

# %%
from qbank.verify import check, claim, fact, given


def params(m: str) -> tuple[float, float, float, float, float, float]:
    L = fact(f"{m}.num_hidden_layers", f"{m}_layers")
    d = fact(f"{m}.hidden_size", f"{m}_hidden")
    kvh = fact(f"{m}.num_key_value_heads", f"{m}_kv_heads")
    hd = fact(f"{m}.head_dim", f"{m}_head_dim")
    ffn = fact(f"{m}.intermediate_size", f"{m}_ffn")
    v = fact(f"{m}.vocab_size", f"{m}_vocab")
    layer = d * (2 * d + 2 * kvh * hd) + 3 * d * ffn
    return L * layer + 2 * v * d, layer, v * d, L * kvh * hd, d, L


P405, layer405, head405, kv405, d405, layers405 = params("llama3_1_405b")
P70, _, _, kv70, _, _ = params("llama3_1_70b")
P8, _, _, kv8, _, _ = params("llama3_1_8b")
# EAGLE's head fuses the target's feature and the token embedding, 2d -> d, before its decoder layer
# (Li et al., arXiv:2401.15077 §4: "a fully connected layer" reduces the concatenated 2d features to d).
fusion_fc = claim("head_fusion_fc_params", 2 * d405 * d405, unit="params")
head_params = layer405 + head405 + fusion_fc
claim("params_405b", P405, unit="params")
claim("params_70b", P70, unit="params")
claim("params_8b", P8, unit="params")
claim("params_head", head_params, unit="params")
check(400e9 < P405 < 410e9, "405B count lands near 405B")
candidates = {
    "d8b": (P8, given("alpha_8b", 0.7, unit="fraction", source="assumed acceptance of the 8B sibling at T=1")),
    "d70b": (P70, given("alpha_70b", 0.85, unit="fraction", source="assumed acceptance of the 70B sibling at T=1")),
    "head": (
        head_params,
        given("alpha_head", 0.75, unit="fraction", source="assumed acceptance of a one-layer EAGLE-style head at T=1"),
    ),
}


def speedup(a: float, g: int, c: float) -> float:
    return (1 - a ** (g + 1)) / ((1 - a) * (g * c + 1))


results = {}
for k, (p, a) in candidates.items():
    c = claim(f"c_{k}", p / P405, unit="fraction")
    g = max(range(1, 31), key=lambda x: speedup(a, x, c))
    claim(f"gamma_{k}", g, unit="tokens")
    results[k] = claim(f"speedup_{k}", speedup(a, g, c), unit="x")
    check(a > c, f"{k}: alpha > c, so some gamma helps (Cor. 3.9)")
check(results["d8b"] > results["d70b"], "the small draft beats the much better but 9x costlier one")
check(results["head"] > results["d8b"], "with these assumed acceptances the head wins")


def best(a: float, c: float) -> float:
    return max(speedup(a, g, c) for g in range(1, 31))


def alpha_to_reach(target: float, c: float) -> float:
    """Smallest acceptance (to 0.001) whose best-gamma speedup reaches ``target``."""
    return next(x / 1000 for x in range(1, 1000) if best(x / 1000, c) >= target)


# How good would the 70B draft have to be? Against the winner (the head), not against the runner-up.
c70 = P70 / P405
c8 = P8 / P405
c_head = head_params / P405
need = claim("alpha_70b_to_tie", alpha_to_reach(results["head"], c70), unit="fraction")
need_vs_8b = claim("alpha_70b_to_tie_8b", alpha_to_reach(results["d8b"], c70), unit="fraction")
check(need > need_vs_8b, "beating the winner asks more of the 70B than beating the runner-up")

# %% [markdown]
# ## Sensitivity: the winner is an output of the assumed acceptances
# The three alphas are assumptions. Where do the rankings flip? The head ties the 8B draft at a lower
# acceptance than assumed; the 8B draft overtakes the head only above a higher one.

# %%
a8 = candidates["d8b"][1]
a_head = candidates["head"][1]
head_ties_8b = claim("alpha_head_to_tie_8b", alpha_to_reach(results["d8b"], c_head), unit="fraction")
d8_ties_head = claim("alpha_8b_to_tie_head", alpha_to_reach(results["head"], c8), unit="fraction")
check(head_ties_8b < a_head and d8_ties_head > a8, "the assumed alphas sit inside the head's winning region")
margin_head = claim("head_margin_alpha", a_head - head_ties_8b, unit="fraction")
margin_8b = claim("d8b_margin_alpha", d8_ties_head - a8, unit="fraction")
# the head's cost is dominated by the LM head it re-runs
claim("head_lm_share", head405 / head_params, unit="fraction")
claim("head_margin_relative", margin_head / a_head, unit="fraction")
claim("d8b_margin_relative", margin_8b / a8, unit="fraction")

# %% [markdown]
# ## Long context: a separate model's draft step also reads its own KV
# Once the KV read dominates both steps, c tends to the ratio of KV bytes per token, which for the separate
# models is far above the parameter ratio; the head keeps one layer of KV.

# %%
kv_c8 = claim("kv_ratio_8b", kv8 / kv405, unit="fraction")
kv_c70 = claim("kv_ratio_70b", kv70 / kv405, unit="fraction")
claim("kv_ratio_head", 1 / layers405, unit="fraction")
check(kv_c8 > c8 and kv_c70 > c70, "at long context the sibling drafts get relatively costlier")
print({k: (round(p / P405, 4), round(results[k], 2)) for k, (p, _) in candidates.items()}, need, need_vs_8b)
print(head_ties_8b, d8_ties_head)
