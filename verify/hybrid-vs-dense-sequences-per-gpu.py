# %% [markdown]
# # How many sequences fit: Nemotron-H-8B (hybrid) against Llama-3.1-8B (dense) on one H100
# Nemotron-H-8B-Base-8K's config.json (NVIDIA's HF release, read through its verbatim copy in
# NVIDIA-NeMo/Megatron-Bridge's unit test of the NemotronH bridge): 52 layers described by
# hybrid_override_pattern (M = Mamba-2 mixer, * = attention, - = MLP), 128 Mamba heads of head_dim 64,
# n_groups 8, ssm_state_size 128, conv_kernel 4; attention 32 Q / 8 KV heads of 128.
# vLLM's per-layer Mamba-2 state (vllm/model_executor/layers/mamba/mamba_utils.py, mamba2_state_shape):
# conv state (conv_kernel - 1) x (d_inner + 2 * n_groups * d_state), SSM state n_heads x head_dim x d_state;
# both in the model dtype unless --mamba-ssm-cache-dtype says otherwise (MambaStateDtypeCalculator).

# %%
import math

from model_shapes import dense_decoder_params, mamba2_state_bytes, nemotron_h_params

from qbank.verify import check, claim, fact, given

pattern = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"  # hybrid_override_pattern (facts: nemotron_h_8b.num_hidden_layers note)
n_layers = fact("nemotron_h_8b.num_hidden_layers", "nh_layers")
check(len(pattern) == n_layers, "the pattern has one character per layer")
mamba_layers = claim("nh_mamba_layers", pattern.count("M"), unit="layers")
attn_layers = claim("nh_attention_layers", pattern.count("*"), unit="layers")
mlp_layers = claim("nh_mlp_layers", pattern.count("-"), unit="layers")
hidden = fact("nemotron_h_8b.hidden_size", "nh_hidden")
m_heads = fact("nemotron_h_8b.mamba_num_heads", "nh_mamba_heads")
m_head_dim = fact("nemotron_h_8b.mamba_head_dim", "nh_mamba_head_dim")
n_groups = fact("nemotron_h_8b.n_groups", "nh_groups")
d_state = fact("nemotron_h_8b.ssm_state_size", "nh_d_state")
d_conv = fact("nemotron_h_8b.conv_kernel", "nh_conv_kernel")
nh_kv_heads = fact("nemotron_h_8b.num_key_value_heads", "nh_kv_heads")
nh_head_dim = fact("nemotron_h_8b.attention_head_dim", "nh_attn_head_dim")
nh_ffn = fact("nemotron_h_8b.intermediate_size", "nh_ffn")
nh_vocab = fact("nemotron_h_8b.vocab_size", "nh_vocab")
nh_ctx = fact("nemotron_h_8b.max_position_embeddings", "nh_max_context")
bf16 = fact("nemotron_h_8b.state_dtype_bytes", "bf16_bytes")
fp32 = given("fp32_bytes", 4, unit="B", source="FP32 is 4 bytes (--mamba-ssm-cache-dtype float32)")

# %% [markdown]
# ## Per-sequence state of the hybrid, per vLLM's state shapes

# %%
d_inner = claim("nh_d_inner", m_heads * m_head_dim, unit="dims")
conv_dim = claim("nh_conv_dim", d_inner + 2 * n_groups * d_state, unit="dims")
conv_b, ssm_b = mamba2_state_bytes(m_heads, m_head_dim, d_state, n_groups, d_conv, ssm_bytes=bf16, conv_bytes=bf16)
ssm_layer = claim("nh_ssm_state_per_layer", ssm_b, unit="B")
conv_inputs = claim("conv_inputs", d_conv - 1)
conv_layer = claim("nh_conv_state_per_layer", conv_b, unit="B")
state_seq = claim("nh_state_per_seq", mamba_layers * (ssm_layer + conv_layer), unit="B")
state_seq_fp32 = claim("nh_state_per_seq_fp32", mamba_layers * (ssm_layer * fp32 / bf16 + conv_layer), unit="B")
nh_kv_tok = claim("nh_kv_per_token", attn_layers * 2 * nh_kv_heads * nh_head_dim * bf16, unit="B")
check(d_inner == 2 * hidden, "d_inner = expand (2) x hidden")
check(ssm_layer == 2 * 2**20, "2 MiB of SSM state per Mamba layer in BF16")
check(nh_kv_tok == 16 * 2**10, "16 KiB of KV per token over the 4 attention layers")
state_in_tokens = claim("nh_state_in_own_kv_tokens", state_seq / nh_kv_tok, unit="tokens")

# %% [markdown]
# ## The dense baseline: Llama-3.1-8B

# %%
l_layers = fact("llama3_1_8b.num_hidden_layers", "l_layers")
l_hidden = fact("llama3_1_8b.hidden_size", "l_hidden")
l_heads = fact("llama3_1_8b.num_attention_heads", "l_heads")
l_kv = fact("llama3_1_8b.num_key_value_heads", "l_kv_heads")
l_hd = fact("llama3_1_8b.head_dim", "l_head_dim")
l_ffn = fact("llama3_1_8b.intermediate_size", "l_ffn")
l_vocab = fact("llama3_1_8b.vocab_size", "l_vocab")
l_kv_tok = claim("llama_kv_per_token", 2 * l_layers * l_kv * l_hd * bf16, unit="B")
l_params = dense_decoder_params(l_layers, l_hidden, l_heads, l_kv, l_hd, l_ffn, l_vocab)
kv_ratio = claim("kv_ratio", l_kv_tok / nh_kv_tok, unit="x")
llama_params = claim("llama_params", l_params, unit="params")
llama_weights = claim("llama_weight_bytes", l_params * bf16, unit="B")

# %% [markdown]
# ## Nemotron-H-8B's parameters from the same config (model_shapes.nemotron_h_params, block by block)

# %%
nh_q_heads = fact("nemotron_h_8b.num_attention_heads", "nh_q_heads")
nh_p = nemotron_h_params(mamba_layers, attn_layers, mlp_layers, hidden, m_heads, m_head_dim, n_groups, d_state,
                         d_conv, nh_q_heads, nh_kv_heads, nh_head_dim, nh_ffn, nh_vocab)
nh_params = claim("nh_params", nh_p, unit="params")
nh_weights = claim("nh_weight_bytes", nh_p * bf16, unit="B")
check(8.0e9 < nh_p < 8.2e9, "about 8.1B parameters, as the model's name says")
check(nh_p == fact("derived.nemotron_h_8b_params", "nh_params_fact"), "the facts file's derived count is this count")

# %% [markdown]
# ## The pool on one H100 80GB, vLLM V1 accounting
# requested = gpu_memory_utilization x cudaMemGetInfo total; minus weights and a runtime overhead
# (activation peak + non-torch + CUDA-graph pool) that vLLM measures at startup: an example figure here.

# %%
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
util = fact("vllm.gpu_memory_utilization_default", "util")
overhead = given("runtime_overhead", 3.0e9, unit="B", source="the question's hypothetical: activation peak + "
                 "non-torch + CUDA-graph pool; vLLM measures the first two and estimates the third "
                 "(gpu_worker.determine_available_memory); read your own from the startup log")
requested = claim("requested", cuda_total * util, unit="B")
pool_llama = claim("pool_llama", requested - llama_weights - overhead, unit="B")
pool_nh = claim("pool_nh", requested - nh_weights - overhead, unit="B")

# %% [markdown]
# ## Sequences that fit, by length (ideal packing, before block rounding)

# %%
def fits(pool: float, fixed: float, per_token: float, length: float) -> int:
    return math.floor(pool / (fixed + per_token * length))


for n in (512, 2048, 8192):
    ln = n if n == nh_ctx else given(f"len_{n}", n, unit="tokens", source="the question's hypothetical length")
    a = claim(f"llama_seqs_{n}", fits(pool_llama, 0, l_kv_tok, ln), unit="sequences")
    b = claim(f"nh_seqs_{n}", fits(pool_nh, state_seq, nh_kv_tok, ln), unit="sequences")
    r = claim(f"nh_over_llama_{n}", b / a, unit="x")
    print(f"{n:>5} tokens: Llama {a:.0f}, Nemotron-H {b:.0f} ({r:.2f}x)")

# where the hybrid stops winning: state + 16 KiB * L = 128 KiB * L
kv_diff = claim("kv_diff", l_kv_tok - nh_kv_tok, unit="B")
cross = claim("crossover_tokens", state_seq / (l_kv_tok - nh_kv_tok), unit="tokens")
cross32 = claim("crossover_tokens_fp32", state_seq_fp32 / (l_kv_tok - nh_kv_tok), unit="tokens")
short = given("short_len", 256, unit="tokens", source="the question's hypothetical short request (classification,"
              " routing)")
ll_short = claim("llama_seqs_short", fits(pool_llama, 0, l_kv_tok, short), unit="sequences")
nh_short = claim("nh_seqs_short", fits(pool_nh, state_seq, nh_kv_tok, short), unit="sequences")
check(nh_short < ll_short, "below the crossover the dense model fits more sequences")
state_share_8k = claim("state_share_at_8k", state_seq / (state_seq + nh_kv_tok * nh_ctx), unit="fraction")
print(f"crossover {cross:.0f} tokens (fp32 SSM state: {cross32:.0f}); at 256 tokens Llama {ll_short:.0f} vs "
      f"Nemotron-H {nh_short:.0f}")

# %% [markdown]
# ## The same counts as vLLM allocates them: 528-token attention blocks, Mamba pages padded to match
# (page unification, vllm/model_executor/models/config.py HybridAttentionMambaModelConfig; see
# vllm-hybrid-attention-block-528-tokens). Llama keeps 16-token blocks, which 256 and 512 fill exactly.

# %%
align = given("kernel_block_alignment", 16, unit="tokens", source="vLLM kernel_block_alignment_size = 16 "
              "(HybridAttentionMambaModelConfig.verify_and_update_config)")
attn_layer_tok = nh_kv_tok / attn_layers
blk = claim("nh_block_tokens", align * math.ceil((ssm_layer + conv_layer) / (align * attn_layer_tok)), unit="tokens")
padded_state = claim("nh_state_per_seq_padded", mamba_layers * blk * attn_layer_tok, unit="B")


def nh_alloc(length: float) -> float:
    return padded_state + math.ceil(length / blk) * blk * nh_kv_tok


nh_short_vllm = claim("nh_seqs_short_vllm", math.floor(pool_nh / nh_alloc(short)), unit="sequences")
dense_block = given("dense_block", 16, unit="tokens", source="vllm/config/cache.py DEFAULT_BLOCK_SIZE = 16")
check(short % dense_block == 0, "Llama's 16-token blocks hold 256 tokens exactly: no rounding on the dense side")
cross_vllm = claim("crossover_tokens_vllm", nh_alloc(blk) / l_kv_tok, unit="tokens")
check(cross_vllm < blk, "under vLLM's accounting the crossover still falls inside the first 528-token block")

# %% [markdown]
# ## The scheduler's cap: vLLM's default max_num_seqs on an H100
# vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: on a GPU with >= 70 GiB that is not an A100,
# max_num_seqs defaults to 1024 (LLM class and OpenAI server alike). Short dense requests hit it first.

# %%
cap = given("max_num_seqs_h100", 1024, unit="sequences", source="vllm/engine/arg_utils.py "
            "EngineArgs.get_batch_defaults: device_memory >= 70 GiB and not A100 -> default_max_num_seqs 1024")
ll_short_run = claim("llama_seqs_short_running", min(ll_short, cap), unit="sequences")
check(ll_short > cap > nh_short_vllm, "at 256 tokens the cap binds the dense model, not the hybrid")
claim("dense_over_hybrid_short_running", ll_short_run / nh_short_vllm, unit="x")
claim("dense_over_hybrid_short_memory", ll_short / nh_short, unit="x")
