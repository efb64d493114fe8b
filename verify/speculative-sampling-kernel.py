# %% [markdown]
# # Rejection sampling fused into one Triton launch: per-row accept loop, residual draw, bonus token
# The rule is Leviathan, Kalman & Matias (ICML 2023, arXiv:2211.17192, Algorithm 1). The kernel's shape
# follows vLLM's rejection sampler (vllm/v1/sample/rejection_sampler.py: `rejection_random_sample_kernel`
# for the accept loop, `sample_recovered_tokens_kernel` for the residual draw by an exponential race with
# one Exp(1) vector per request, `q_ptr + req_idx * vocab_size`), fused into one launch over a dense
# `[batch, γ, vocab]` layout. All randomness is an input, so the kernel is a pure function and can be
# compared token for token with a PyTorch reference.

# %%
import torch
import triton
import triton.language as tl

from qbank.verify import check, claim, device, fact, given, triton_check

torch.manual_seed(0)


# where launch() runs outside triton_check: compiled on a real GPU, else through the interpreter on the CPU
on = "cuda" if device() == "cuda" and torch.cuda.is_available() else "cpu"


def on_device(fn, *args, **kw):
    """Call fn with its tensor arguments on `on`; tensor results come back to the CPU."""
    res = fn(*[a.to(on) if isinstance(a, torch.Tensor) else a for a in args], **kw)
    return tuple(r.cpu() for r in res) if isinstance(res, tuple) else res.cpu()


@triton.jit
def spec_sample_kernel(
    target_ptr,  # [B, GAMMA + 1, V] float32: target probabilities; row GAMMA is the bonus position
    draft_ptr,  # [B, GAMMA, V] float32: draft probabilities the drafted tokens were sampled from
    tokens_ptr,  # [B, GAMMA] int64: drafted tokens
    uniform_ptr,  # [B, GAMMA] float32: U[0, 1) for the accept tests (0.0 included: float32 rand can return it)
    race_ptr,  # [B, V] float32: 1 / E with E ~ Exp(1); one vector per row serves its one residual or bonus draw
    out_ptr,  # [B, GAMMA + 1] int64, pre-filled with -1: emitted tokens
    n_out_ptr,  # [B] int32: tokens emitted per row (1 .. GAMMA + 1)
    B,
    V,
    GAMMA: tl.constexpr,
    BLOCK_R: tl.constexpr,
    BLOCK_V: tl.constexpr,
    BUG: tl.constexpr,  # 0: correct; 1: residual from p, not max(0, p - q); 2: no stop at a rejection;
    # 3: vLLM's `p / q >= u` test fed a float32 uniform (u = 0.0 accepts a token the target gave no mass)
):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < B
    cols = tl.arange(0, BLOCK_V)
    tile = rmask[:, None] & (cols < V)[None, :]
    alive = rmask
    n_out = tl.zeros([BLOCK_R], dtype=tl.int32)
    # a row emits exactly one race-drawn token (the residual at its first rejection, or the bonus), so one
    # Exp(1) vector per row is enough and is read once, not once per position
    w = tl.load(race_ptr + rows[:, None] * V + cols[None, :], mask=tile, other=0.0)
    for i in tl.static_range(GAMMA):
        tok = tl.load(tokens_ptr + rows * GAMMA + i, mask=rmask, other=0)
        q_tok = tl.load(draft_ptr + (rows * GAMMA + i) * V + tok, mask=rmask, other=0.0)
        p_tok = tl.load(target_ptr + (rows * (GAMMA + 1) + i) * V + tok, mask=rmask, other=0.0)
        u = tl.load(uniform_ptr + rows * GAMMA + i, mask=rmask, other=1.0)
        # vLLM: `draft_prob > 0 and target_prob / draft_prob >= uniform_prob`, with a float64 uniform so
        # that u = 0.0 (which accepts p(x) = 0) is negligible. Here: multiplied out (no approximate GPU
        # division) and strict, so u = 0.0 accepts only p(x) > 0 and a float32 uniform is safe
        accept = (q_tok > 0) & (u * q_tok < p_tok)
        if BUG == 3:
            accept = (q_tok > 0) & (p_tok >= u * q_tok)
        p_row = tl.load(target_ptr + (rows[:, None] * (GAMMA + 1) + i) * V + cols[None, :], mask=tile, other=0.0)
        q_row = tl.load(draft_ptr + (rows[:, None] * GAMMA + i) * V + cols[None, :], mask=tile, other=0.0)
        resid = tl.maximum(p_row - q_row, 0.0)
        if BUG == 1:
            resid = p_row
        # argmax(r / E) draws from r / sum(r): the race is scale-free, so the residual is never normalised
        recovered = tl.argmax(tl.where(tile, resid * w, -1.0), axis=1)
        emit = tl.where(accept, tok, recovered.to(tl.int64))
        tl.store(out_ptr + rows * (GAMMA + 1) + i, emit, mask=alive)
        n_out += alive.to(tl.int32)
        if BUG != 2:
            alive = alive & accept
    p_b = tl.load(target_ptr + (rows[:, None] * (GAMMA + 1) + GAMMA) * V + cols[None, :], mask=tile, other=0.0)
    bonus = tl.argmax(tl.where(tile, p_b * w, -1.0), axis=1)
    tl.store(out_ptr + rows * (GAMMA + 1) + GAMMA, bonus.to(tl.int64), mask=alive)
    n_out += alive.to(tl.int32)
    tl.store(n_out_ptr + rows, n_out, mask=rmask)


def launch(target, draft, tokens, uniform, expo, bug=0):
    """One program per BLOCK_R rows; each holds a [BLOCK_R, next_pow2(V)] tile of p, q and race weights."""
    b, gamma, v = draft.shape
    block_v = triton.next_power_of_2(v)
    block_r = max(1, min(1024, 16384 // block_v))
    out = torch.full((b, gamma + 1), -1, dtype=torch.int64, device=target.device)
    n_out = torch.zeros(b, dtype=torch.int32, device=target.device)
    race = 1.0 / expo  # IEEE division in torch on either device: bit-identical weights for the reference
    grid = (triton.cdiv(b, block_r),)
    spec_sample_kernel[grid](
        target, draft, tokens, uniform, race, out, n_out, b, v, GAMMA=gamma, BLOCK_R=block_r, BLOCK_V=block_v, BUG=bug,
        num_warps=4 if block_r * block_v <= 4096 else 16,
    )
    return out, n_out


def reference(target, draft, tokens, uniform, expo):
    """Algorithm 1 row by row, with the same randoms: accept while u * q(x) < p(x); at the first
    rejection emit argmax(max(0, p - q) / E); if all γ survive, emit the bonus argmax(p_{γ+1} / E)."""
    b, gamma, v = draft.shape
    out = torch.full((b, gamma + 1), -1, dtype=torch.int64)
    n_out = torch.zeros(b, dtype=torch.int32)
    race = 1.0 / expo
    for r in range(b):
        n = 0
        for i in range(gamma + 1):
            n += 1
            if i == gamma:
                out[r, i] = int(torch.argmax(target[r, i] * race[r]))
                break
            x = int(tokens[r, i])
            qx, px = draft[r, i, x], target[r, i, x]
            if qx > 0 and uniform[r, i] * qx < px:
                out[r, i] = x
                continue
            out[r, i] = int(torch.argmax(torch.clamp(target[r, i] - draft[r, i], min=0) * race[r]))
            break
        n_out[r] = n
    return out, n_out


def distributions(b, gamma, v, sharpness, noise):
    """Per-row, per-position target p and a draft q that is a noisy copy of it (float32, like engines)."""
    logits = torch.randn(b, gamma + 1, v) * sharpness
    p = torch.softmax(logits, dim=-1)
    q = torch.softmax(logits[:, :gamma] + noise * torch.randn(b, gamma, v), dim=-1)
    return p, q


def draw_inputs(p, q):
    """Drafted tokens x ~ q, accept uniforms, one exponential race vector per row."""
    b, gamma, v = q.shape
    tokens = torch.multinomial(q.reshape(-1, v), 1).view(b, gamma)
    uniform = torch.rand(b, gamma)
    expo = torch.empty(b, v).exponential_()
    return tokens, uniform, expo


def io_bytes(p, q, tokens, uniform, expo):
    """HBM traffic of one launch: p, q and the race weights read, tokens and uniforms read, tokens and counts written."""
    b, gamma, _ = q.shape
    read = 4 * (p.numel() + q.numel() + expo.numel()) + 8 * tokens.numel() + 4 * uniform.numel()
    return int(read + 8 * b * (gamma + 1) + 4 * b)


# %% [markdown]
# ## The kernel against the reference, token for token
# A batch of rows with their own distributions, plus edge rows: a draft equal to the target (every test
# passes: γ tokens and the bonus), a draft whose tokens the target gives no mass (rejected at once), a
# drafted token the draft itself gave no mass (vLLM rejects it rather than divide by zero), and a uniform of
# exactly 0.0 on a token the target gives no mass (float32 `torch.rand` can return 0.0: pytorch#16706, the
# reason vLLM's `generate_uniform_probs` draws float64; a `>=` test would accept that token).

# %%
batch = int(given("batch_rows", 48, unit="requests", source="test batch (small: the interpreter runs it in CI)"))
gamma = int(given("gamma", 4, unit="tokens", source="drafted tokens per row, a common EAGLE/MTP setting"))
vocab = int(given("vocab", 256, unit="tokens", source="test vocabulary (the kernel's tile is next_pow2(vocab))"))
sharp = given("logit_scale", 2.0, source="std of the test logits: peaked enough that acceptance is mixed")
noise = given("draft_noise", 1.0, source="std of the draft's logit perturbation")
p, q = distributions(batch, gamma, vocab, sharp, noise)
tokens, uniform, expo = draw_inputs(p, q)
q[0] = p[0, :gamma]  # row 0: draft equals target
tokens[0] = torch.multinomial(q[0], 1).view(gamma)
p[1, 0] = 0.0  # row 1: the target gives no mass to the first drafted token's ...
p[1, 0, (tokens[1, 0] + 1) % vocab] = 1.0  # ... and all of it to another one
q[2, 0, tokens[2, 0]] = 0.0  # row 2: a drafted token with draft probability 0
p[3, 0] = 0.0  # row 3: u = 0.0 on a drafted token the target gives no mass ...
p[3, 0, (tokens[3, 0] + 1) % vocab] = 1.0
uniform[3, 0] = 0.0  # ... must still be rejected
edge_rows = 4

triton_check("spec_sample_vs_reference", launch, reference, p, q, tokens, uniform, expo,
             bytes_moved=io_bytes(p, q, tokens, uniform, expo))

out, n_out = on_device(launch, p, q, tokens, uniform, expo)
check(int(n_out[0]) == gamma + 1 and bool((out[0, :gamma] == tokens[0]).all()), "draft = target: all γ and the bonus")
check(int(n_out[1]) == 1 and int(out[1, 0]) == int((tokens[1, 0] + 1) % vocab), "p(x) = 0: rejected, residual's token")
check(int(n_out[2]) == 1, "q(x) = 0: rejected without dividing by zero")
check(int(n_out[3]) == 1 and int(out[3, 0]) == int((tokens[3, 0] + 1) % vocab), "u = 0, p(x) = 0: still rejected")
check(bool((out.gather(1, (n_out.long() - 1).unsqueeze(1)) >= 0).all()), "every row emits at least one token")
check(bool(((out >= 0).sum(1) == n_out).all()), "tokens after a row's first rejection stay unwritten (-1)")
mean_emitted = claim("mean_tokens_emitted", float(n_out[edge_rows:].double().mean()), unit="tokens")

# %% [markdown]
# ## At a real vocabulary
# Llama-3.1's vocabulary makes each position a 131,072-wide tile: the kernel reads p, q and the race weights
# once per position, so its cost is bytes, and on a GPU the timed run says how close to HBM bandwidth it gets.
# Through the interpreter the check runs 2 rows; compiled it runs 64.

# %%
llama_vocab = int(fact("llama3_1_8b.vocab_size", "llama_vocab"))
gpu_rows = int(given("gpu_rows", 64, unit="requests", source="rows of the compiled, timed run (a decode batch)"))
cpu_rows = int(given("cpu_rows", 2, unit="requests", source="rows of the interpreter run (CI time)"))
big_rows = gpu_rows if device() == "cuda" else cpu_rows
bp, bq = distributions(big_rows, gamma, llama_vocab, sharp, noise)
big = (bp, bq, *draw_inputs(bp, bq))
triton_check("spec_sample_llama_vocab", launch, reference, *big, bytes_moved=io_bytes(*big))
# per row: p at γ + 1 positions, q at γ, one race vector; a race vector per position would add γ more
per_row_bytes = claim("bytes_per_row_llama", 4 * llama_vocab * (2 * gamma + 2), unit="B")
per_position_race = claim("bytes_per_row_race_per_position", 4 * llama_vocab * (3 * gamma + 2), unit="B")

# %% [markdown]
# ## Broken kernels fail the exact check
# Drawing the residual from p, carrying on after a rejection, and vLLM's non-strict test on a float32
# uniform (row 3) each change the output tokens.

# %%
args = (p, q, tokens, uniform, expo)
triton_check("bug_residual_from_p", lambda *a: launch(*a, bug=1), reference, *args, expect_mismatch=True)
triton_check("bug_no_stop_at_rejection", lambda *a: launch(*a, bug=2), reference, *args, expect_mismatch=True)
triton_check("bug_non_strict_test_float32_uniform", lambda *a: launch(*a, bug=3), reference, *args, expect_mismatch=True)
check(int(on_device(launch, *args, bug=3)[1][3]) > 1, "the `>=` test accepts row 3's zero-mass token at u = 0.0")

# %% [markdown]
# ## Losslessness, measured, at a stated false-alarm rate
# Every row gets the same per-position p_i and q_i, so emitted tokens pool into counts per position. With
# p_i fixed in advance (not conditioned on the prefix), the token a correct kernel emits at position i,
# whenever it emits one there, is distributed exactly as p_i, bonus position included. Pearson's statistic
# summed over the γ + 1 positions is chi-square with (γ + 1)(V - 1) degrees of freedom under that null, less
# one per merged cell (below). The critical value is the chi-square upper quantile computed to float64 precision, by bisection on the
# regularised upper incomplete gamma function Q(k/2, c/2) = P(X > c) (torch.special.gammaincc). The level
# itself is asymptotic (Pearson's statistic is only approximately chi-square), so the rarest tokens of each
# position are pooled until every cell expects at least 5 counts.

# %%
n_rows = int(given("stat_rows", 40_000, unit="requests", source="rows sampled for the test"))
small_v = int(given("stat_vocab", 12, unit="tokens", source="vocabulary of the test (expected counts >= 5 per cell)"))
alpha_fa = given("false_alarm_rate", 0.001, unit="fraction", source="chosen test level: a correct kernel fails 1 seed in 1,000")
p1, q1 = distributions(1, gamma, small_v, sharp, noise)
p_s = p1.expand(n_rows, gamma + 1, small_v).contiguous()
q_s = q1.expand(n_rows, gamma, small_v).contiguous()
t_s, u_s, e_s = draw_inputs(p_s, q_s)


min_cell = given("min_expected_per_cell", 5, unit="elements",
                 source="Cochran (1954), the usual rule for Pearson's chi-square: expected count >= 5 per cell")


def pooled(expected):
    """Cell groups for one position: the rarest tokens are merged into one cell until that cell expects
    at least `min_cell` counts; the grouping depends on expected counts only, never on observed ones."""
    order = torch.argsort(expected)
    pool, acc = [], 0.0
    for j in order.tolist():
        if acc >= min_cell:
            break
        pool.append(j)
        acc += float(expected[j])
    if len(pool) == 1:
        pool = []  # the rarest cell alone already expects enough
    rest = [j for j in order.tolist() if j not in pool]
    if pool and acc < min_cell and rest:  # never reached here: the whole row expects n >= min_cell
        pool.append(rest.pop(0))
    return ([pool] if pool else []) + [[j] for j in rest]


def chi_square(bug):
    """Pearson's statistic summed over all positions of the kernel's output, with rare tokens pooled per
    position; also its degrees of freedom, the smallest expected cell and the rows emitting at each position."""
    o, n = on_device(launch, p_s, q_s, t_s, u_s, e_s, bug=bug)
    stat, k, smallest, reach = 0.0, 0, float("inf"), []
    for i in range(gamma + 1):
        emitted = o[n > i, i]
        expected = emitted.numel() * p1[0, i].double()
        counts = torch.bincount(emitted, minlength=small_v).double()
        cells = pooled(expected)
        e_c = torch.stack([expected[c].sum() for c in cells])
        o_c = torch.stack([counts[c].sum() for c in cells])
        stat += float(((o_c - e_c) ** 2 / e_c).sum())
        k += len(cells) - 1
        smallest = min(smallest, float(e_c.min()))
        reach.append(emitted.numel())
    return stat, k, smallest, reach, n


def upper_quantile(k, level):
    """c with P(chi2_k > c) = level, by bisection on Q(k/2, c/2) = torch.special.gammaincc."""
    lo, hi = 0.0, 10.0 * k
    for _ in range(200):
        mid = (lo + hi) / 2
        tail = float(torch.special.gammaincc(torch.tensor(k / 2, dtype=torch.float64), torch.tensor(mid / 2, dtype=torch.float64)))
        lo, hi = (mid, hi) if tail > level else (lo, mid)
    return hi


stat, k_s, smallest, reach, n_s = chi_square(0)
dof = claim("chi2_dof", k_s, unit="dims")
check(dof <= (gamma + 1) * (small_v - 1), "pooling only removes degrees of freedom")
crit = claim("chi2_critical", upper_quantile(dof, alpha_fa))
chi2_stat = claim("chi2_stat", stat)
p_value = claim("p_value", float(torch.special.gammaincc(torch.tensor(dof / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64))), unit="fraction")
check(stat < crit, "the kernel's emitted tokens pass the chi-square test against the target at every position")
min_expected = claim("min_expected_count", smallest, unit="elements")
check(min_expected >= min_cell, "every pooled cell expects at least 5 counts (the chi-square approximation holds)")
raw_min = claim("min_expected_unpooled", min(r * float(p1[0, i].min()) for i, r in enumerate(reach)), unit="elements")
bonus_rows = claim("bonus_rows", reach[gamma], unit="requests")

# %% [markdown]
# ## The test has power, and a blind spot
# Drawing the residual from p is the classic bug: accepted tokens already contributed min(p, q), so the
# output over-weights where p and q agree. Not stopping at a rejection leaves every position's marginal
# intact (p_i does not depend on the prefix here), so this test cannot see it; the exact check above can.

# %%
bug_stat, bug_k, _, _, _ = chi_square(1)
chi2_bug = claim("chi2_stat_residual_from_p", bug_stat)
check(bug_stat > upper_quantile(bug_k, alpha_fa), "the residual-from-p kernel fails the same test")
bug_ratio = claim("bug_over_critical", bug_stat / upper_quantile(bug_k, alpha_fa), unit="x")
blind_stat, blind_k, _, _, _ = chi_square(2)
chi2_blind = claim("chi2_stat_no_stop", blind_stat)
# no-stop emits at every position for every row, and each position's token is still distributed as p_i:
# the statistic has exactly the null distribution, so this test flags it with probability alpha, no more
check(blind_stat < upper_quantile(blind_k, alpha_fa), "the no-stop kernel passes the marginal test: only the exact check catches it")

# %% [markdown]
# ## Tokens per verification step against the acceptance rates
# Position i accepts with α_i = Σ min(p_i, q_i) (= 1 − TV(p_i, q_i)), independently here, so a step emits
# 1 + α_1 + α_1α_2 + … + α_1⋯α_γ tokens on average: the first rejection still emits a token, and a fully
# accepted draft adds the bonus.

# %%
alphas = torch.minimum(p1[0, :gamma].double(), q1[0].double()).sum(-1)
alpha_first = claim("alpha_position_1", float(alphas[0]), unit="fraction")
expected_tokens = claim("tokens_per_step_formula", float(torch.cumprod(torch.cat([torch.ones(1, dtype=torch.float64), alphas]), 0).sum()), unit="tokens")
measured_tokens = claim("tokens_per_step_measured", float(n_s.double().mean()), unit="tokens")
sigma_band = given("sigma_band", 4, source="tolerance in standard errors of the mean; 4 sigma: false alarm below 1e-4")
se = float(n_s.double().std()) / n_rows**0.5
check(abs(measured_tokens - expected_tokens) < sigma_band * se, "measured tokens per step within 4 standard errors of the formula")
print(f"chi2={stat:.1f} crit={crit:.1f} p={p_value:.3f} bug={bug_stat:.0f} no-stop={blind_stat:.1f} tokens {measured_tokens:.3f} vs {expected_tokens:.3f}")
