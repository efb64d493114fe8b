# %% [markdown]
# # Fused SiLU-and-mul: the kernel, its check, and the bytes it saves
# A gated MLP (SwiGLU, Shazeer arXiv:2002.05202 §2; Llama's MLP) computes down(silu(gate(x)) * up(x)).
# Engines merge gate and up into one GEMM whose output row holds gate in columns [0, I) and up in
# [I, 2I); the activation then reads that row and writes I values. The kernel lives in
# verify/_lib/silu_mul_kernel.py; this script checks it and prices it for Llama-3.1-70B.

# %%
import torch
from silu_mul_kernel import fused_bytes, silu_and_mul, silu_and_mul_reference, silu_and_mul_swapped, unfused_bytes

from qbank.verify import check, claim, device, fact, given, triton_check

g = torch.Generator().manual_seed(0)
tokens_toy = int(given("toy_tokens", 6, unit="tokens", source="toy shape for the interpreter check"))
inter_toy = int(given("toy_intermediate", 200, unit="dims", source="toy shape: not a multiple of the 128-column block"))
block = int(given("kernel_block", 128, unit="dims", source="BLOCK of silu_and_mul's launch (silu_mul_kernel.py)"))
x32 = torch.randn(tokens_toy, 2 * inter_toy, generator=g) * 4


def launch(x: torch.Tensor) -> torch.Tensor:
    return silu_and_mul(x, block=block)


triton_check("silu_and_mul_fp32", launch, silu_and_mul_reference, x32,
             bytes_moved=fused_bytes(tokens_toy, inter_toy, 4), flops=5 * tokens_toy * inter_toy)
triton_check("silu_and_mul_swapped_halves", silu_and_mul_swapped, silu_and_mul_reference, x32, expect_mismatch=True)

# %% [markdown]
# ## Bytes: fused against the two-op PyTorch expression
# Fused: read gate and up, write out (3 T I elements). Unfused: silu reads gate and writes a temporary,
# the multiply reads the temporary and up and writes out (5 T I elements).

# %%
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden")
inter = fact("llama3_1_70b.intermediate_size", "intermediate")
tp = given("tp_gpus", 8, unit="GPUs", source="example: tensor parallel over one 8-GPU HGX H100 node")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
chunk = given("prefill_chunk", 8192, unit="tokens", source="example chunked-prefill budget per step")
decode_batch = given("decode_batch", 64, unit="tokens", source="example decode batch, one token per request")
inter_tp = claim("intermediate_per_gpu", inter / tp, unit="dims")
ratio = claim("fused_over_unfused", fused_bytes(1, 1, 1) / unfused_bytes(1, 1, 1), unit="fraction")
saved_layer = claim("saved_bytes_per_layer", unfused_bytes(chunk, inter_tp, bf16) - fused_bytes(chunk, inter_tp, bf16), unit="B")
saved_pass = claim("saved_bytes_per_pass", saved_layer * layers, unit="B")
bw = fact("h100_sxm.hbm_bandwidth", "h100_hbm_bandwidth") * 1e12
saved_s = claim("saved_seconds_per_pass", saved_pass / bw, unit="s")
fused_s_layer = claim("fused_seconds_per_layer", fused_bytes(chunk, inter_tp, bf16) / bw, unit="s")
unfused_s_layer = claim("unfused_seconds_per_layer", unfused_bytes(chunk, inter_tp, bf16) / bw, unit="s")

# %% [markdown]
# ## The bf16 check, at the size that is timed on a GPU
# Through the interpreter on the CPU it runs on the toy shape. Compiled on a GPU it runs on one layer's
# real activation for this prefill chunk, [8192, 2 x 3584] bf16, so the time and bandwidth the page shows
# for it are the kernel's at production size.

# %%
on_gpu = device() == "cuda" and torch.cuda.is_available()
rows_b, cols_b = (int(chunk), int(inter_tp)) if on_gpu else (tokens_toy, inter_toy)
xbf = (torch.randn(rows_b, 2 * cols_b, generator=g) * 4).to(torch.bfloat16)
triton_check("silu_and_mul_bf16", launch, silu_and_mul_reference, xbf,
             bytes_moved=fused_bytes(rows_b, cols_b, 2), flops=5 * rows_b * cols_b)

# %% [markdown]
# ## Against the MLP's GEMMs
# Per layer and GPU the MLP multiplies [T, h] by [h, 2 I/tp] and [T, I/tp] by [I/tp, h]: 6 T h I/tp FLOPs,
# and reads its weights, 3 h I/tp bf16 values. Prefill (T = 8192) is compute-bound; decode (T = 64)
# reads the weights and little else.

# %%
peak = fact("h100_sxm.bf16_dense", "h100_bf16_dense") * 1e12
gemm_s = claim("gemm_seconds_per_layer_prefill", 6 * chunk * hidden * inter_tp / peak, unit="s")
act_share = claim("activation_share_prefill_unfused", unfused_s_layer / (gemm_s + unfused_s_layer), unit="fraction")
saving_share = claim("fusion_saving_share_prefill", (unfused_s_layer - fused_s_layer) / (gemm_s + unfused_s_layer),
                     unit="fraction")
weights_s = claim("weight_read_seconds_per_layer", 3 * hidden * inter_tp * bf16 / bw, unit="s")
decode_act = claim("decode_activation_bytes_fused", fused_bytes(decode_batch, inter_tp, bf16), unit="B")
decode_act_s = claim("decode_activation_seconds_fused", decode_act / bw, unit="s")
check(gemm_s > 10 * fused_s_layer, "in prefill the GEMMs dwarf the activation")
check(decode_act_s < weights_s / 50, "in decode the activation's bytes are noise beside the weights")
check(chunk == hidden and weights_s == fused_s_layer,
      "the weight read equals the fused prefill activation's time only because the chunk equals the hidden size")
print(inter_tp, ratio, saved_layer, saved_pass, saved_s, gemm_s, act_share, saving_share, weights_s, decode_act_s)
