# %% [markdown]
# # CUDA-graph capture sizes: the ladder, the padding, and what the padding costs
# vLLM captures one graph per size in a ladder and runs a batch through the smallest captured size that
# holds it, padding the rest. This script rebuilds the default ladder from vLLM's source, checks a
# PyTorch padding function against a plain loop, measures the padded share of rows, and prices the
# padding with a roofline of Llama-3.1-8B decode on one H100.

# %%
import torch

from qbank.verify import check, claim, fact, given, kernel_check

SRC = "github:vllm-project/vllm vllm/config/vllm.py VllmConfig._set_cudagraph_sizes @000fc94b"
max_num_seqs = given(
    "max_num_seqs_default", 1024, unit="sequences",
    source="github:vllm-project/vllm vllm/engine/arg_utils.py get_batch_defaults @99d7eb5d: "
    "default_max_num_seqs 1024 on GPUs with >= 70 GiB that are not A100 (H100, MI300x), both usage contexts",
)
graph_ceiling = given(
    "default_max_graph_size", 512, unit="tokens",
    source=SRC + ": default_max_graph_size = 1024 if device capability family 100 (B200) else 512",
)
step_small = given("ladder_step_small", 8, unit="tokens", source=SRC + ": range(8, min(max + 1, 256), 8)")
step_large = given("ladder_step_large", 16, unit="tokens", source=SRC + ": range(256, max + 1, 16)")
knee = given("ladder_knee", 256, unit="tokens", source=SRC + ": step 8 below 256, step 16 from 256")
query_len = given("decode_query_len", 1, unit="tokens", source="one new token per request per decode step")
cap = claim("max_capture_tokens", min(max_num_seqs * query_len * 2, graph_ceiling), unit="tokens")
check(cap == graph_ceiling, "with the H100 server default of 1024 sequences the ceiling is the 512-token cap")


def ladder(ceiling: int) -> list[int]:
    """The default capture sizes up to ceiling, as vLLM builds them (no speculative tokens)."""
    sizes = [s for s in (1, 2, 4) if s <= ceiling]
    sizes += list(range(int(step_small), min(ceiling + 1, int(knee)), int(step_small)))
    sizes += list(range(int(knee), ceiling + 1, int(step_large)))
    return sorted(set(sizes))


sizes = ladder(int(cap))
n_graphs = claim("graphs_captured", len(sizes))
check(sizes[:4] == [1, 2, 4, 8] and sizes[-1] == 512, "ladder runs 1, 2, 4, 8 ... 512")

# %% [markdown]
# ## The padding function, checked against a loop
# `torch.bucketize(b, ladder)` returns the index of the first captured size >= b; a batch past the last
# size gets no graph (marked 0 here).

# %%
ladder_t = torch.tensor(sizes, dtype=torch.int64)


def padded_size(batch: torch.Tensor, capture: torch.Tensor) -> torch.Tensor:
    """Smallest captured size holding each batch; 0 where the batch exceeds every captured size."""
    idx = torch.bucketize(batch, capture.to(batch.device))
    fits = idx < capture.numel()
    return torch.where(fits, capture.to(batch.device)[idx.clamp(max=capture.numel() - 1)], torch.zeros_like(batch))


def padded_size_loop(batch: torch.Tensor, capture: torch.Tensor) -> torch.Tensor:
    out = []
    for b in batch.tolist():
        out.append(next((s for s in capture.tolist() if s >= b), 0))
    return torch.tensor(out, dtype=torch.int64)


def padded_size_floor(batch: torch.Tensor, capture: torch.Tensor) -> torch.Tensor:
    """A plausible bug: right=True picks the first size strictly greater, padding exact hits a step up."""
    idx = torch.bucketize(batch, capture.to(batch.device), right=True)
    return capture.to(batch.device)[idx.clamp(max=capture.numel() - 1)]


batches = torch.arange(1, 1025, dtype=torch.int64)
kernel_check("padded_size", padded_size, padded_size_loop, batches, ladder_t)
check(not torch.equal(padded_size_floor(batches, ladder_t), padded_size_loop(batches, ladder_t)),
      "the right=True variant differs from the loop (the check can fail)")
pad = padded_size_loop(batches, ladder_t)

# %% [markdown]
# ## The padded share of rows

# %%
in_range = batches <= int(cap)
b_in = batches[in_range].double()
p_in = pad[in_range].double()
waste = (p_in - b_in) / p_in
worst_i = int(torch.argmax(waste))
claim("worst_waste_batch", b_in[worst_i].item(), unit="sequences")
claim("worst_waste_padded_to", p_in[worst_i].item(), unit="sequences")
claim("worst_waste_fraction", waste[worst_i].item(), unit="fraction")
claim("mean_waste_fraction_uniform", float(waste.mean()), unit="fraction")
claim("mean_waste_fraction_above_knee", float(waste[b_in >= knee].mean()), unit="fraction")
b257 = given("example_batch", 257, unit="sequences", source="example batch just past the 256 step")
claim("example_batch_padded_to", float(pad[int(b257) - 1]), unit="sequences")
claim("example_batch_pad_rows", float(pad[int(b257) - 1]) - b257, unit="sequences")
claim("first_uncaptured_batch", cap + 1, unit="sequences")
uncaptured = claim("uncaptured_batches", int(max_num_seqs) - int(cap), unit="sequences")
print(f"{n_graphs:.0f} sizes; worst batch {b_in[worst_i]:.0f} -> {p_in[worst_i]:.0f} ({waste[worst_i]:.2%}); mean {float(waste.mean()):.2%}")

# %% [markdown]
# ## What a padded row costs in a decode step
# Roofline of one decode step of Llama-3.1-8B (bf16) on one H100, priced kernel by kernel: the GEMMs and
# attention are separate kernels that run one after the other on the stream, so the weight read cannot
# hide behind the KV read or the other way round. The GEMMs read the weights once and cost 2 FLOPs per
# parameter per row, padded rows included: max(weight read, GEMM FLOPs). Attention reads every real
# sequence's KV (a padded row reads none, see the answer for full graphs): memory-bound at decode.
# Efficiencies derate the datasheet peaks.

# %%
params = given("params_8b", 8.03e9, unit="params", source="Llama-3.1-8B count from its config (memory-budget script)")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
kv_tok = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv_bytes_per_token")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw") * 1e12
flops = fact("h100_sxm.bf16_dense", "h100_bf16") * 1e12
eta_mem = given("mem_efficiency", 0.8, unit="fraction",
                source="the question's hypothetical: achieved fraction of peak HBM bandwidth in a decode step")
eta_flop = given("flop_efficiency", 0.6, unit="fraction",
                 source="the question's hypothetical: achieved fraction of peak bf16 FLOP/s in skinny decode GEMMs")
ctx = given("context_tokens", 512, unit="tokens", source="the question's hypothetical mean context per sequence")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
reserve = given("runtime_reserve", 3e9, unit="B",
                source="the question's hypothetical: activation peak, non-torch memory and graph pool together")
weights = claim("weights_bytes", params * bf16, unit="B")
pool = claim("kv_pool_bytes", total_mem * util - weights - reserve, unit="B")
claim("cap_batch_sequences", cap, unit="sequences")
check(cap * ctx * kv_tok <= pool, "512 sequences of 512 tokens fit in the KV pool")
claim("kv_bytes_at_cap", cap * ctx * kv_tok, unit="B")


def t_gemm(rows: float) -> float:
    """The step's GEMMs: one weight read, 2 FLOPs per parameter per row (padded rows included)."""
    return max(weights / (bw * eta_mem), 2 * params * rows / (flops * eta_flop))


def t_attn(b: float) -> float:
    """Decode attention over the real sequences' KV (memory-bound at one query token per sequence)."""
    return b * ctx * kv_tok / (bw * eta_mem)


def step(b: float, rows: float) -> float:
    return t_gemm(rows) + t_attn(b)


ridge = claim("gemm_ridge_rows", weights / (bw * eta_mem) * flops * eta_flop / (2 * params), unit="sequences")
claim("weights_read_ms", weights / (bw * eta_mem) * 1e3, unit="ms")
claim("padded_row_us", 2 * params / (flops * eta_flop) * 1e6, unit="us")
free_below = all(step(b, float(pad[b - 1])) == step(b, b) for b in range(1, int(cap) + 1) if pad[b - 1] <= ridge)
check(free_below, "a batch padded to a size below the GEMM ridge costs exactly what the unpadded one does")
claim("last_free_capture_size", max(s for s in sizes if s <= ridge), unit="sequences")
p257 = float(pad[int(b257) - 1])
claim("step_ms_b257", step(b257, p257) * 1e3, unit="ms")
claim("gemm_ms_b257_padded", t_gemm(p257) * 1e3, unit="ms")
claim("attn_ms_b257", t_attn(b257) * 1e3, unit="ms")
pad_cost_257 = claim("pad_cost_ms_b257", (step(b257, p257) - step(b257, b257)) * 1e3, unit="ms")
claim("pad_cost_share_b257", (step(b257, p257) - step(b257, b257)) / step(b257, p257), unit="fraction")
check(pad_cost_257 > 0, "past the ridge the padded rows cost time")
claim("step_ms_b512", step(cap, cap) * 1e3, unit="ms")
claim("flop_ms_b512", t_gemm(cap) * 1e3, unit="ms")
claim("attn_ms_b512", t_attn(cap) * 1e3, unit="ms")
time_waste = [(step(b, float(pad[b - 1])) - step(b, b)) / step(b, float(pad[b - 1])) for b in range(1, int(cap) + 1)]
above = [w for b, w in zip(range(1, int(cap) + 1), time_waste) if b > ridge]
claim("mean_time_waste_above_ridge", sum(above) / len(above), unit="fraction")
claim("max_time_waste_above_ridge", max(above), unit="fraction")
# sensitivity: the ridge moves with the achieved GEMM efficiency, in proportion
eta_low = given("flop_efficiency_low", 0.4, unit="fraction", source="sensitivity: a poorly tuned skinny GEMM")
claim("gemm_ridge_rows_low_eff", weights / (bw * eta_mem) * flops * eta_low / (2 * params), unit="sequences")

# %% [markdown]
# ## Where the ladder stops: speculative decoding
# With k draft tokens a decode request is 1 + k tokens wide; the ceiling stays min(max_num_seqs x (1+k) x 2,
# 512) tokens, and the appended uniform-decode sizes are request counts times (1+k) that fit under it.

# %%
k_spec = given("spec_tokens", 3, unit="tokens", source="example: three speculative tokens per step (EAGLE-style)")
q_spec = 1 + k_spec
cap_spec = min(max_num_seqs * q_spec * 2, graph_ceiling)
claim("spec_query_len", q_spec, unit="tokens")
claim("max_requests_graphed_spec", cap_spec // q_spec, unit="sequences")
claim("graph_coverage_loss", (cap - cap_spec // q_spec) / cap, unit="fraction")
check(cap_spec // q_spec == 128, "with 3 draft tokens only 128 requests per step get a graph")
print(f"{uncaptured:.0f} batch sizes without a graph; GEMM ridge at {ridge:.0f} rows")
