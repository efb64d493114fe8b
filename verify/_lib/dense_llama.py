"""A Llama-3.1 dense model's shape, declared once from ``facts.yaml`` for the scripts that size weights and KV.

``llama("llama3_1_70b")`` declares layers, d_model, q_heads, kv_heads, head_dim, ffn_dim and vocab as facts (under
those names) and returns them with the parameter count of the architecture (attention with GQA, a SwiGLU MLP, two
RMSNorms per layer, untied embedding and LM head, a final norm). ``runtime_overheads()`` declares the per-GPU
memory vLLM takes before its KV pool in the example figures the memory-budget answer uses.
"""

from dataclasses import dataclass

from qbank.verify import fact, given


@dataclass(frozen=True)
class Dense:
    """The shape figures of one dense decoder, as declared inputs."""

    layers: float
    d: float
    nq: float
    nkv: float
    hd: float
    ffn: float
    vocab: float

    @property
    def params(self) -> float:
        """Parameters: per layer Q, K, V, O, gate, up, down and two norms; embedding, LM head, final norm."""
        per_layer = (
            2 * self.d * self.nq * self.hd + 2 * self.d * self.nkv * self.hd + 3 * self.d * self.ffn + 2 * self.d
        )
        return self.layers * per_layer + 2 * self.vocab * self.d + self.d

    def prefill_flops(self, start: float, end: float) -> float:
        """FLOPs to prefill positions [start, end) with [0, start) cached: a multiply-add per parameter per token,
        plus causal attention (QK^T and PV, 4 · layers · q_heads · head_dim FLOP per token per earlier position)."""
        attn = 4 * self.layers * self.nq * self.hd * (end * (end - 1) / 2 - start * (start - 1) / 2)
        return 2 * self.params * (end - start) + attn

    def kv_bytes_per_token(self, bytes_per_value: float) -> float:
        """Keys and values of every layer for one token."""
        return 2 * self.layers * self.nkv * self.hd * bytes_per_value


def llama(model: str) -> Dense:
    """Declare the shape of ``model`` (a facts.yaml group such as ``llama3_1_70b``) and return it."""
    return Dense(
        layers=fact(f"{model}.num_hidden_layers", "layers"),
        d=fact(f"{model}.hidden_size", "d_model"),
        nq=fact(f"{model}.num_attention_heads", "q_heads"),
        nkv=fact(f"{model}.num_key_value_heads", "kv_heads"),
        hd=fact(f"{model}.head_dim", "head_dim"),
        ffn=fact(f"{model}.intermediate_size", "ffn_dim"),
        vocab=fact(f"{model}.vocab_size", "vocab"),
    )


def runtime_overheads() -> float:
    """vLLM's per-GPU memory before the KV pool: activation peak, non-torch memory, CUDA-graph estimate."""
    return given(
        "runtime_overheads",
        4.0e9,
        unit="B",
        source="example per-GPU activation peak 2.5 GB + non-torch 1.0 GB + CUDA-graph estimate 0.5 GB, the figures "
        "of the memory-budget answer; vLLM measures them at start-up (vllm/v1/worker/gpu_worker.py "
        "determine_available_memory)",
    )
