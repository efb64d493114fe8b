# %% [markdown]
# # Penalties on the GPU: what vLLM rebuilds every step, and an incremental design
# Source read: vLLM V1 `apply_all_penalties` (vllm/v1/sample/ops/penalties.py @3ff2de9c) pads every
# request's output token list into an int64 tensor on the CPU (`make_tensor_with_pad`, pad = vocab_size)
# and copies it to the GPU; `apply_penalties` (vllm/model_executor/layers/utils.py @00358600) then builds,
# for the prompt tokens and for the output tokens, a zeroed int64 [batch, vocab + 1] count tensor,
# `scatter_add_`s ones into it and takes `counts > 0` as a mask; the repetition penalty is a CUDA kernel
# (csrc/sampler.cu @2689ca0a, `apply_repetition_penalties_kernel`: a token seen in the prompt OR the output
# has a positive logit divided by the penalty and a negative one multiplied), then
# `logits -= frequency * output_counts` and `logits -= presence * output_mask` (OpenAI's definition).
# Part 1 checks an incremental design against that rule bit for bit; part 2 counts bytes.

# %%
import torch

from qbank.verify import check, claim, fact, given

g = torch.Generator().manual_seed(0)
B_toy = int(given("toy_batch", 6, unit="requests", source="toy batch for the equivalence check"))
V_toy = int(given("toy_vocab", 512, unit="tokens", source="toy vocabulary for the equivalence check"))
steps_toy = int(given("toy_steps", 40, unit="steps", source="decode steps simulated in the equivalence check"))


def engine_penalties(logits, prompts, outputs, pres, freq, rep):
    """vLLM's rule, recomputed from the token lists (the reference)."""
    b, v = logits.shape

    def counts(lists):
        width = max([len(x) for x in lists] + [1])
        t = torch.full((b, width), v, dtype=torch.int64)
        for i, x in enumerate(lists):
            t[i, : len(x)] = torch.tensor(x, dtype=torch.int64)
        c = torch.zeros(b, v + 1, dtype=torch.int64)
        c.scatter_add_(1, t, torch.ones_like(t))
        return c[:, :v]

    p_mask = counts(prompts) > 0
    o_counts = counts(outputs)
    o_mask = o_counts > 0
    out = logits.clone()
    seen = p_mask | o_mask
    r = rep.unsqueeze(1).expand_as(out)
    out = torch.where(seen, torch.where(out > 0, out / r, out * r), out)
    out -= freq.unsqueeze(1) * o_counts
    out -= pres.unsqueeze(1) * o_mask
    return out


class IncrementalPenalties:
    """Persistent per-slot state: a prompt bitmask built once, output counts bumped by one token per step."""

    def __init__(self, prompts, v):
        b = len(prompts)
        self.v = v
        self.words = (v + 31) // 32
        self.prompt_bits = torch.zeros(b, self.words, dtype=torch.int32)
        for i, x in enumerate(prompts):
            for tok in set(x):
                w, bit = divmod(tok, 32)
                self.prompt_bits[i, w] |= (1 << bit) if bit < 31 else -(1 << 31)
        self.out_counts = torch.zeros(b, v, dtype=torch.int32)

    def append(self, tokens):  # one sampled token per request: B scattered increments
        self.out_counts[torch.arange(len(tokens)), tokens] += 1

    def apply(self, logits, pres, freq, rep):
        cols = torch.arange(self.v)
        p_mask = ((self.prompt_bits[:, cols // 32] >> (cols % 32)) & 1).bool()
        o_mask = self.out_counts > 0
        seen = p_mask | o_mask
        r = rep.unsqueeze(1).expand_as(logits)
        out = torch.where(seen, torch.where(logits > 0, logits / r, logits * r), logits)
        out = out - freq.unsqueeze(1) * self.out_counts.to(out.dtype)
        return out - pres.unsqueeze(1) * o_mask


lengths = torch.randint(1, 60, (B_toy,), generator=g)
prompts = [torch.randint(0, V_toy, (int(n),), generator=g).tolist() for n in lengths]
sign_bit = int(given("sign_bit_index", 31, source="the sign bit of an int32 word"))
check((V_toy - 1) % 32 == sign_bit, "the toy vocabulary's last id lands on the sign bit")
prompts[0].append(V_toy - 1)  # the last token id sits in the sign bit of its int32 word
pres = torch.rand(B_toy, generator=g)
freq = torch.rand(B_toy, generator=g)
rep = 1 + torch.rand(B_toy, generator=g)
state = IncrementalPenalties(prompts, V_toy)
outputs: list[list[int]] = [[] for _ in range(B_toy)]
worst = 0.0
for _ in range(steps_toy):
    logits = torch.randn(B_toy, V_toy, generator=g) * 3
    ref = engine_penalties(logits, prompts, outputs, pres, freq, rep)
    inc = state.apply(logits, pres, freq, rep)
    worst = max(worst, float((ref - inc).abs().max()))
    tok = torch.randint(0, 40, (B_toy,), generator=g)  # a small range, so tokens repeat
    state.append(tok)
    for i, t in enumerate(tok.tolist()):
        outputs[i].append(t)
claim("max_abs_difference", worst)
check(worst == 0.0, "the incremental state reproduces the engine's penalties bit for bit")
repeats = claim("max_repeats_in_toy_output", max(max(x.count(t) for t in set(x)) for x in outputs), unit="tokens")
check(repeats > 2, "the toy outputs repeat tokens, so frequency counts above one are exercised")

# %% [markdown]
# ## Bytes per step at a real shape
# Per element of the [batch, vocab] matrix: the two count tensors are zeroed (int64, 8 B each), each is
# compared with zero (read 8, write a 1-byte mask); the repetition kernel reads both masks; the frequency
# term multiplies the int64 counts by a float (read 8, write a float32 temporary 4) and subtracts it (read 8,
# write 4); the presence term does the same from the bool mask (read 1, write 4, then read 8, write 4).

# %%
vocab = fact("llama3_1_8b.vocab_size", "vocab")
i64 = given("int64_bytes", 8, unit="B", source="torch.int64 stores 8 bytes")
f32 = given("fp32_bytes", 4, unit="B", source="torch.float32 stores 4 bytes")
bool_b = given("bool_bytes", 1, unit="B", source="torch.bool stores 1 byte")
i32 = given("int32_bytes", 4, unit="B", source="torch.int32 stores 4 bytes")
per_elem = {
    "zero prompt counts": i64,
    "prompt mask": i64 + bool_b,
    "zero output counts": i64,
    "output mask": i64 + bool_b,
    "repetition kernel reads both masks": 2 * bool_b,
    "frequency: counts x penalty, then subtract": (i64 + f32) + (2 * f32 + f32),
    "presence: mask x penalty, then subtract": (bool_b + f32) + (2 * f32 + f32),
}
claim("row_mask", per_elem["prompt mask"], unit="B")
claim("row_repetition", per_elem["repetition kernel reads both masks"], unit="B")
claim("row_frequency", per_elem["frequency: counts x penalty, then subtract"], unit="B")
claim("row_presence", per_elem["presence: mask x penalty, then subtract"], unit="B")
engine_b = claim("engine_bytes_per_element", sum(per_elem.values()), unit="B")
claim("penalty_kernels", len(per_elem), unit="kernels")
batch = given("batch", 256, unit="requests", source="the question's hypothetical decode batch")
prompt = given("prompt_tokens", 512, unit="tokens", source="the question's hypothetical prompt length")
out_len = given("output_tokens", 1024, unit="tokens", source="the question's hypothetical output length")
elements = batch * vocab
engine_bytes = claim("engine_bytes_step", engine_b * elements, unit="B")
scatter_bytes = claim("scatter_bytes_step", batch * (prompt + out_len) * (i64 + 2 * i64), unit="B")
count_zero_bytes = claim("count_tensor_bytes", batch * (vocab + 1) * i64, unit="B")

# the model's step, for scale: Llama-3.1-8B bf16 on one H100, mean context = prompt + half the output
L = fact("llama3_1_8b.num_hidden_layers", "layers")
d = fact("llama3_1_8b.hidden_size", "hidden")
kvh = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn")
params = L * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * vocab * d
weights = claim("weight_bytes", 2 * params, unit="B")
mean_ctx = claim("mean_context", prompt + out_len / 2, unit="tokens")
kv = claim("kv_bytes_step", batch * mean_ctx * 2 * L * kvh * hd * 2, unit="B")
budget = claim(
    "vllm_budget", fact("vllm.gpu_memory_utilization_default", "util") * fact("h100_sxm.cuda_total_memory", "total"),
    unit="B",
)
max_kv = batch * (prompt + out_len) * 2 * L * kvh * hd * 2
claim("kv_bytes_at_full_length", max_kv, unit="B")
check(weights + max_kv < budget, "the batch fits at full length, not only at its mean")
model_bytes = claim("model_bytes_step", weights + kv, unit="B")
sampler_b = given(
    "sampler_bytes_per_element", 118, unit="B",
    source="this site's count of vLLM's native top-k/top-p sampler (sampler-hbm-bytes-128k-vocab)",
)
sampler_bytes = claim("sampler_bytes_step", sampler_b * elements, unit="B")
claim("penalty_share_of_step", engine_bytes / (model_bytes + sampler_bytes + engine_bytes), unit="fraction")
claim("penalty_over_sampler", engine_bytes / sampler_bytes, unit="fraction")

# %% [markdown]
# ## The incremental design's bytes
# Persistent int32 output counts per slot, a prompt bitmask per slot (1 bit per token), and one fused kernel
# that reads logits, counts and the bitmask and writes the logits once.

# %%
bit = claim("bit_bytes", 1 / 8, unit="B")
inc_b = claim("incremental_bytes_per_element", f32 + i32 + bit + f32, unit="B")
claim("slots", batch, unit="slots")
inc_bytes = claim("incremental_bytes_step", inc_b * elements, unit="B")
claim("engine_over_incremental", engine_bytes / inc_bytes, unit="x")
claim("resident_count_bytes", batch * vocab * i32, unit="B")
claim("prompt_bitmask_bytes_per_request", vocab / 8, unit="B")
claim("prompt_bitmask_bytes", batch * vocab / 8, unit="B")

# %% [markdown]
# ## One long request in the batch
# The output tensor is padded to the longest output in the batch, so one request at a long output makes
# every request ship that many int64 entries to the GPU each step.

# %%
long_out = given(
    "long_output_tokens", 32768, unit="tokens", source="the question's hypothetical long reasoning request"
)
pcie = fact("networking.pcie_gen5_x16", "pcie_gen5")
h2d_normal = claim("h2d_bytes_step", batch * out_len * i64, unit="B")
h2d_long = claim("h2d_bytes_step_long", batch * long_out * i64, unit="B")
claim("h2d_seconds_long", h2d_long / (pcie * 1e9), unit="s")
claim("padded_entries_long", batch * long_out, unit="elements")
check(weights + max_kv + long_out * 2 * L * kvh * hd * 2 < budget, "the long request's KV still fits")
print(engine_b, engine_bytes, model_bytes, inc_b, h2d_long)
