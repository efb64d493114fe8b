# %% [markdown]
# # SmoothQuant's migration strength on a layer with outlier channels
# SmoothQuant (arXiv:2211.10438; code github:mit-han-lab/smoothquant smoothquant/smooth.py smooth_ln_fcs, default
# alpha=0.5): per input channel j, s_j = max|X_j|^alpha / max|W_:,j|^(1 - alpha); X is divided by s (folded into
# the preceding norm's weight), W multiplied by s, so X W^T is unchanged in exact arithmetic. Then W8A8 with
# per-tensor static INT8 scales, the cheapest setting (the paper's O3). The activations are seeded synthetic data
# with a few fixed outlier channels, the question's stand-in for a real layer's calibration set.

# %%
import torch

from qbank.verify import check, claim, given

g = torch.Generator().manual_seed(0)
tokens = int(given("tokens", 512, unit="tokens", source="the question's seeded calibration block"))
K = int(given("k_dim", 1024, unit="dims", source="the question's seeded hidden size"))
N = int(given("n_dim", 512, unit="dims", source="the question's seeded output channels"))
n_out = int(given("outlier_channels", 8, unit="dims", source="the question's hypothetical: 8 fixed outlier channels"))
gain = given("outlier_gain", 50.0, unit="x", source="the question's hypothetical outlier magnitude, 50x the other "
             "channels; SmoothQuant §3 describes outlier channels about 100x larger than most activations")
int8_max = given("int8_max", 127, source="symmetric INT8")
default_alpha = given("default_alpha", 0.5, source="mit-han-lab/smoothquant smooth.py smooth_ln_fcs(alpha=0.5)")

X = torch.randn(tokens, K, generator=g)
idx = torch.randperm(K, generator=g)[:n_out]
X[:, idx] *= gain
W = torch.randn(N, K, generator=g) * 0.02
Y = X @ W.T


def qdq(t: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return torch.clamp(torch.round(t / scale), -int8_max, int8_max) * scale


def w8a8_per_tensor(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return qdq(x, x.abs().max() / int8_max) @ qdq(w, w.abs().max() / int8_max).T


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).norm() / b.norm()).item()


# %% [markdown]
# ## The sweep

# %%
act_max = X.abs().amax(dim=0)
w_max = W.abs().amax(dim=0)
errs = {}
for a in (0.0, 0.25, 0.5, 0.75, 1.0):
    s = act_max.pow(a) / w_max.pow(1 - a)
    xs, ws = X / s, W * s
    check(rel(xs @ ws.T, Y) < 1e-5, f"smoothing is exact before quantization (alpha {a})")
    e = rel(w8a8_per_tensor(xs, ws), Y)
    errs[a] = e
    name = str(a).replace(".", "")
    given(f"alpha_{name}", a, source="the question's sweep of the migration strength")
    claim(f"err_alpha_{name}", e, unit="fraction")
    claim(f"act_range_alpha_{name}", (xs.abs().amax(dim=0).max() / xs.abs().amax(dim=0).median()).item(), unit="x")
    claim(f"w_range_alpha_{name}", (ws.abs().amax(dim=0).max() / ws.abs().amax(dim=0).median()).item(), unit="x")
best = min(errs, key=errs.get)
claim("best_alpha", best)
claim("gain_at_default", errs[0.0] / errs[0.5], unit="x")
check(errs[0.5] < errs[0.0] and errs[0.5] < errs[1.0], "the middle of the sweep beats both ends")

# %% [markdown]
# ## Finer scales without smoothing: per-token activations do not help, FP8 does

# %%
sx_tok = X.abs().amax(dim=1, keepdim=True) / int8_max
sw_ch = W.abs().amax(dim=1, keepdim=True) / int8_max
claim("err_per_token_no_smooth", rel(qdq(X, sx_tok) @ qdq(W, sw_ch).T, Y), unit="fraction")
check(rel(qdq(X, sx_tok) @ qdq(W, sw_ch).T, Y) > 2 * errs[0.5], "per-token scales cannot follow per-channel outliers")
fp8_max = given("e4m3_max", 448.0, source="FP8 E4M3 (fn) largest finite value")


def fp8_qdq(t: torch.Tensor) -> torch.Tensor:
    sc = t.abs().max() / fp8_max
    return (t / sc).to(torch.float8_e4m3fn).to(torch.float32) * sc


e_fp8 = claim("err_fp8_per_tensor_no_smooth", rel(fp8_qdq(X) @ fp8_qdq(W).T, Y), unit="fraction")
check(e_fp8 < errs[0.0], "FP8 per-tensor without smoothing beats INT8 per-tensor without smoothing")
s5 = act_max.pow(0.5) / w_max.pow(0.5)
e_fp8_s = claim("err_fp8_per_tensor_smoothed", rel(fp8_qdq(X / s5) @ fp8_qdq(W * s5).T, Y), unit="fraction")
claim("int8_unsmoothed_over_fp8", errs[0.0] / e_fp8, unit="x")
# smoothed INT8 against unsmoothed FP8: once the outliers are gone, INT8's uniform 255-level grid is finer over the
# bulk of a Gaussian block than E4M3's 3-bit mantissa
fp8_over_int8_smoothed = claim("fp8_over_int8_smoothed", e_fp8 / errs[0.5], unit="x")
claim("int8_levels", 2 * int8_max + 1)
check(fp8_over_int8_smoothed > 1, "on this layer smoothed INT8 is more accurate than FP8 per tensor")
print({a: round(e, 4) for a, e in errs.items()})
given("e4m3_mantissa_bits", 3, unit="bit", source="FP8 E4M3: 3 mantissa bits (OCP OFP8 spec)")
given("int4_bits", 4, unit="bit", source="INT4 is 4 bits")
ordinary = torch.ones(K, dtype=torch.bool)
ordinary[idx] = False
claim("ordinary_max_code", round((X[:, ordinary].abs().max() / X.abs().max() * int8_max).item()))
