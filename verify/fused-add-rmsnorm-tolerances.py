# %% [markdown]
# # Fused add + RMSNorm in Triton: which tolerance, and which bugs a tolerance hides
# The kernel (verify/_lib/add_rmsnorm_kernel.py) follows the rounding order of vLLM's fused_add_rms_norm
# (csrc/layernorm_kernels.cu @c6691785). This script checks it at Llama-3.1-8B's hidden size against two
# references (the engine's rounding order, and float32 throughout with one rounding), measures both against a
# float64 ground truth in bf16 ulps, and runs the deliberately broken variants.

# %%
import torch
from add_rmsnorm_kernel import (
    add_rmsnorm,
    add_rmsnorm_exact,
    add_rmsnorm_fp32_once,
    add_rmsnorm_input_variance,
    add_rmsnorm_no_eps,
    add_rmsnorm_reference,
    fused_bytes,
    ulps,
    unfused_bytes,
)

from qbank.verify import check, claim, device, fact, given, triton_check

hidden = int(fact("llama3_1_8b.hidden_size", "hidden"))
eps = given(
    "norm_eps", 1e-5, source="github:meta-llama/llama-models models/llama3/args.py @d42f3959 ModelArgs.norm_eps"
)
warps = given("num_warps", 8, unit="warps", source="the launch in verify/_lib/add_rmsnorm_kernel.py (num_warps=8)")
claim("values_per_thread", hidden / (warps * 32))  # the hidden-wide block (a power of two here) over 32-thread warps
rows = int(given("test_rows", 8, unit="tokens", source="rows of the interpreter check (the last one sums to zero)"))
g = torch.Generator().manual_seed(0)
x = (torch.randn(rows, hidden, generator=g) * 2).to(torch.bfloat16)
res = (torch.randn(rows, hidden, generator=g) * 2).to(torch.bfloat16)
res[-1] = -x[-1]  # a row whose sum is exactly zero: the new residual is all zeros
w = (1 + 0.1 * torch.randn(hidden, generator=g)).to(torch.bfloat16)


def on_dev(fn, *a):
    """Run a launch on the selected device (the interpreter on a CPU) and bring its outputs back."""
    dev = "cuda" if device() == "cuda" else "cpu"
    return tuple(o.cpu() for o in fn(*[t.to(dev) for t in a]))


def launch(x, r, w):
    return add_rmsnorm(x, r, w, float(eps))


def ref(x, r, w):
    return add_rmsnorm_reference(x, r, w, float(eps))


# %% [markdown]
# ## Against the engine's order, at the default bf16 tolerance (rtol 1.6e-2, atol 1e-5)

# %%
triton_check("add_rmsnorm_engine_order", launch, ref, x, res, w, bytes_moved=fused_bytes(rows, hidden, 2))
out, z = on_dev(launch, x, res, w)
y_eng, z_eng = ref(x, res, w)
y_once, _ = add_rmsnorm_fp32_once(x, res, w, float(eps))
exact = add_rmsnorm_exact(x, res, w, float(eps))
live = slice(0, rows - 1)  # the zero row is exactly zero everywhere; ulps are measured on the others
claim("kernel_vs_engine_differing", float((out[live] != y_eng[live]).float().mean()), unit="fraction")
claim("kernel_vs_engine_max_ulps", float(ulps(out[live], y_eng[live]).max()))
claim("engine_vs_once_differing", float((y_eng[live] != y_once[live]).float().mean()), unit="fraction")
claim("engine_vs_once_max_ulps", float(ulps(y_eng[live], y_once[live]).max()))
err_eng = ulps(y_eng[live], exact[live])
err_once = ulps(y_once[live], exact[live])
claim("engine_order_max_ulps_vs_exact", float(err_eng.max()))
claim("once_max_ulps_vs_exact", float(err_once.max()))
claim("engine_order_mean_ulps_vs_exact", float(err_eng.mean()))
claim("once_mean_ulps_vs_exact", float(err_once.mean()))
check(float(err_once.max()) <= 0.5 + 1e-6, "float32 with one final rounding is correctly rounded here (half an ulp)")
check(float(err_eng.max()) > 0.5, "the engine's double rounding is not")
check(bool((z_eng[-1] == 0).all()) and bool((out[-1] == 0).all()), "the zero row normalises to zeros")



def trunc_bf16(t: torch.Tensor) -> torch.Tensor:
    """float32 -> bf16 by dropping the low 16 bits: what a plain cast does under Triton 3.9's interpreter."""
    return (t.float().view(torch.int32) & -65536).view(torch.float32).to(torch.bfloat16)


zt = trunc_bf16(x.float() + res.float()).float()
y_trunc = trunc_bf16(trunc_bf16(zt * torch.rsqrt(zt.pow(2).mean(dim=-1, keepdim=True) + eps)).float() * w.float())
claim("trunc_max_ulps", float(ulps(y_trunc[live], y_eng[live]).max()))
claim("trunc_differing", float((y_trunc[live] != y_eng[live]).float().mean()), unit="fraction")
bf16_eps = claim("bf16_spacing_at_one", torch.finfo(torch.bfloat16).eps)
rtol = given("default_bf16_rtol", 1.6e-2, source="qbank.verify kernel/triton checks: default bfloat16 rtol")
claim("rtol_in_spacings", rtol / bf16_eps, unit="x")
atol = given("default_bf16_atol", 1e-5, source="qbank.verify kernel/triton checks: default bfloat16 atol")
check(torch.allclose(y_once.float(), y_eng.float(), rtol=rtol, atol=atol), "the fp32-once order passes at the default")
tight = bf16_eps  # one spacing at 1.0 as the relative tolerance
fail_tight = ~torch.isclose(y_once.float(), y_eng.float(), rtol=tight, atol=atol)
claim("once_fails_at_one_spacing", float(fail_tight[live].float().mean()), unit="fraction")

# %% [markdown]
# ## Broken kernels: one the tolerance catches, one it catches only with the right row

# %%
triton_check(
    "bug_variance_before_add", lambda *a: add_rmsnorm_input_variance(*a, float(eps)), ref, x, res, w,
    expect_mismatch=True,
)
bad, _ = on_dev(lambda *a: add_rmsnorm_input_variance(*a, float(eps)), x, res, w)
rel = (bad.float() - y_eng.float()).abs() / y_eng.float().abs().clamp_min(1e-3)
claim("bug_variance_median_rel_err", float(rel[live].median()), unit="fraction")
# without the zero row, dropping epsilon is invisible at bf16 tolerance
no_eps = lambda *a: add_rmsnorm_no_eps(*a, float(eps))
triton_check("bug_no_eps_random_rows_pass", no_eps, ref, x[live].contiguous(), res[live].contiguous(), w)
triton_check("bug_no_eps_zero_row", no_eps, ref, x, res, w, expect_mismatch=True)
ms_typ = float(z_eng[live].float().pow(2).mean(dim=-1).min())
claim("min_mean_square", ms_typ)
eps_eff = claim("eps_relative_effect", float(eps) / ms_typ / 2, unit="fraction")  # d(rsqrt)/rsqrt = -eps / (2 ms)
claim("spacing_over_eps_effect", bf16_eps / eps_eff, unit="x")

# %% [markdown]
# ## Bytes: fused against an add kernel followed by vLLM's two-loop rms_norm kernel

# %%
batch = given("prefill_tokens", 8192, unit="tokens", source="the question's hypothetical chunked-prefill step")
layers = fact("llama3_1_8b.num_hidden_layers", "layers")
norms = given("norms_per_layer", 2, source="Llama decoder layer: one RMSNorm before attention, one before the MLP")
saved = claim(
    "saved_bytes_step", norms * layers * (unfused_bytes(batch, hidden, 2) - fused_bytes(batch, hidden, 2)), unit="B"
)
claim("fused_values", fused_bytes(1, 1, 1))
claim("unfused_values", unfused_bytes(1, 1, 1))
claim("fused_over_unfused", fused_bytes(1, 1, 1) / unfused_bytes(1, 1, 1), unit="fraction")
claim("saved_seconds_step", saved / (fact("h100_sxm.hbm_bandwidth", "hbm_bw") * 1e12), unit="s")
d = hidden
kvh = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
params = layers * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * vocab * d
gemm_s = claim("prefill_gemm_seconds", 2 * params * batch / (fact("h100_sxm.bf16_dense", "bf16_peak") * 1e12), unit="s")
claim("norm_saving_share", saved / (fact("h100_sxm.hbm_bandwidth", "hbm_bw2") * 1e12) / gemm_s, unit="fraction")
