# %% [markdown]
# # Min-p against top-p on a heavy-tailed distribution
# Rules as vLLM V1 implements them: min-p (`MinPLogitsProcessor.apply`, vllm/v1/sample/logits_processor/builtin.py
# @bf17660a) takes the softmax, the row maximum, and masks every token whose probability is below
# min_p * p_max; top-p (`apply_top_k_top_p`, vllm/v1/sample/ops/topk_topp_sampler.py @3babc05a) keeps a token when
# the mass at or below it exceeds 1 - p. The order (vllm/v1/sample/sampler.py @3e342658, Sampler docstring):
# temperature, then the argmax-invariant processors (min-p by default), then top-k/top-p, then the draw.
# The distribution is the question's hypothetical: a Zipf law p_i ~ i^-s over Llama-3.1's vocabulary.

# %%
import torch

from qbank.verify import check, claim, fact, given

vocab = int(fact("llama3_1_8b.vocab_size", "vocab"))
top_p = given("top_p", 0.9, unit="fraction", source="the question's hypothetical request setting")
min_p = given("min_p", 0.1, unit="fraction", source="the question's hypothetical request setting")
ranks = torch.arange(1, vocab + 1, dtype=torch.float64)


def top_p_keep(p: torch.Tensor, pp: float) -> int:
    """vLLM's rule: sort ascending, drop a token while the mass up to and including it is <= 1 - p."""
    asc = p.sort().values
    return int((asc.cumsum(0) > 1 - pp).sum())


def min_p_keep(p: torch.Tensor, mp: float) -> tuple[int, float]:
    kept = p >= mp * p.max()
    return int(kept.sum()), float(p[kept].sum())


rows = {}
for s in (1.0, 1.2):
    tag_s = str(s).replace(".", "")
    given(f"zipf_{tag_s}", s, source="the question's hypothetical Zipf exponent of the model's next-token distribution")
    for t in (0.7, 1.0, 1.3):
        tag = f"s{tag_s}_t{str(t).replace('.', '')}"
        given(f"temp_{tag}", t, source="table row: sampling temperature")
        p = torch.softmax(-s * torch.log(ranks) / t, dim=0)
        n, mass = min_p_keep(p, float(min_p))
        bound = 1 / (float(min_p) * float(p.max()))
        check(n <= bound, "every kept token has at least min_p * p_max of the mass")
        rows[tag] = {"pmax": float(p.max()), "top_p_kept": top_p_keep(p, float(top_p)), "min_p_kept": n,
                     "min_p_mass": mass, "min_p_bound": bound}

units = {"pmax": "fraction", "top_p_kept": "tokens", "min_p_kept": "tokens", "min_p_mass": "fraction"}
for tag in ("s10_t07", "s10_t10", "s10_t13"):  # the answer's table
    for key, unit in units.items():
        claim(f"{key}_{tag}", rows[tag][key], unit=unit)
claim("min_p_bound_s10_t13", rows["s10_t13"]["min_p_bound"], unit="tokens")
claim("top_p_kept_s12_t13", rows["s12_t13"]["top_p_kept"], unit="tokens")
claim("min_p_kept_s12_t13", rows["s12_t13"]["min_p_kept"], unit="tokens")
claim("top_p_kept_share_s10_t13", rows["s10_t13"]["top_p_kept"] / vocab, unit="fraction")
claim("top_p_over_min_p_s10_t13", rows["s10_t13"]["top_p_kept"] / rows["s10_t13"]["min_p_kept"], unit="x")

# %% [markdown]
# ## The processor, as a PyTorch reference with per-row settings
# Rows with min_p = 0 must pass untouched; no row's argmax may change (the processor is argmax-invariant).

# %%
g = torch.Generator().manual_seed(0)
logits = torch.randn(6, 1000, generator=g) * 3
mp_rows = torch.tensor([0.0, 0.05, 0.1, 0.2, 0.5, 1.0]).unsqueeze(1)


def min_p_reference(logits: torch.Tensor, mp: torch.Tensor) -> torch.Tensor:
    probs = torch.softmax(logits, dim=-1)
    out = logits.clone()
    out[probs < probs.amax(dim=-1, keepdim=True) * mp] = float("-inf")
    return out


claim("min_p_row_off", float(mp_rows[0]))
claim("min_p_row_max", float(mp_rows[-1]))
out = min_p_reference(logits, mp_rows)
check(torch.equal(out[0], logits[0]), "min_p = 0 leaves the row untouched")
check(torch.equal(out.argmax(-1), logits.argmax(-1)), "min-p never changes the argmax")
claim("kept_at_min_p_1", int(torch.isfinite(out[5]).sum()), unit="tokens")

# %% [markdown]
# ## Bytes of the min-p pass per element of the [batch, vocab] float32 matrix
# softmax (read 4, write 4), amax (read 4), compare (read 4, write a 1-byte mask), masked write (read the mask
# and write the logit where it is set: at most 1 + 4).

# %%
minp_bytes = claim("min_p_bytes_per_element", 8 + 4 + 5 + 5, unit="B")
batch = given("batch", 128, unit="requests", source="the question's hypothetical decode batch")
claim("min_p_bytes_step", minp_bytes * batch * vocab, unit="B")
