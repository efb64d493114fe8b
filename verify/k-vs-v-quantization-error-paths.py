# %% [markdown]
# # Keys and values: same bytes, different error paths, different scale layouts
# Seeded synthetic head (4,096 tokens x 128 dims). Keys carry a few fixed outlier channels (the structure KIVI,
# arXiv:2402.02750, and KVQuant, arXiv:2401.18079, report for keys); values carry no channel outliers but vary in
# magnitude from token to token. Each tensor is quantized to symmetric INT4 with either a per-token scale (over the
# 128 channels) or a per-channel scale (over a 128-token group), one tensor at a time, and we measure the error in
# the attention output for a batch of queries.

# %%
import torch

from qbank.verify import check, claim, fact, given

g = torch.Generator().manual_seed(0)
T = int(given("tokens", 4096, unit="tokens", source="synthetic context length"))
D = int(given("head_dim", 128, unit="dims", source="Llama-3.1 head_dim 128 (facts: llama3_1_70b.head_dim)"))
n_out = int(given("key_outlier_channels", 4, unit="dims", source="synthetic: a few fixed outlier channels in K"))
gain = given("key_outlier_gain", 15, unit="x", source="synthetic: outlier channels 15x the bulk")
group = int(
    given("channel_group_tokens", 128, unit="tokens", source="per-channel scale computed over 128-token groups")
)
bits = int(given("bits", 4, source="INT4 to make the error paths visible (KIVI goes to 2 bits)"))
qmax = 2 ** (bits - 1) - 1

K = torch.randn(T, D, generator=g)
K[:, :n_out] *= gain
V = torch.randn(T, D, generator=g) * torch.exp(0.5 * torch.randn(T, 1, generator=g))  # token-wise magnitude spread
Q = torch.randn(64, D, generator=g)
Q[:, :n_out] *= 0.3  # queries lean a little on the outlier channels, as in real heads
scale = D**-0.5


def quant_per_token(x: torch.Tensor) -> torch.Tensor:
    s = x.abs().amax(dim=1, keepdim=True) / qmax
    return (x / s).round().clamp(-qmax, qmax) * s


def quant_per_channel(x: torch.Tensor) -> torch.Tensor:
    xg = x.view(-1, group, x.shape[1])
    s = xg.abs().amax(dim=1, keepdim=True) / qmax
    return ((xg / s).round().clamp(-qmax, qmax) * s).view_as(x)


def attn(k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.softmax(Q @ k.T * scale, dim=-1) @ v


ref = attn(K, V)


def out_err(k: torch.Tensor, v: torch.Tensor) -> float:
    return float((attn(k, v) - ref).norm() / ref.norm())


def tensor_err(xq: torch.Tensor, x: torch.Tensor) -> float:
    return float((xq - x).norm() / x.norm())


# %%
k_tok, k_ch = quant_per_token(K), quant_per_channel(K)
v_tok, v_ch = quant_per_token(V), quant_per_channel(V)
e = {
    "k_token": claim("out_err_k_per_token", out_err(k_tok, V), unit="fraction"),
    "k_channel": claim("out_err_k_per_channel", out_err(k_ch, V), unit="fraction"),
    "v_token": claim("out_err_v_per_token", out_err(K, v_tok), unit="fraction"),
    "v_channel": claim("out_err_v_per_channel", out_err(K, v_ch), unit="fraction"),
}
t = {
    "k_token": claim("tensor_err_k_per_token", tensor_err(k_tok, K), unit="fraction"),
    "k_channel": claim("tensor_err_k_per_channel", tensor_err(k_ch, K), unit="fraction"),
    "v_token": claim("tensor_err_v_per_token", tensor_err(v_tok, V), unit="fraction"),
    "v_channel": claim("tensor_err_v_per_channel", tensor_err(v_ch, V), unit="fraction"),
}
for key in e:
    print(f"{key:10s} tensor err {t[key]:.3f}  output err {e[key]:.3f}  amplification {e[key] / t[key]:.2f}")
k_gain = claim("k_per_token_over_per_channel", e["k_token"] / e["k_channel"], unit="x")
v_gain = claim("v_per_channel_over_per_token", e["v_channel"] / e["v_token"], unit="x")
k_amp = claim("k_amplification_per_channel", e["k_channel"] / t["k_channel"], unit="x")
v_amp = claim("v_amplification_per_token", e["v_token"] / t["v_token"], unit="x")
check(e["k_channel"] < e["k_token"], "keys: per-channel beats per-token")
check(e["v_token"] < e["v_channel"], "values: per-token beats per-channel")
check(v_amp < 1.1 and k_amp > 1.5, "value error passes through about 1:1, key error is amplified through the softmax")
print(
    f"K: per-token/per-channel {k_gain:.2f}x; V: per-channel/per-token {v_gain:.2f}x; amp K {k_amp:.2f} V {v_amp:.2f}"
)

# %% [markdown]
# ## Scale overhead: FP16 scales for INT4 data, per head
# Per token: one scale per 128 values. Per channel: 128 scales per 128-token group of 128 x 128 values.

# %%
scale_bytes = given("scale_bytes", 2, unit="B", source="FP16 scale")
data_tok = D * bits / 8
ovh_tok = claim("overhead_per_token_scales", scale_bytes / data_tok, unit="fraction")
ovh_ch = claim("overhead_per_channel_scales", D * scale_bytes / (group * D * bits / 8), unit="fraction")
check(abs(ovh_tok - ovh_ch) < 1e-12, "both layouts cost the same share of bytes at these sizes")
print(f"scale overhead: per token {ovh_tok:.2%}, per channel {ovh_ch:.2%}")
claim("k_amplification_per_token", e["k_token"] / t["k_token"], unit="x")
claim("v_amplification_per_channel", e["v_channel"] / t["v_channel"], unit="x")
check(qmax == 7, "symmetric INT4 keeps 7 levels each side of zero (-8 unused)")
fact("vllm.block_size_default", "block_tokens", unit="tokens")
