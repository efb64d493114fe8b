# %% [markdown]
# # DeepSeek-V3's multi-token prediction as a draft: 85-90% acceptance, 1.8x TPS
# DeepSeek-V3 technical report (arXiv:2412.19437): §2.2 MTP module (depth D = 1), §5.4.3 second-token
# acceptance 85-90% and 1.8x TPS. Cost ratio from the active parameters (README / README_WEIGHTS.md).
# Formulas: Leviathan et al. 2023 (arXiv:2211.17192) Eq. (1) and Theorem 3.8 with gamma = 1.

# %%
from qbank.verify import check, claim, fact, given

depth = fact("deepseek_v3_mtp.mtp_depth", "mtp_depth")
reported = fact("deepseek_v3_mtp.tps_speedup", "reported_tps_speedup")
a_lo = given("accept_low", 0.85, unit="fraction", source="arXiv:2412.19437 §5.4.3 'between 85% and 90%'")
a_hi = given("accept_high", 0.90, unit="fraction", source="arXiv:2412.19437 §5.4.3 'between 85% and 90%'")
layers = fact("deepseek_v3.num_hidden_layers", "layers")
active = fact("deepseek_v3.active_params_per_token", "active_params")
emb = given(
    "embedding_params", 0.9e9, unit="params", source="DeepSeek-V3 README_WEIGHTS.md: 0.9B embedding in the 36.7B active"
)
head = given("head_params", 0.9e9, unit="params", source="DeepSeek-V3 README_WEIGHTS.md: 0.9B output head")

tok_lo = claim("tokens_per_step_low", 1 + a_lo, unit="tokens")  # Eq. (1) with gamma = 1: 1 + a
tok_hi = claim("tokens_per_step_high", 1 + a_hi, unit="tokens")
per_layer = claim("active_params_per_layer", (active - emb - head) / layers, unit="params")
mtp_active = claim("mtp_active_params", per_layer + head, unit="params")  # one MoE block + the shared head
c = claim("cost_ratio_c", mtp_active / active, unit="fraction")
s_lo = claim("speedup_low", (1 + a_lo) / (1 + c), unit="x")
s_hi = claim("speedup_high", (1 + a_hi) / (1 + c), unit="x")
check(
    s_lo <= reported <= s_hi, "Theorem 3.8 at gamma = 1 brackets the reported 1.8x once the MTP step's cost is priced"
)
eff_lo = claim("reported_over_tokens_high", reported / tok_hi, unit="fraction")
eff_hi = claim("reported_over_tokens_low", reported / tok_lo, unit="fraction")
ceiling_g1 = claim("ceiling_gamma1", 1 + 1.0, unit="tokens")
print(tok_lo, tok_hi, per_layer, mtp_active, c, s_lo, s_hi, eff_lo, eff_hi)
