# %% [markdown]
# # YaRN in DeepSeek-V3: which rotary frequencies move, and the attention temperature
# Reference implementation: github:deepseek-ai/DeepSeek-V3 inference/model.py @013e2213 (ModelArgs yarn defaults,
# precompute_freqs_cis, MLA.__init__ softmax_scale). The same values appear as rope_scaling in the released
# config.json (beta_fast 32, beta_slow 1, factor 40, mscale 1.0, original_max_position_embeddings 4096,
# rope_theta 10000, max_position_embeddings 163840; read here through copies of that file).

# %%
import math

import torch

from qbank.verify import check, claim, fact, given

SRC = "github:deepseek-ai/DeepSeek-V3 inference/model.py @013e2213 ModelArgs"
dim = fact("deepseek_v3.qk_rope_head_dim", "rope_dim")
nope = fact("deepseek_v3.qk_nope_head_dim", "nope_dim")
base = given("rope_theta", 10000, source=SRC + " rope_theta")
factor = given("rope_factor", 40, unit="x", source=SRC + " rope_factor")
beta_fast = given("beta_fast", 32, source=SRC + " beta_fast")
beta_slow = given("beta_slow", 1, source=SRC + " beta_slow")
orig = given("original_context", 4096, unit="tokens", source=SRC + " original_seq_len")
mscale_arg = given("mscale_arg", 1.0, source=SRC + " mscale")
max_pos = given("max_positions", 163840, unit="tokens", source="DeepSeek-V3 config.json max_position_embeddings")
check(orig * factor == max_pos, "163,840 = 40 x 4,096")

# %% [markdown]
# ## The reference computation (as in precompute_freqs_cis), written out

# %%
log_base = 2 * math.log(base)


def correction_dim(rotations: float) -> float:
    """The rotary pair index whose wavelength fits `rotations` full turns into the original context."""
    return dim * math.log(orig / (rotations * 2 * math.pi)) / log_base


# find_correction_range rounds outward: floor for the fast edge, ceil for the slow edge
low = max(0, math.floor(correction_dim(beta_fast)))
high = min(int(dim) - 1, math.ceil(correction_dim(beta_slow)))
check(low < high, "a ramp of non-zero width (the reference adds 0.001 only when low == high)")
idx = torch.arange(int(dim) // 2, dtype=torch.float64)
ramp = torch.clamp((idx - low) / (high - low), 0, 1)
smooth = 1 - ramp
freqs = base ** (-2 * idx / dim)
scaled = freqs * (smooth + (1 - smooth) / factor)
pairs = claim("rope_pairs", dim / 2, unit="dims")
claim("ramp_low", low, unit="dims")
claim("ramp_high", high, unit="dims")
untouched = int((ramp == 0).sum())
stretched = int((ramp == 1).sum())
blended = int(dim // 2) - untouched - stretched
claim("pairs_untouched", untouched, unit="dims")
claim("pairs_interpolated", stretched, unit="dims")
claim("pairs_blended", blended, unit="dims")
check(untouched + blended + stretched == dim / 2, "every pair is in one class")

# %% [markdown]
# ## Wavelengths: which pairs never completed a turn in 4K tokens of pretraining

# %%
wave = 2 * math.pi / freqs
claim("shortest_wavelength", wave[0].item(), unit="tokens")
claim("longest_wavelength", wave[-1].item(), unit="tokens")
claim("longest_wavelength_scaled", (2 * math.pi / scaled[-1]).item(), unit="tokens")
claim("pairs_longer_than_context", int((wave > orig).sum()), unit="dims")
check(bool(((wave > orig) <= (ramp > 0)).all()), "every pair longer than 4K is stretched at least partly")
claim("turns_fast_edge", orig / wave[low].item())
claim("turns_slow_edge", orig / wave[high].item())

# %% [markdown]
# ## Attention temperature: mscale = 0.1 ln(factor) + 1, applied squared to the softmax scale

# %%
coef = given(
    "mscale_coeff",
    0.1,
    source=SRC.replace("ModelArgs", "MLA.__init__") + ": mscale = 0.1 * mscale * log(rope_factor) + 1",
)
ms = claim("mscale", coef * mscale_arg * math.log(factor) + 1.0)
claim("softmax_scale_factor", ms**2, unit="x")
claim("position_dims_share", dim / (dim + nope), unit="fraction")

# %% [markdown]
# ## Serving consequence: the reference code switches on the configured maximum, not the prompt
# `if seqlen > orig_seq_len` tests max_seq_len, so a 1K-token prompt uses the stretched table and the 1.87x scale
# whenever the deployment allows more than 4,096 tokens; vLLM and SGLang (models/deepseek_v2.py, rope_type
# "deepseek_yarn") apply it whenever the config has rope_scaling. Rotated keys are what the cache stores (pe_cache).

# %%
given("ctx_128k", 131072, unit="tokens", source="the question's hypothetical: a deployment allowing 128K tokens")
prompt = given("short_prompt", 1024, unit="tokens", source="the question's hypothetical: a 1K-token prompt")
pos = torch.arange(int(prompt), dtype=torch.float64)
angle_orig = torch.outer(pos, freqs)
angle_yarn = torch.outer(pos, scaled)
max_shift = claim("max_angle_change_short_prompt", (angle_orig - angle_yarn).abs().max().item())
check(max_shift > 1.0, "even a 1K prompt sees rotations that differ by over a radian")
print(low, high, untouched, blended, stretched, wave[0].item(), wave[-1].item(), ms, ms**2, max_shift)
