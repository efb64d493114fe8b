# %% [markdown]
# # Sampling by an exponential race: `argmax(probs / q)` with `q ~ Exp(1)`
# vLLM V1 samples with `random_sample` (vllm/v1/sample/ops/topk_topp_sampler.py @3babc05a): fill `q` with
# Exp(1) draws, `probs.div_(q).argmax(dim=-1)`, "instead of torch.multinomial because torch.multinomial
# causes CPU-GPU synchronization". Requests with their own seed get `q[i].exponential_(generator=...)`,
# one call per seeded request. This script checks the identity empirically, shows the wrong noise
# failing, checks that a seeded request's token does not depend on its batch neighbours, and counts bytes.

# %%
import math

import torch

from qbank.verify import check, claim, fact, given

vocab_toy = int(given("toy_vocab", 8, unit="tokens", source="toy distribution over 8 tokens for the frequency check"))
draws = int(given("draws", 200_000, source="number of draws in the frequency check"))
g = torch.Generator().manual_seed(0)
logits = torch.randn(vocab_toy, generator=g) * 1.5
p = torch.softmax(logits.double(), dim=0)


def race(probs: torch.Tensor, n: int, gen: torch.Generator) -> torch.Tensor:
    """n draws of argmax(probs / q), q ~ Exp(1): the engine's rule, on a row repeated n times."""
    q = torch.empty(n, probs.numel(), dtype=torch.float64).exponential_(generator=gen)
    return (probs.unsqueeze(0) / q).argmax(dim=1)


def uniform_noise(probs: torch.Tensor, n: int, gen: torch.Generator) -> torch.Tensor:
    """The tempting bug: argmax(probs / u) with u ~ U(0, 1) instead of Exp(1)."""
    u = torch.rand(n, probs.numel(), dtype=torch.float64, generator=gen)
    return (probs.unsqueeze(0) / u).argmax(dim=1)


def gumbel_max(probs: torch.Tensor, n: int, gen: torch.Generator) -> torch.Tensor:
    """argmax(log p + G), G = -log(Exp(1)): the same race written in log space."""
    e = torch.empty(n, probs.numel(), dtype=torch.float64).exponential_(generator=gen)
    return (probs.log().unsqueeze(0) - e.log()).argmax(dim=1)


def tv(samples: torch.Tensor, probs: torch.Tensor) -> float:
    freq = torch.bincount(samples, minlength=probs.numel()).double() / samples.numel()
    return float(0.5 * (freq - probs).abs().sum())


# %% [markdown]
# ## The frequency check
# With N draws the empirical frequency of token i has standard deviation sqrt(p_i (1 - p_i) / N); the expected
# total-variation distance of a correct sampler is about half the sum of sqrt(2/pi) times those. A correct rule
# lands near that noise floor; a biased one lands far above it.

# %%
noise_floor = claim(
    "tv_noise_floor",
    0.5 * sum(math.sqrt(2 / math.pi) * math.sqrt(float(pi) * (1 - float(pi)) / draws) for pi in p),
    unit="fraction",
)
accept = given(
    "accept_multiple", 4, unit="x", source="this check's threshold: a correct sampler stays under 4x the floor"
)
claim("tv_half", 0.5, unit="fraction")  # TV distance is half the L1 distance
tv_race = claim("tv_exponential_race", tv(race(p, draws, g), p), unit="fraction")
tv_gumbel = claim("tv_gumbel_max", tv(gumbel_max(p, draws, g), p), unit="fraction")
tv_uniform = claim("tv_uniform_noise", tv(uniform_noise(p, draws, g), p), unit="fraction")
check(tv_race < accept * noise_floor, "the exponential race samples from probs")
check(tv_gumbel < accept * noise_floor, "Gumbel-max samples from probs")
check(tv_uniform > 20 * noise_floor, "uniform noise does not")
claim("uniform_over_floor", tv_uniform / noise_floor, unit="x")
p_top = claim("top_token_probability", float(p.max()), unit="fraction")
freq_u = torch.bincount(uniform_noise(p, draws, g), minlength=vocab_toy).double() / draws
u_top = claim("top_token_frequency_uniform", float(freq_u[int(p.argmax())]), unit="fraction")
check(u_top > p_top, "uniform noise over-picks the most likely token")

# %% [markdown]
# ## Seeds and batch neighbours
# A seeded request draws its own row of q from its own generator, so its token is the same whatever else is
# in the batch; an unseeded request shares the global stream, and its row depends on its position.

# %%
batch_rows = int(given("batch_rows", 4, unit="requests", source="toy batch for the seed check"))
row_probs = torch.softmax(torch.randn(batch_rows, vocab_toy, generator=g).double(), dim=1)


def sample_batch(probs: torch.Tensor, seeded_row: int, seed: int, global_seed: int) -> torch.Tensor:
    q = torch.empty_like(probs)
    q.exponential_(generator=torch.Generator().manual_seed(global_seed))
    q[seeded_row].exponential_(generator=torch.Generator().manual_seed(seed))
    return (probs / q).argmax(dim=1)


same = all(
    int(sample_batch(row_probs, 0, 1234, gs)[0]) == int(sample_batch(row_probs[:1], 0, 1234, gs + 1)[0])
    for gs in range(50)
)
check(same, "a seeded row's token does not depend on the batch or the global stream")
moved = sum(
    int(sample_batch(row_probs, 0, 1234, gs)[2]) != int(sample_batch(row_probs[[0, 2, 1, 3]], 0, 1234, gs)[1])
    for gs in range(200)
)
moved_share = claim("unseeded_changed_share", moved / 200, unit="fraction")
check(moved_share > 0.05, "an unseeded row's token changes when the batch is reordered")

# %% [markdown]
# ## Bytes per element of the [batch, vocab] matrix, fp32
# Race: `exponential_` writes q (4), `div_` reads probs and q and writes probs (12), argmax reads (4).
# Inverse CDF: a cumulative sum reads and writes (8), then one search per row of log2(V) reads.

# %%
vocab = fact("llama3_1_8b.vocab_size", "vocab")
race_bytes = claim("race_bytes_per_element", 4 + 12 + 4, unit="B")
cdf_bytes = claim("inverse_cdf_bytes_per_element", 4 + 4, unit="B")
claim("race_over_cdf", race_bytes / cdf_bytes, unit="x")
batch = given("batch", 128, unit="requests", source="the question's hypothetical decode batch")
claim("race_bytes_step", race_bytes * batch * vocab, unit="B")
claim("search_reads_per_row", math.ceil(math.log2(vocab)), unit="elements")
print(noise_floor, tv_race, tv_gumbel, tv_uniform, p_top, u_top, moved_share)
