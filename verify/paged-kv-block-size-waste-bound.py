# %% [markdown]
# # Internal fragmentation of a paged KV cache
# A sequence of n tokens in blocks of b tokens holds ceil(n/b) blocks. Blocks fill in order and a new one
# is allocated only when the previous one is full, so only the last block can be partly empty: the waste
# is b*ceil(n/b) - n <= b - 1 tokens per sequence. Inputs: Llama-3.1-8B config (bf16 cache) and vLLM's
# default block size of 16 from the fact base; batch size and length distribution are an example.

# %%
import math
import random

from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_8b.num_hidden_layers", "layers")
kv_heads = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_8b.head_dim", "head_dim")
block = fact("vllm.block_size_default", "block_size")
seqs = given("batch_sequences", 256, unit="sequences", source="example batch for the worked numbers")
max_len = given("max_len_example", 4096, unit="tokens", source="example: lengths uniform in 1..4096")
long_ctx = fact("llama3_1_8b.max_position_embeddings", "long_context")
bytes_bf16 = given("bytes_bf16", 2, unit="B", source="bf16 stores 2 bytes per value")
partial = given("partial_blocks_per_seq", 1, unit="blocks", source="only the last block of a sequence can be "
    "partial (argument above)")
kv_tok = claim("kv_bytes_per_token", 2 * layers * kv_heads * head_dim * bytes_bf16, unit="B")
check(kv_tok == 128 * 2**10, "128 KiB per token")

# %% [markdown]
# ## The bound and the expectation
# Worst case b-1 tokens per sequence; if lengths are uniform modulo b, the mean is (b-1)/2.

# %%
worst_tok = claim("worst_waste_tokens_per_seq", block - 1, unit="slots")  # token slots
halves = given("uniform_mean_divisor", 2, source="the mean of a uniform distribution over 0..b-1 is (b-1)/2")
mean_tok = claim("mean_waste_tokens_per_seq", (block - partial) / halves, unit="slots")
worst_batch = claim("worst_waste_batch", seqs * worst_tok * kv_tok, unit="B")
mean_batch = claim("mean_waste_batch", seqs * mean_tok * kv_tok, unit="B")
check(worst_batch == 480 * 2**20, "480 MiB worst case for 256 sequences")

# simulate: the bound holds for every sequence and the mean matches (b-1)/2
rng = random.Random(0)
lengths = [rng.randint(1, int(max_len)) for _ in range(20000)]
waste = [block * math.ceil(n / block) - n for n in lengths]
check(max(waste) <= block - 1, "no sequence wastes more than b-1 tokens")
sim_mean = claim("simulated_mean_waste", sum(waste) / len(waste), unit="tokens")
check(abs(sim_mean - mean_tok) < 0.2, "simulated mean matches (b-1)/2")
mean_len = sum(lengths) / len(lengths)
sim_frac = claim("simulated_waste_fraction", sum(waste) / sum(lengths), unit="fraction")

# %% [markdown]
# ## The three-way trade across block sizes
# Waste grows with b; block-table entries per sequence shrink with b; a prefix cache that only reuses full
# blocks forfeits up to b-1 tokens of a shared prefix (recomputed per request). Bytes per block per layer
# per KV head (the contiguous unit a kernel loads) = b * head_dim * 2 B for K (same for V).

# %%
prepaged_used = given("prepaging_kv_used_low", 0.204, unit="fraction", source="Kwon et al., vLLM/PagedAttention, SOSP 2023, arXiv:2309.06180 §1: in existing systems only 20.4%-38.2% of the KV cache memory holds actual token states")
prepaged_used_hi = given("prepaging_kv_used_high", 0.382, unit="fraction", source="same: upper end of the range")
typical = given("typical_len", 2048, unit="tokens", source="example sequence length for the relative waste")
b_one = given("block_tokens_page1", 1, unit="tokens", source="SGLang RadixAttention's original page size of 1 "
    "token (facts: sglang.radix_attention_eviction note)")
b_big = given("block_tokens_large", 128, unit="tokens", source="example large block, as some attention backends prefer")
rows = {}
for b in (int(b_one), int(block), int(b_big)):
    rows[b] = {
        "worst": claim(f"worst_waste_b{b}", seqs * (b - 1) * kv_tok, unit="B"),
        "table": claim(f"table_entries_b{b}", math.ceil(long_ctx / b), unit="blocks"),
        "chunk": claim(f"bytes_per_block_head_b{b}", b * head_dim * 2, unit="B"),
        "mean_frac": claim(f"mean_frac_at_2k_b{b}", ((b - 1) / 2) / typical, unit="fraction"),
    }
sliding_worst = claim("sliding_window_worst_tokens", 2 * (block - 1), unit="tokens")
check(rows[128]["worst"] > 3.9 * 2**30, "block 128 can strand almost 4 GiB at 256 sequences")
print({b: {k: v for k, v in r.items()} for b, r in rows.items()})
print(sim_mean, sim_frac, mean_len)
