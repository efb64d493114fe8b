# %% [markdown]
# # Gathering paged KV through a block table
# Cache layout per layer (K or V): [num_blocks, block_size, H_kv, D]; a request's block table maps its
# logical blocks to physical ones, -1 where there is none (a hole). The kernel (verify/_lib/
# paged_gather_kernel.py) writes token t of sequence b from cache[table[b, t // bs], t % bs] when
# t < seq_len and the entry is not a hole, zero otherwise. Checked through the interpreter on a toy
# cache; then the bytes for Llama-3.1-70B.

# %%
import torch
from paged_gather_kernel import gather_bytes, paged_gather, paged_gather_ignoring_holes, paged_gather_reference

from qbank.verify import check, claim, device, fact, given, triton_check

g = torch.Generator().manual_seed(5)
toy_blocks = int(given("toy_blocks", 12, unit="blocks", source="toy physical pool for the interpreter check"))
toy_bs = int(given("toy_block_size", 4, unit="tokens", source="toy block size"))
cache = torch.randn(toy_blocks, toy_bs, 2, 8, generator=g)
table = torch.tensor([[3, 7, -1, 5], [0, 11, 2, -1], [9, -1, -1, -1]], dtype=torch.int32)
lens = torch.tensor([14, 10, 3], dtype=torch.int32)
live_tokens = int(lens.sum())
triton_check("paged_gather", paged_gather, paged_gather_reference, cache, table, lens,
             bytes_moved=gather_bytes(live_tokens, 2, 8, 4))
triton_check("paged_gather_ignoring_holes", paged_gather_ignoring_holes, paged_gather_reference, cache, table, lens,
             expect_mismatch=True)
out = paged_gather_reference(cache, table, lens)
check(not out[0, 8:12].any(), "the hole in sequence 0's table (logical block 2) reads as zeros")
check(not out[1, 10:].any() and not out[2, 3:].any(), "positions past each sequence's length are zero")
naive = cache[table.long()]  # what plain PyTorch indexing does with the same table
check(torch.equal(naive[0, 2], cache[toy_blocks - 1]),
      "cache[table] reads a -1 entry as the last physical block: another request's keys")

# %% [markdown]
# ## Llama-3.1-70B: bytes per token, per block, and for a 32k-token gather

# %%
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
block = fact("vllm.block_size_default", "block_size")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
tp = given("tp_gpus", 8, unit="GPUs", source="example: tensor parallel over one 8-GPU HGX H100 node")
ctx = given("context_tokens", 32768, unit="tokens", source="example long context")
kv_tok = claim("kv_bytes_per_token", 2 * layers * kv_heads * head_dim * bf16, unit="B")
claim("kv_heads_per_gpu", kv_heads / tp, unit="heads")
row_gpu = claim("row_bytes_per_gpu", kv_heads / tp * head_dim * bf16, unit="B")
block_run = claim("block_bytes_per_gpu", block * row_gpu, unit="B")
n_blocks = claim("blocks_per_request", ctx / block, unit="blocks")
table_b = claim("table_bytes_per_request", n_blocks * 4, unit="B")
kv_ctx = claim("kv_bytes_context", ctx * kv_tok, unit="B")
gather_all = claim("gather_bytes_context", gather_bytes(ctx, 2 * layers * kv_heads, head_dim, bf16), unit="B")
gather_gpu = claim("gather_bytes_per_gpu", gather_all / tp, unit="B")
bw = fact("h100_sxm.hbm_bandwidth", "h100_hbm_bandwidth") * 1e12
gather_s = claim("gather_seconds_per_gpu", gather_gpu / bw, unit="s")
attend_s = claim("attend_read_seconds_per_gpu", kv_ctx / tp / bw, unit="s")
check(gather_all == 2 * kv_ctx, "a gather reads every byte once and writes it once")

# %% [markdown]
# ## Gather-then-attend against attending through the table, per decode step
# Paged attention reads the context's KV once per step. Gathering first reads it, writes a copy and
# reads the copy: three passes.

# %%
passes_paged = given("passes_paged", 1, unit="x", source="paged attention reads each KV byte once per step")
passes_gather = claim("passes_gather_then_attend", (gather_all + kv_ctx) / kv_ctx, unit="x")
check(passes_gather == 3 * passes_paged, "gather-then-attend moves three times the bytes")
link = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
wire_s = claim("wire_seconds_per_gpu", kv_ctx / tp / (link * 1e9 / 8), unit="s")
check(wire_s > 20 * gather_s, "packing the send buffer is small beside the network transfer it feeds")

# %% [markdown]
# ## The kernel at the size that is timed on a GPU
# Compiled on a GPU, this check gathers one layer's K for 8 sequences of the 32k-token context above,
# on one GPU's share (1 KV head of 128 dims, bf16, vLLM's 16-token blocks) from a shuffled pool, so the
# page's bandwidth is the production gather's. Through the interpreter it is a toy of 2 short sequences.

# %%
on_gpu = device() == "cuda" and torch.cuda.is_available()
timed_seqs = given("timed_sequences", 8, unit="requests", source="example batch of long contexts, timed on a GPU only")
seqs_t, ctx_t, bs_t = (int(timed_seqs), int(ctx), int(block)) if on_gpu else (2, 24, toy_bs)
heads_t, dim_t = (int(kv_heads / tp), int(head_dim)) if on_gpu else (2, 8)
blocks_t = seqs_t * ctx_t // bs_t
pool = torch.randn(blocks_t + 64, bs_t, heads_t, dim_t, generator=g).to(torch.bfloat16)
shuffled = torch.randperm(blocks_t + 64, generator=g)[:blocks_t].to(torch.int32).reshape(seqs_t, -1)
full = torch.full((seqs_t,), ctx_t, dtype=torch.int32)
triton_check("paged_gather_batch", paged_gather, paged_gather_reference, pool, shuffled, full,
             bytes_moved=gather_bytes(seqs_t * ctx_t, heads_t, dim_t, 2))
print(kv_tok, row_gpu, block_run, n_blocks, table_b, kv_ctx, gather_all, gather_gpu, gather_s, attend_s, wire_s)
