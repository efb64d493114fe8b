# %% [markdown]
# # Storing the recurrent state in BF16, FP16 or FP32: what rounding every step does
# The state is read, updated and written back every decode step, so its storage dtype rounds it once per token:
#   h_t = round( exp(dt_t A) h_{t-1} + dt_t x_t B_t^T ),   y_t = h_t C_t
# Attention's KV is written once and never re-rounded; a recurrent state is re-rounded T times. We run one
# Nemotron-H-shaped head (head_dim 64, d_state 128) for 4,096 tokens with the state kept in each dtype, against a
# float64 reference. dt and A are drawn from Mamba-2's initialisation ranges (state-spaces/mamba
# mamba_ssm/modules/mamba2.py: A_init_range=(1, 16), dt_min=0.001, dt_max=0.1): an assumed regime, not a trained
# model's values; the slow heads (small dt, |A| = 1) are the ones that remember, and the ones rounding hurts.
# vLLM keeps the SSM state in the model dtype unless --mamba-ssm-cache-dtype says otherwise
# (vllm/model_executor/layers/mamba/mamba_utils.py @02d71083, MambaStateDtypeCalculator._mamba_state_dtype);
# for Nemotron-H, vllm/model_executor/models/config.py NemotronHForCausalLMConfig (in MODELS_CONFIG_MAP from the
# v0.16.0 API docs) replaces 'auto' with the HF config's mamba_ssm_cache_dtype, or float16 when it names none.

# %%
import math

import torch
from model_shapes import mamba2_state_bytes

from qbank.verify import check, claim, fact, given

P = fact("nemotron_h_8b.mamba_head_dim", "head_dim")
N = fact("nemotron_h_8b.ssm_state_size", "d_state")
T = int(given("tokens", 4096, unit="tokens", source="the question's hypothetical: a 4K-token decode"))
SRC = "state-spaces/mamba mamba_ssm/modules/mamba2.py Mamba2.__init__ defaults"
a_slow = given("a_slow", 1.0, source=SRC + ": A_init_range=(1, 16), lower end (slowest decay)")
a_fast = given("a_fast", 16.0, source=SRC + ": A_init_range=(1, 16), upper end")
dt_min = given("dt_min", 0.001, source=SRC + ": dt_min=0.001")
dt_max = given("dt_max", 0.1, source=SRC + ": dt_max=0.1")
torch.manual_seed(0)
heads = torch.tensor([a_slow, 4.0, a_fast], dtype=torch.float64)  # |A| per head; 4 is a midpoint of the range
H = len(heads)
log_dt = torch.empty(T, H, dtype=torch.float64).uniform_(math.log(dt_min), math.log(dt_max))
dt = torch.exp(log_dt)
x = torch.randn(T, H, int(P), dtype=torch.float64)
B = torch.randn(T, int(N), dtype=torch.float64) / math.sqrt(N)
C = torch.randn(T, int(N), dtype=torch.float64) / math.sqrt(N)


def run(store: torch.dtype | None) -> tuple[torch.Tensor, torch.Tensor]:
    h = torch.zeros(H, int(P), int(N), dtype=torch.float64)
    ys = []
    for t in range(T):
        h = torch.exp(-dt[t] * heads)[:, None, None] * h + dt[t][:, None, None] * x[t][:, :, None] * B[t][None, None, :]
        if store is not None:
            h = h.to(store).to(torch.float64)  # written back to the cache in the storage dtype
        ys.append(torch.einsum("hpn,n->hp", h, C[t]))
    return torch.stack(ys), h


TAIL = int(given("tail_tokens", 512, unit="tokens", source="measurement window at the end of the run"))
y_ref, h_ref = run(None)
errs = {}
for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)):
    y, h = run(dtype)
    tail = slice(T - TAIL, T)
    per_head = ((y[tail] - y_ref[tail]).norm(dim=(0, 2)) / y_ref[tail].norm(dim=(0, 2)))
    errs[name] = per_head
    print(name, [f"{float(e):.2e}" for e in per_head])

# %% [markdown]
# ## Relative error of the outputs over the last 512 tokens, per head (slow |A| = 1, fast |A| = 16)

# %%
e32_slow = claim("err_fp32_slow", float(errs["fp32"][0]), unit="fraction")
e16_slow = claim("err_bf16_slow", float(errs["bf16"][0]), unit="fraction")
e16_fast = claim("err_bf16_fast", float(errs["bf16"][2]), unit="fraction")
eh_slow = claim("err_fp16_slow", float(errs["fp16"][0]), unit="fraction")
ratio = claim("bf16_over_fp32_slow", e16_slow / e32_slow, unit="x")
slow_over_fast = claim("bf16_slow_over_fast", e16_slow / e16_fast, unit="x")
check(e16_slow > 2 * e16_fast, "rounding hurts the slow (long-memory) head most")
bf_over_fp16 = claim("bf16_over_fp16_slow", e16_slow / eh_slow, unit="x")
check(e16_slow > 1e-3 and e32_slow < 1e-5, "BF16 state error is visible, FP32's is not")
mem_slow = claim("slow_head_memory_tokens", 1 / (a_slow * math.exp((math.log(dt_min) + math.log(dt_max)) / 2)),
                 unit="tokens")
bf16_eps = claim("bf16_unit_roundoff", 2.0 ** -9, unit="fraction")
bf16_bits = given("bf16_mantissa_bits", 7, unit="bit", source="bfloat16: 8 exponent, 7 explicit mantissa bits")
fp16_bits = given("fp16_mantissa_bits", 10, unit="bit", source="IEEE 754 binary16: 10 explicit mantissa bits")
extra_bits = claim("extra_mantissa_bits", fp16_bits - bf16_bits, unit="bit")
fp32_eps = claim("fp32_unit_roundoff", 2.0 ** -24, unit="fraction")

# %% [markdown]
# ## The memory price of an FP32 state (Nemotron-H-8B, per sequence, vLLM's shapes)

# %%
m_layers = fact("nemotron_h_8b.mamba_layers", "mamba_layers")
heads_n = fact("nemotron_h_8b.mamba_num_heads", "mamba_heads")
state_b = fact("nemotron_h_8b.state_dtype_bytes", "state_bytes")
fp32_b = given("fp32_bytes", 4, unit="B", source="FP32 is 4 bytes (--mamba-ssm-cache-dtype float32)")
ssm_bf16 = claim("ssm_state_bf16", m_layers * heads_n * P * N * state_b, unit="B")
ssm_fp32 = claim("ssm_state_fp32", m_layers * heads_n * P * N * fp32_b, unit="B")
kv_tok = claim("kv_per_token", fact("nemotron_h_8b.attention_layers", "attention_layers") * 2
               * fact("nemotron_h_8b.num_key_value_heads", "kv_heads")
               * fact("nemotron_h_8b.attention_head_dim", "attn_head_dim") * state_b, unit="B")
ctx = given("context", 2048, unit="tokens", source="the question's hypothetical request length")
groups = fact("nemotron_h_8b.n_groups", "groups")
d_conv = fact("nemotron_h_8b.conv_kernel", "conv_kernel")
conv = m_layers * mamba2_state_bytes(heads_n, P, N, groups, d_conv, conv_bytes=state_b)[0]
seq_bf16 = ssm_bf16 + conv + kv_tok * ctx
seq_fp32 = ssm_fp32 + conv + kv_tok * ctx
fewer = claim("fewer_sequences_fp32", 1 - seq_bf16 / seq_fp32, unit="fraction")
