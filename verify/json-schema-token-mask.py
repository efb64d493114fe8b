# %% [markdown]
# # A JSON-schema token mask: automaton, vocabulary walk, int32 packing, logits
# Schema: {"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer"}},
# "required":["ok","n"],"additionalProperties":false}, serialized compactly with keys in schema order,
# i.e. the regular language  \{"ok":(true|false),"n":-?(0|[1-9][0-9]*)\}  (JSON integer grammar, RFC 8259 §6).
# Bit order (the one xgrammar and llguidance use for their int32 bitmasks): token t lives in word t >> 5,
# bit t & 31, least significant bit first; bit 31 set makes the int32 word negative.

# %%
import json
import re

import torch

from bitmask_kernel import apply_bitmask, apply_bitmask_msb_first, apply_bitmask_reference, bitmask_bytes

from qbank.verify import check, claim, device, fact, given, kernel_check, triton_check

torch.manual_seed(0)
bits_per_word = int(given("bits_per_word", 32, source="int32 word width in bits"))
DEAD = -1


class Dfa:
    """A character DFA: transitions[(state, char)] -> state; one accept state."""

    def __init__(self) -> None:
        self.trans: dict[tuple[int, str], int] = {}
        self.n = 1  # state 0 is the start

    def new(self) -> int:
        self.n += 1
        return self.n - 1

    def literal(self, s: int, text: str) -> int:
        for ch in text:
            nxt = self.new()
            self.trans[(s, ch)] = nxt
            s = nxt
        return s

    def step(self, s: int, ch: str) -> int:
        return self.trans.get((s, ch), DEAD)


def build_schema_dfa() -> tuple[Dfa, int]:
    """DFA for {"ok":<boolean>,"n":<integer>} with no whitespace."""
    d = Dfa()
    s = d.literal(0, '{"ok":')
    t_end = d.literal(s, "true")
    f_end = d.literal(s, "fals")
    d.trans[(f_end, "e")] = t_end  # both booleans join in one state
    s = d.literal(t_end, ',"n":')
    minus, zero, digits = d.new(), d.new(), d.new()
    d.trans[(s, "-")] = minus
    for start in (s, minus):
        d.trans[(start, "0")] = zero
        for c in "123456789":
            d.trans[(start, c)] = digits
    for c in "0123456789":
        d.trans[(digits, c)] = digits
    accept = d.new()
    d.trans[(zero, "}")] = accept
    d.trans[(digits, "}")] = accept
    return d, accept


dfa, ACCEPT = build_schema_dfa()
n_states = int(claim("n_states", dfa.n))

# %% [markdown]
# ## Vocabulary: many tokens span several automaton states
# Token id = list index. The last id is EOS (empty text, allowed only in the accept state).

# %%
VOCAB = [
    '{"',
    '{"ok":',
    "ok",
    '":',
    ":",
    "true",
    "tr",
    "ue",
    "fal",
    "se",
    "false",
    'e,"',
    ',"',
    ',"n":',
    "n",
    '"',
    ",",
    "-",
    "0",
    "1",
    "12",
    "7",
    "00",
    "-0",
    "5}",
    "}",
    "0}",
    "9",
    "3",
    "e",
    "t",
    "f",
    "a",
    "l",
    "s",
    "r",
    "u",
    "o",
    "k",
    " ",
    "hello",
    "{",
    '":-',
    '}"',
    "true,",
    "null",
    "<eos>",
]
EOS = len(VOCAB) - 1
vocab = int(claim("vocab_size", len(VOCAB), unit="tokens"))


def walk(state: int, text: str) -> int:
    """Run a token's characters from a state; DEAD if any character is rejected."""
    for ch in text:
        state = dfa.step(state, ch)
        if state == DEAD:
            return DEAD
    return state


def allowed_table(vocab_list: list[str], eos: int) -> tuple[torch.Tensor, torch.Tensor]:
    """[states, V] bool allowed and [states, V] next state: walk every token from every state."""
    allowed = torch.zeros(dfa.n, len(vocab_list), dtype=torch.bool)
    nxt = torch.full((dfa.n, len(vocab_list)), DEAD, dtype=torch.long)
    for s in range(dfa.n):
        for t, text in enumerate(vocab_list):
            if t == eos:
                allowed[s, t] = s == ACCEPT  # EOS only where the document is complete
                continue
            if text == "":
                continue  # empty non-EOS tokens never advance: forbid
            e = walk(s, text)
            if e != DEAD:
                allowed[s, t], nxt[s, t] = True, e
    return allowed, nxt


ALLOWED, NEXT = allowed_table(VOCAB, EOS)

# %% [markdown]
# ## Pack into int32 words, and apply to logits


# %%
def pack(allowed: torch.Tensor) -> torch.Tensor:
    """bool [..., V] -> int32 [..., ceil(V/32)]; token t is bit t & 31 of word t >> 5 (LSB first)."""
    v = allowed.shape[-1]
    w = (v + 31) // 32
    padded = torch.zeros(*allowed.shape[:-1], w * 32, dtype=torch.int64)
    padded[..., :v] = allowed.long()  # padding bits stay 0: never allowed
    weights = torch.ones(32, dtype=torch.int64) << torch.arange(32)
    words = (padded.view(*allowed.shape[:-1], w, 32) * weights).sum(-1)
    words = torch.where(words >= 2**31, words - 2**32, words)  # reinterpret as two's-complement int32
    return words.to(torch.int32)


def pack_reference(allowed: torch.Tensor) -> torch.Tensor:
    """Bit by bit, row by row."""
    rows = allowed.reshape(-1, allowed.shape[-1]).tolist()
    w = (allowed.shape[-1] + 31) // 32
    out = []
    for row in rows:
        words = [0] * w
        for t, ok in enumerate(row):
            if ok:
                words[t // 32] |= 1 << (t % 32)
        out.append([x - 2**32 if x >= 2**31 else x for x in words])
    return torch.tensor(out, dtype=torch.int32).reshape(*allowed.shape[:-1], w)


# The hot loop is a Triton kernel (verify/_lib/bitmask_kernel.py): one program per (row, 256 tokens),
# reading 8 words and unpacking them in registers. apply_mask is its PyTorch reference, used below for
# the rollouts once the kernel is checked equal to it.
apply_mask = apply_bitmask_reference


def apply_loop(logits: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
    """Token by token, the slowest and plainest reading of the layout."""
    out = logits.clone()
    for b in range(logits.shape[0]):
        for t in range(logits.shape[1]):
            word = int(words[b, t // 32]) & 0xFFFFFFFF
            if not (word >> (t % 32)) & 1:
                out[b, t] = float("-inf")
    return out


TABLE = pack(ALLOWED)  # [states, W], built once per schema
kernel_check("pack_int32_vs_bitwise", pack, pack_reference, ALLOWED)
rand_bits = int(given("random_row_bits", 77, unit="bit", source="a row length that is not a multiple of 32"))
rand_allowed = torch.rand(16, rand_bits) < 0.5  # non-multiple of 32, bit 31 often set
kernel_check("pack_random_vs_bitwise", pack, pack_reference, rand_allowed)
kernel_block = int(given("kernel_block", 256, unit="tokens", source="BLOCK of the launches below (bitmask_kernel.py)"))
claim("words_per_block", kernel_block // bits_per_word, unit="words")


def launch(lg: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return apply_bitmask(lg, w, block=kernel_block)


batch_states = torch.randint(0, dfa.n, (32,))
logits = torch.randn(32, vocab)
check(torch.equal(apply_bitmask_reference(logits, TABLE[batch_states]), apply_loop(logits, TABLE[batch_states])),
      "the PyTorch reference equals the token-by-token loop")
itemsize = logits.element_size()
triton_check("bitmask_kernel", launch, apply_bitmask_reference, logits, TABLE[batch_states],
             bytes_moved=bitmask_bytes(32, vocab, itemsize))
wide_logits = torch.randn(16, rand_bits)
rand_words = pack(rand_allowed)
triton_check("bitmask_kernel_77_tokens", launch, apply_bitmask_reference, wide_logits, rand_words,
             bytes_moved=bitmask_bytes(16, rand_bits, itemsize))
triton_check("bitmask_kernel_msb_first", apply_bitmask_msb_first, apply_bitmask_reference, wide_logits, rand_words,
             expect_mismatch=True)
words_per_row = int(claim("words_per_row", TABLE.shape[1], unit="words"))

# %% [markdown]
# ## Edge-case tests (the premium part of the answer)

# %%
tid = {t: i for i, t in enumerate(VOCAB)}
after_colon = walk(0, '{"ok":')
check(bool(ALLOWED[0, tid['{"ok":']]) and bool(ALLOWED[0, tid['{"']]), "start: whole-prefix and partial tokens allowed")
check(
    bool(ALLOWED[after_colon, tid["fal"]])
    and bool(ALLOWED[after_colon, tid["t"]])
    and not bool(ALLOWED[after_colon, tid["n"]]),
    "booleans enter from the value state; other letters do not",
)
check(NEXT[walk(0, '{"ok":tr'), tid["ue"]].item() == walk(0, '{"ok":true'), "multi-state token 'ue' lands after true")
check(bool(ALLOWED[walk(0, '{"ok":fals'), tid['e,"']]), "token 'e,\"' spans boolean end, comma and quote")
check(bool(ALLOWED[walk(0, '{"ok":true'), tid["true,"]]) is False, "'true,' not allowed after true")
check(bool(ALLOWED[walk(0, '{"ok":'), tid["true,"]]), "'true,' spans value and separator")
int_start = walk(0, '{"ok":true,"n":')
check(not bool(ALLOWED[int_start, tid["00"]]) and bool(ALLOWED[int_start, tid["0}"]]), "no leading zeros; 0} closes")
check(not bool(ALLOWED[walk(0, '{"ok":true,"n":0'), tid["0"]]), "no digit after a lone 0")
check(
    bool(ALLOWED[walk(0, '{"ok":true,"n":-'), tid["5}"]]) and not bool(ALLOWED[walk(0, '{"ok":true,"n":-'), tid["-0"]]),
    "after '-', a digit; not a second '-'",
)
check(int(ALLOWED[:, EOS].sum()) == 1 and bool(ALLOWED[ACCEPT, EOS]), "EOS allowed in exactly the accept state")
check(int(ALLOWED[ACCEPT].sum()) == 1, "in the accept state only EOS is allowed ('}\"' and ' ' are not)")
check(not bool(ALLOWED[:, tid[" "]].any()), "whitespace token never allowed by this compact grammar")
pad_bits = words_per_row * 32 - vocab
check(all(((TABLE[:, -1].long() & 0xFFFFFFFF) >> (32 - pad_bits)) == 0), "padding bits past the vocabulary are 0")

# Empty allowed set: drop every token that can supply 'l' after 'fa' and the state has no way forward.
small = [t for t in VOCAB if t not in ("fal", "l", "false")]
small_allowed, _ = allowed_table(small, len(small) - 1)
fa_state = walk(0, '{"ok":fa')
check(int(small_allowed[fa_state].sum()) == 0, "a vocabulary can leave a reachable state with an empty set")
empty_row = pack(small_allowed[fa_state : fa_state + 1])
triton_check("bitmask_kernel_empty_row", launch, apply_bitmask_reference, torch.zeros(1, len(small)), empty_row)
masked = apply_bitmask_reference(torch.zeros(1, len(small)), empty_row)
check(bool((masked == float("-inf")).all()), "the fully masked row is -inf everywhere")
check(
    bool(torch.isnan(torch.softmax(masked, -1)).all()), "an empty set makes softmax NaN: must be detected, not sampled"
)
empty_states = claim("empty_states_full_vocab", int((ALLOWED.sum(1) == 0).sum()), unit="elements")
check(empty_states == 0, "with the full vocabulary every state has at least one allowed token")

# %% [markdown]
# ## End to end: constrained generation from random logits always yields schema-valid JSON

# %%
pattern = re.compile(r'\{"ok":(true|false),"n":-?(0|[1-9][0-9]*)\}')
n_docs = int(given("n_docs", 300, unit="elements", source="random constrained rollouts"))
docs, valid = [], 0
for _ in range(n_docs):
    state, text = 0, ""
    for _step in range(40):
        row = apply_mask(torch.randn(1, vocab) * 3, TABLE[state : state + 1])
        tok = int(torch.multinomial(torch.softmax(row, -1), 1))
        if tok == EOS:
            break
        text += VOCAB[tok]
        state = int(NEXT[state, tok])
    docs.append(text)
    ok = state == ACCEPT and pattern.fullmatch(text) is not None
    obj = json.loads(text) if ok else None
    valid += int(ok and isinstance(obj["ok"], bool) and isinstance(obj["n"], int))
valid_frac = claim("valid_fraction", valid / n_docs, unit="fraction")
check(valid_frac == 1.0, "every finished rollout is schema-valid JSON")
check(
    any('"ok":true' in d for d in docs) and any('"ok":false' in d for d in docs) and any(":-" in d for d in docs),
    "the mask is not over-restrictive: both booleans and negative integers occur",
)

# %% [markdown]
# ## Real vocabulary sizes: words and bytes per row

# %%
llama_vocab = fact("llama3_1_8b.vocab_size", "llama_vocab")
ds_vocab = fact("deepseek_v3.vocab_size", "deepseek_vocab")
llama_words = claim("llama_words", -(-llama_vocab // 32), unit="words")
llama_bytes = claim("llama_mask_bytes", llama_words * 4, unit="B")
ds_words = claim("deepseek_words", -(-ds_vocab // 32), unit="words")
batch = given("batch", 256, unit="requests", source="example decode batch")
batch_bytes = claim("batch_mask_bytes", batch * llama_bytes, unit="B")
bool_bytes = claim("batch_bool_bytes", batch * llama_vocab, unit="B")
fp32 = given("logit_bytes", 4, unit="B", source="float32 logits, the dtype vLLM's sampler works in")
pass_bytes = claim("mask_pass_bytes", bitmask_bytes(batch, llama_vocab, fp32), unit="B")
h100_bw = fact("h100_sxm.hbm_bandwidth", "h100_hbm_bandwidth")
pass_s = claim("mask_pass_seconds", pass_bytes / (h100_bw * 1e12), unit="s")
# xgrammar's apply_token_bitmask_inplace kernel (python/xgrammar/kernels/apply_token_bitmask_inplace_triton.py)
# never reads the logits: it stores -inf in place where the bit is 0. Its traffic is the words plus one
# store per forbidden token, at most the whole row when (as in most JSON states) nearly everything is forbidden.
inplace_bytes = claim("inplace_pass_bytes_max", batch * llama_vocab * fp32 + batch_bytes, unit="B")
inplace_s = claim("inplace_pass_seconds_max", inplace_bytes / (h100_bw * 1e12), unit="s")
check(inplace_bytes < pass_bytes / 1.9, "the in-place pass moves about half the out-of-place pass's bytes")

# %% [markdown]
# ## The kernel at the size that is timed on a GPU
# Compiled on a GPU, this check runs the kernel on the batch priced above: 256 rows of Llama-3.1's
# vocabulary in float32 with random words, so the page's time and bandwidth are the production pass's.
# Through the interpreter on the CPU it runs on 4 rows of 77 tokens.

# %%
on_gpu = device() == "cuda" and torch.cuda.is_available()
rows_t, vocab_t = (int(batch), int(llama_vocab)) if on_gpu else (4, rand_bits)
gen = torch.Generator().manual_seed(3)
timed_logits = torch.randn(rows_t, vocab_t, generator=gen)
timed_words = (torch.randint(0, 2**32, (rows_t, -(-vocab_t // 32)), generator=gen) - 2**31).to(torch.int32)
triton_check("bitmask_kernel_batch", launch, apply_bitmask_reference, timed_logits, timed_words,
             bytes_moved=bitmask_bytes(rows_t, vocab_t, int(fp32)))
print(pass_bytes, pass_s, n_states, vocab, words_per_row, llama_words, llama_bytes, ds_words, batch_bytes, bool_bytes, valid_frac)
