# %% [markdown]
# # Sharding a Mamba-2 layer's state over tensor-parallel ranks
# vLLM's per-rank Mamba-2 state (vllm/model_executor/layers/mamba/mamba_utils.py @02d71083,
# MambaStateShapeCalculator.mamba2_state_shape): heads and groups are split over the TP ranks; if n_groups is not
# divisible by the TP size, extra_groups_for_head_shards adds tp - n_groups replicated groups "to ensure all
# groups needed by a head is sharded along with it". Conv state per rank: (conv_kernel - 1) x
# (d_inner + 2 * n_groups' * d_state) / tp; SSM state per rank: (heads / tp) x head_dim x d_state.
# Attention layers: KV heads split over ranks, at least one per rank (replicated once tp > n_kv).
# Page unification (vLLM v0.18.1 HybridAttentionMambaModelConfig): attention block = 16 * cdiv(mamba_page,
# 16 * attn_bytes_per_token), per rank. Model: Nemotron-H-8B (facts).

# %%
import math

from model_shapes import extra_groups, mamba2_state_bytes

from qbank.verify import check, claim, fact, given

m_layers = fact("nemotron_h_8b.mamba_layers", "mamba_layers")
heads = fact("nemotron_h_8b.mamba_num_heads", "heads")
hd = fact("nemotron_h_8b.mamba_head_dim", "head_dim")
groups = fact("nemotron_h_8b.n_groups", "groups")
d_state = fact("nemotron_h_8b.ssm_state_size", "d_state")
d_conv = fact("nemotron_h_8b.conv_kernel", "conv_kernel")
kv_heads = fact("nemotron_h_8b.num_key_value_heads", "kv_heads")
attn_hd = fact("nemotron_h_8b.attention_head_dim", "attn_head_dim")
a_layers = fact("nemotron_h_8b.attention_layers", "attention_layers")
bf16 = fact("nemotron_h_8b.state_dtype_bytes", "bf16_bytes")
align = given("kernel_block_alignment", 16, unit="tokens", source="vLLM v0.18.1 config.py kernel_block_alignment_size")
heads_per_group = claim("heads_per_group", heads / groups, unit="heads")


def per_rank(tp: int) -> dict[str, float]:
    g = groups + extra_groups(groups, tp)
    conv, ssm = mamba2_state_bytes(heads, hd, d_state, groups, d_conv, tp=tp, ssm_bytes=bf16, conv_bytes=bf16)
    kvh = max(1, kv_heads / tp)
    attn_tok = 2 * kvh * attn_hd * bf16
    page = conv + ssm
    block = align * math.ceil(page / (align * attn_tok))
    # vLLM pads the Mamba page up to the attention page (block x attn_tok), so that is what a sequence holds
    return {"groups": g, "page": page, "attn_tok": attn_tok, "block": block, "padded": block * attn_tok, "kvh": kvh}


# %% [markdown]
# ## Per rank, per sequence, TP = 1 ... 16

# %%
base = per_rank(1)
for tp in (1, 2, 4, 8, 16):
    t = given(f"tp_{tp}", tp, unit="GPUs", source="TP degree considered (the question's sweep)")
    r = per_rank(int(t))
    state = claim(f"state_per_seq_tp{tp}", m_layers * r["page"], unit="B")
    claim(f"kv_per_token_tp{tp}", a_layers * r["attn_tok"], unit="B")
    claim(f"block_tp{tp}", r["block"], unit="tokens")
    print(f"TP{tp}: groups {r['groups']:.0f}, state/seq/rank {state / 2**20:.3f} MiB, "
          f"KV/token/rank {a_layers * r['attn_tok']:.0f} B, block {r['block']} tokens")

r16 = per_rank(16)
halving = claim("halving", per_rank(2)["page"] / base["page"], unit="x")
doubling = claim("doubling", 2 / 1, unit="x")
group_share = claim("group_share_tp16", (heads / 16) / heads_per_group)
groups16 = claim("groups_total_tp16", r16["groups"])
ideal16 = claim("ideal_state_tp16", m_layers * base["page"] / 16, unit="B")
over16 = claim("state_over_ideal_tp16", m_layers * r16["page"] / ideal16, unit="x")
heads16 = claim("heads_per_rank_tp16", heads / 16, unit="heads")
check(per_rank(16)["groups"] == 16, "TP16 replicates each of the 8 groups once")
check(per_rank(8)["block"] == 528 and per_rank(16)["block"] == 272, "block 528 up to TP8, 272 at TP16")

# %% [markdown]
# ## Where the extra bytes at TP16 come from: only the conv state's B and C channels

# %%
conv16 = mamba2_state_bytes(heads, hd, d_state, groups, d_conv, tp=16, conv_bytes=bf16)[0]
conv16_ideal = mamba2_state_bytes(heads, hd, d_state, groups, d_conv, conv_bytes=bf16)[0] / 16
extra_per_layer = claim("extra_conv_bytes_tp16", conv16 - conv16_ideal, unit="B")
ssm16 = claim("ssm_per_layer_tp16", heads / 16 * hd * d_state * bf16, unit="B")

# %% [markdown]
# ## What a GPU of sequences gains: KV per token stops shrinking at TP8, the state keeps shrinking
# Per-rank bytes for a sequence of L tokens: state + KV * L; the ratio TP16/TP8 at the model's 8K limit.

# %%
L = fact("nemotron_h_8b.max_position_embeddings", "max_context")


def seq_bytes(tp: int) -> float:
    """What vLLM allocates per rank for one L-token sequence: padded Mamba pages plus whole attention blocks."""
    r = per_rank(tp)
    return m_layers * r["padded"] + a_layers * math.ceil(L / r["block"]) * r["block"] * r["attn_tok"]


seq8 = claim("seq_bytes_tp8", seq_bytes(8), unit="B")
seq16 = claim("seq_bytes_tp16", seq_bytes(16), unit="B")
shrink = claim("tp16_over_tp8_seq_bytes", seq16 / seq8, unit="x")

# %% [markdown]
# ## The padding vLLM adds at TP16 costs more than the replicated groups

# %%
padded16 = claim("padded_state_tp16", m_layers * r16["padded"], unit="B")
pad_over_ideal16 = claim("padded_over_ideal_tp16", padded16 / ideal16, unit="x")
pad_share16 = claim("padding_share_tp16", (r16["padded"] - r16["page"]) / r16["page"], unit="fraction")
check(r16["padded"] - r16["page"] > r16["page"] - base["page"] / 16, "at TP16 the page padding exceeds the groups' cost")
domain = fact("h100_sxm.nvlink_domain", "nvlink_domain")
nodes16 = claim("nodes_tp16", 16 / domain, unit="nodes")
claim("attn_bytes_per_token_layer_tp16", r16["attn_tok"], unit="B")
claim("padding_share_tp1", (base["padded"] - base["page"]) / base["page"], unit="fraction")
claim("padding_over_groups_tp16", (r16["padded"] - r16["page"]) / extra_per_layer, unit="x")
