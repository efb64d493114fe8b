# %% [markdown]
# # What a shared prefix cache leaks through time-to-first-token, and what closes it
# Model and node: Llama-3.1-70B, tensor-parallel over the eight GPUs of one H100 box, served by vLLM;
# prefill time per token at an assumed MFU, with attention at the token's position. A hit on a block saves that block's prefill; the attacker sees the saving in TTFT.
# vLLM caches only full 16-token blocks and chains their hashes; SGLang's radix tree matched single tokens in
# its original design (page size 1). Each probe caches its own guess, so a candidate can be measured once per
# eviction cycle: the attacker gets single-shot measurements.

# %%
import math

from dense_llama import llama

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_70b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
block = fact("vllm.block_size_default", "block_size")
bf16 = fact("h100_sxm.bf16_dense", "h100_bf16")
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: TP=8 on one H100 node")
mfu = given("prefill_mfu", 0.5, unit="fraction", source="assumption: achieved share of dense BF16 peak in prefill")
secret_pos = given(
    "secret_position",
    1000,
    unit="tokens",
    source="the question's hypothetical: the secret sits 1,000 tokens into the victim's prompt",
)
doc = given("document_tokens", 2000, unit="tokens", source="the question's hypothetical: a 2,000-token document")
digits = given("code_digits", 6, source="the question's hypothetical: a 6-digit account code in a known template")
group = given(
    "digits_per_token_max",
    3,
    source="github:meta-llama/llama3 llama/tokenizer.py pat_str '\\p{N}{1,3}': digits are pre-tokenized in groups "
    "of at most 3, so no token spans more than 3 digits",
)
jitter = given(
    "ttft_jitter",
    5e-3,
    unit="s",
    source="the question's hypothetical: 5 ms standard deviation of "
    "TTFT seen by a remote client (network plus batching)",
)
rate = given(
    "probe_rate",
    50,
    unit="requests",
    source="the question's hypothetical: 50 requests/s under the attacker's rate limit",
)
tenants = given("tenants", 50, source="the question's hypothetical: 50 tenants active on the replica")
sys_len = given(
    "system_prompt_tokens",
    6000,
    unit="tokens",
    source="the question's hypothetical: a 6,000-token system prompt every tenant uses",
)

# %% [markdown]
# ## Signal: what a hit saves

# %%
params = m.params
rate_flops = tp * mfu * bf16 * 1e12


def prefill_time(start: float, end: float) -> float:
    """Seconds to prefill positions [start, end) (dense layers plus causal attention)."""
    return m.prefill_flops(start, end) / rate_flops


per_block = claim("block_hit_saving", prefill_time(secret_pos, secret_pos + block), unit="s")
per_token = claim("token_hit_saving", prefill_time(secret_pos, secret_pos + 1), unit="s")
doc_gain = claim("document_hit_saving", prefill_time(0, doc), unit="s")
# A block's saving is priced at the compute rate: its marginal cost inside a compute-bound step. Alone on an idle
# replica, a 16-token prefill's GEMMs are bound by the weight read, which does not depend on the token count.
hbm_bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
floor = claim("weight_read_per_step", 2 * params / (tp * hbm_bw * 1e12), unit="s")
check(per_block < floor, "a lone block's prefill is weight-read bound: the compute-rate saving is an upper bound")
z_block = claim("block_signal_over_jitter", per_block / jitter)
z_doc = claim("document_signal_over_jitter", doc_gain / jitter)
check(z_block < 0.5 and z_doc > 10, "a block is buried in jitter, a whole document is not")


def single_shot_error(z: float) -> float:
    """Error of a threshold halfway between hit and miss, one sample each side, Gaussian jitter."""
    return 0.5 * math.erfc(z / 2 / math.sqrt(2))


claim("block_single_shot_error", single_shot_error(z_block), unit="fraction")
claim("document_single_shot_error", single_shot_error(z_doc), unit="fraction")

# %% [markdown]
# ## Search cost: token-granular against block-granular caches

# %%
tokens_in_code = claim("code_tokens", math.ceil(digits / group), unit="tokens")
per_tok_candidates = claim("candidates_per_token", 10**group)
token_level = claim("probes_token_level", tokens_in_code * 10**group, unit="requests")
same_block = claim("same_block_probability", (block - (tokens_in_code - 1)) / block, unit="fraction")
block_level = claim("probes_block_level", 10**digits, unit="requests")
claim("hours_block_level", block_level / rate / 3600, unit="h")
claim("seconds_token_level", token_level / rate, unit="s")
claim("blind_block_candidates", float(vocab) ** block)
sglang_page = given(
    "sglang_page_tokens",
    1,
    unit="tokens",
    source="SGLang paper arXiv:2312.07104, RadixAttention: the radix tree matches at token granularity (facts: "
    "sglang.radix_attention_eviction note 'page size 1 token in the original design')",
)
claim("block_vs_token_probes", block_level / token_level, unit="x")

# %% [markdown]
# ## The price of isolation: per-tenant salts and a shared system prompt

# %%
kv_tok = 2 * layers * nkv * hd * 2
prefix_bytes = claim("prefix_kv_bytes", sys_len * kv_tok, unit="B")
claim("salted_prefix_bytes", tenants * prefix_bytes, unit="B")
claim("salted_extra_bytes", (tenants - 1) * prefix_bytes, unit="B")
claim("first_prefill_per_tenant", prefill_time(0, sys_len), unit="s")
