# %% [markdown]
# # Which scales a GEMM can absorb: per-tensor, per-channel, per-token and per-group
# Y = X W^T with X (tokens x K) and W (N x K). A scale that is constant along K (per tensor, per output channel of
# W, per token of X) factors out of the K-sum and is applied once per output element in the GEMM's epilogue; a
# scale that varies along K does not. The matrices are seeded synthetic data (the question's stand-in for a layer).

# %%
import torch

from qbank.verify import check, claim, fact, given

hidden = fact("llama3_1_70b.hidden_size", "hidden")
inter = fact("llama3_1_70b.intermediate_size", "inter")
int8_max = given("int8_max", 127, source="symmetric INT8: codes -127..127")
fp32_scale = given("scale_bytes", 4, unit="B", source="FP32 scales, one per channel (e.g. vLLM's per-channel INT8/FP8 "
                   "weight scales, vllm/model_executor/layers/quantization/utils/w8a8_utils.py)")
g = torch.Generator().manual_seed(0)
tokens = int(given("tokens", 64, unit="tokens", source="the question's seeded activation block"))
K = int(given("k_dim", 512, unit="dims", source="the question's seeded inner dimension"))
N = int(given("n_dim", 256, unit="dims", source="the question's seeded output channels"))
spread = given("row_spread_sigma", 1.0, source="the question's hypothetical: output-channel magnitudes lognormal "
               "with sigma 1; a real layer's spread is read from its per-row amax")


def q_sym(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Symmetric INT8 codes of x under `scale` (broadcast), as integers."""
    return torch.clamp(torch.round(x / scale), -int8_max, int8_max)


row_mag = torch.exp(torch.randn(N, 1, generator=g) * spread)
W = torch.randn(N, K, generator=g) * row_mag * 0.02
X = torch.randn(tokens, K, generator=g) * torch.exp(torch.randn(tokens, 1, generator=g) * 0.5)
Y = X @ W.T


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).norm() / b.norm()).item()


# %% [markdown]
# ## Weight error: one scale for the tensor against one per output channel

# %%
s_tensor = W.abs().max() / int8_max
s_channel = W.abs().amax(dim=1, keepdim=True) / int8_max
e_wt = claim("weight_err_per_tensor", rel(q_sym(W, s_tensor) * s_tensor, W), unit="fraction")
e_wc = claim("weight_err_per_channel", rel(q_sym(W, s_channel) * s_channel, W), unit="fraction")
claim("per_tensor_over_per_channel", e_wt / e_wc, unit="x")
small_rows = row_mag.squeeze(1) < row_mag.median()
codes_small = q_sym(W[small_rows], s_tensor).abs().amax(dim=1).float().median()
claim("median_max_code_small_rows_per_tensor", codes_small.item())
check(e_wc < e_wt, "per-channel scales give the lower weight error")

# %% [markdown]
# ## The epilogue: per-token x per-channel scales factor out of the integer GEMM exactly

# %%
sx_tok = X.abs().amax(dim=1, keepdim=True) / int8_max  # one per token (row of X)
Xq = q_sym(X, sx_tok).to(torch.int64)
Wq = q_sym(W, s_channel).to(torch.int64)
acc = Xq @ Wq.T  # the integer GEMM: int32 on hardware, int64 here
y_epilogue = acc.to(torch.float64) * sx_tok.double() * s_channel.T.double()
y_dequant = (Xq.double() * sx_tok.double()) @ (Wq.double() * s_channel.double()).T
check(((y_epilogue - y_dequant).abs().max() / y_dequant.abs().max()).item() < 1e-12,
      "scaling after the integer GEMM equals dequantize-then-multiply (to float64 rounding)")
check(int(acc.abs().max()) < 2**31, "the INT32 accumulator does not overflow at this K")
claim("acc_max_bits", float(torch.log2(acc.abs().max().double()).item()), unit="bit")
e_out = claim("output_err_w8a8", rel(y_epilogue.float(), Y), unit="fraction")

# %% [markdown]
# ## A scale that varies along K does not factor out

# %%
sx_k = X.abs().amax(dim=0, keepdim=True) / int8_max  # one per input channel of X
Xq_k = q_sym(X, sx_k).to(torch.int64)
wrong = (Xq_k @ Wq.T).double() * sx_k.mean().double() * s_channel.T.double()  # best single factor: still wrong
right = (Xq_k.double() * sx_k.double()) @ (Wq.double() * s_channel.double()).T
claim("per_k_scale_misfactored_err", rel(wrong.float(), right.float()), unit="fraction")
check(rel(wrong.float(), right.float()) > 0.1, "per-input-channel activation scales cannot be pulled out of the K-sum")
group = given("group", 128, unit="elements", source="DeepSeek-V3 (arXiv:2412.19437 §3.3.2): 1x128 activation tiles and "
              "128x128 weight blocks, partial sums promoted to FP32 with their scales every 128 elements of K")
claim("k_groups", K / group)

# %% [markdown]
# ## What per-channel weight scales cost in bytes, for a real layer

# %%
down_bytes = claim("down_proj_int8_bytes", hidden * inter * 1, unit="B")
scale_b = claim("down_proj_scale_bytes", hidden * fp32_scale, unit="B")
claim("scale_overhead", scale_b / down_bytes, unit="fraction")
print(f"weights: per-tensor {e_wt:.4f} per-channel {e_wc:.4f}; output W8A8 {e_out:.4f}")
