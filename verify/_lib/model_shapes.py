"""Byte and parameter counts that several verification scripts share (pure functions, no inputs of their own).

- ``dense_decoder_params``: a Llama-style decoder (GQA attention, gated MLP, untied embeddings, RMSNorms).
- ``nemotron_h_params``: a Nemotron-H-style hybrid (Mamba-2 mixers, GQA attention, ungated MLP blocks, untied
  embeddings), counted block by block from its config.
- ``mamba2_state_bytes``: one Mamba-2 layer's per-sequence state on one tensor-parallel rank, as vLLM sizes it
  (vllm/model_executor/layers/mamba/mamba_utils.py @02d71083, MambaStateShapeCalculator.mamba2_state_shape and
  extra_groups_for_head_shards): conv state (conv_kernel - 1) x (d_inner + 2 * groups' * d_state) / tp, SSM state
  (heads / tp) x head_dim x d_state, where groups' adds tp - groups replicated groups when groups % tp != 0.
"""

from __future__ import annotations


def dense_decoder_params(
    layers: float, hidden: float, heads: float, kv_heads: float, head_dim: float, ffn: float, vocab: float
) -> float:
    """Parameters of a Llama-style decoder: q/o and k/v projections, gate/up/down MLP, two norms per layer,
    untied input embedding and LM head, final norm."""
    per_layer = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + 3 * hidden * ffn + 2 * hidden
    return layers * per_layer + 2 * vocab * hidden + hidden


def extra_groups(groups: float, tp: int) -> float:
    """Groups vLLM adds so that every rank holds the B/C groups its heads need (0 when tp divides groups)."""
    return 0 if groups % tp == 0 else tp - groups


def mamba2_state_bytes(
    heads: float,
    head_dim: float,
    d_state: float,
    groups: float,
    conv_kernel: float,
    tp: int = 1,
    ssm_bytes: float = 2,
    conv_bytes: float = 2,
) -> tuple[float, float]:
    """(conv state bytes, SSM state bytes) of one Mamba-2 layer for one sequence on one TP rank."""
    g = groups + extra_groups(groups, tp)
    conv = (conv_kernel - 1) * (heads * head_dim + 2 * g * d_state) / tp * conv_bytes
    ssm = heads / tp * head_dim * d_state * ssm_bytes
    return conv, ssm


def nemotron_h_params(
    mamba_layers: float,
    attn_layers: float,
    mlp_layers: float,
    hidden: float,
    m_heads: float,
    m_head_dim: float,
    groups: float,
    d_state: float,
    conv_kernel: float,
    q_heads: float,
    kv_heads: float,
    attn_head_dim: float,
    ffn: float,
    vocab: float,
) -> float:
    """Parameters of a Nemotron-H-style hybrid. Mamba-2 mixer: in_proj hidden -> (z: d_inner, xBC: conv_dim,
    dt: heads), depthwise conv1d with bias over conv_dim, dt_bias/A_log/D per head, gated RMSNorm over d_inner,
    out_proj d_inner -> hidden. Attention: q/o hidden x (q_heads x head_dim), k/v hidden x (kv_heads x head_dim).
    MLP: up and down, hidden x ffn (not gated). One RMSNorm per block; untied embedding and LM head; final norm."""
    d_inner = m_heads * m_head_dim
    conv_dim = d_inner + 2 * groups * d_state
    mamba_p = (hidden * (d_inner + conv_dim + m_heads) + conv_dim * conv_kernel + conv_dim + 3 * m_heads + d_inner
               + d_inner * hidden + hidden)
    attn_p = 2 * hidden * q_heads * attn_head_dim + 2 * hidden * kv_heads * attn_head_dim + hidden
    mlp_p = 2 * hidden * ffn + hidden
    return mamba_layers * mamba_p + attn_layers * attn_p + mlp_layers * mlp_p + 2 * vocab * hidden + hidden
