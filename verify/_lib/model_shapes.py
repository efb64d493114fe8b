"""Byte and parameter counts that several verification scripts share (pure functions, no inputs of their own).

- ``dense_decoder_params``: a Llama-style decoder (GQA attention, gated MLP, untied embeddings, RMSNorms).
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
