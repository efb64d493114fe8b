# %% [markdown]
# # NSA's decode reads against what the cache still has to hold
# NSA (Native Sparse Attention, arXiv:2502.11089) hyperparameters from its §4.1: compression block 32, stride 16,
# selected blocks of 64 tokens, 16 selected blocks, sliding window 512. Tokens of KV read per decode step at
# context s: s/stride (compressed) + n * l' (selected) + w (window), the count its decoding table reports; at 64K
# it gives the 11.6x it quotes. Applied here, as a hypothetical, to Llama-3.1-70B's KV shape on 8 H100s (TP8) so
# the bytes are concrete.

# %%
from qbank.verify import check, claim, fact, given

SRC = "NSA arXiv:2502.11089 §4.1"
stride = given("compress_stride", 16, unit="tokens", source=SRC + ": sliding stride d = 16")
cblock = given("compress_block", 32, unit="tokens", source=SRC + ": compression block l = 32")
sel_block = given("select_block", 64, unit="tokens", source=SRC + ": selected block size l' = 64")
n_sel = given("selected_blocks", 16, unit="blocks", source=SRC + ": n = 16 selected blocks")
window = given("window", 512, unit="tokens", source=SRC + ": sliding window w = 512")
quoted = given(
    "nsa_quoted_64k_speedup", 11.6, unit="x", source="NSA arXiv:2502.11089: decoding speedup up to 11.6x at 64K"
)


def read_tokens(s: float) -> float:
    """Tokens' worth of KV a decode step reads at context s."""
    return s / stride + n_sel * sel_block + window


for label, s in (("8k", 8192), ("64k", 65536), ("128k", 131072)):
    given(f"ctx_{label}", s, unit="tokens", source="context sweep point")
    claim(f"nsa_read_tokens_{label}", read_tokens(s), unit="tokens")
    claim(f"nsa_read_ratio_{label}", s / read_tokens(s), unit="x")
check(abs(65536 / read_tokens(65536) - quoted) < 0.05, "the formula reproduces NSA's 11.6x at 64K")
claim("selected_tokens", n_sel * sel_block, unit="tokens")
claim("compressed_share_128k", 131072 / stride / read_tokens(131072), unit="fraction")

# %% [markdown]
# ## Bytes stored: the full cache stays, the compressed keys are extra
# Selection is per query and changes every step, so no token of the full cache can be dropped. The compressed
# keys and values (one per stride) are taken as cached at the full K/V width: an assumption about the layout.

# %%
L = fact("llama3_1_70b.num_hidden_layers", "layers")
kvh = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn")
d = fact("llama3_1_70b.hidden_size", "hidden")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
util = fact("vllm.gpu_memory_utilization_default", "gpu_util")
total = fact("h100_sxm.cuda_total_memory", "cuda_total")
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: one HGX H100 node, TP8")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes per element")
ctx = 131072
kv_tok_gpu = 2 * L * kvh * hd * bf16 / tp
store_full = claim("kv_stored_per_seq_gpu", ctx * kv_tok_gpu, unit="B")
store_nsa = claim("nsa_stored_per_seq_gpu", ctx * kv_tok_gpu * (1 + 1 / stride), unit="B")
claim("nsa_storage_overhead", 1 / stride, unit="fraction")
params = L * (2 * d * d + 2 * d * kvh * hd + 3 * d * ffn) + 2 * vocab * d
w_gpu = params * bf16 / tp
pool = util * total - w_gpu
seqs_full = claim("seqs_full", int(pool // store_full), unit="sequences")
seqs_nsa = claim("seqs_nsa", int(pool // store_nsa), unit="sequences")
check(seqs_nsa <= seqs_full, "sparse reads do not raise the batch that fits; the compressed keys can lower it")
claim("seqs_lost", seqs_full - seqs_nsa, unit="sequences")

# %% [markdown]
# ## Step time at that batch: reads shrink, the batch does not grow

# %%
read_full = w_gpu + seqs_full * store_full
read_nsa = w_gpu + seqs_nsa * read_tokens(ctx) * kv_tok_gpu  # window + selected + compressed tokens
t_full = claim("step_full", read_full / (bw * 1e12), unit="s")
t_nsa = claim("step_nsa", read_nsa / (bw * 1e12), unit="s")
claim("step_speedup", t_full / t_nsa, unit="x")
claim("tps_full", seqs_full / t_full, unit="tokens/s")
claim("tps_nsa", seqs_nsa / t_nsa, unit="tokens/s")
claim("weight_share_nsa_step", w_gpu / read_nsa, unit="fraction")

# %% [markdown]
# ## Why not keep the full cache in host memory and fetch the selected blocks?
# The selected set changes every step; a sequence's per-step reads would cross PCIe.

# %%
pcie = fact("networking.pcie_gen5_x16", "pcie_gbs")
# Only the selected blocks need to cross PCIe: the window and the compressed keys are small enough to stay in HBM.
sel_tokens = n_sel * sel_block
per_seq_fetch = claim("fetch_bytes_per_seq_step", sel_tokens * kv_tok_gpu, unit="B")
fetch_t = claim("fetch_time_per_seq_step", per_seq_fetch / (pcie * 1e9), unit="s")
hbm_t = claim("hbm_time_per_seq_step", per_seq_fetch / (bw * 1e12), unit="s")
claim("pcie_over_hbm", bw * 1e12 / (pcie * 1e9), unit="x")
# each GPU fetches its own KV head's share over its own link, in parallel, so the node's decode rate can never exceed
# one token per sequence per fetch time, whatever batch the freed HBM would admit
pcie_cap = claim("pcie_bound_tokens_per_s", 1 / fetch_t, unit="tokens/s")
check(pcie_cap < seqs_nsa / t_nsa, "the PCIe ceiling is below what HBM-resident NSA already delivers")
claim("resident_over_pcie_cap", seqs_nsa / t_nsa / pcie_cap, unit="x")
print(read_tokens(131072), seqs_full, t_full, t_nsa, per_seq_fetch, fetch_t, hbm_t, pcie_cap)
