# %% [markdown]
# # Copy-on-write block sharing for parallel sampling: counts, copies, misalignment
# A minimal paged block manager (ref counts, copy on write when a sequence appends into a block whose ref count
# is above 1) runs n samples forked from one prompt. We count blocks and copies with and without sharing and
# check them against the closed forms. Block size is vLLM's default of 16 tokens; block bytes use Llama-3.1-70B.

# %%
import math

from qbank.verify import check, claim, fact, given

B = fact("vllm.block_size_default", "block_tokens", unit="tokens")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_per_token")
n = given("samples", 8, unit="requests", source="example: n=8 parallel samples of one prompt")


class BlockManager:
    """Ref-counted blocks; `append` copies a shared last block before writing into it."""

    def __init__(self) -> None:
        self.ref: dict[int, int] = {}
        self.fill: dict[int, int] = {}
        self.next = 0
        self.copies = 0

    def alloc(self, fill: int) -> int:
        b, self.next = self.next, self.next + 1
        self.ref[b], self.fill[b] = 1, fill
        return b

    def fork(self, table: list[int]) -> list[int]:
        for b in table:
            self.ref[b] += 1
        return list(table)

    def append(self, table: list[int]) -> None:
        last = table[-1] if table else None
        if last is None or self.fill[last] == B:
            table.append(self.alloc(1))
            return
        if self.ref[last] > 1:  # copy on write
            self.ref[last] -= 1
            new = self.alloc(self.fill[last])
            self.copies += 1
            table[-1] = new
            last = new
        self.fill[last] += 1

    def live(self) -> int:
        return sum(1 for r in self.ref.values() if r > 0)


def simulate(prompt: int, gen: int, samples: int, share: bool) -> tuple[int, int]:
    m = BlockManager()
    tables: list[list[int]] = []
    if share:
        base: list[int] = []
        for _ in range(prompt):
            m.append(base)
        tables = [base] + [m.fork(base) for _ in range(samples - 1)]
    else:
        for _ in range(samples):
            t: list[int] = []
            for _ in range(prompt):
                m.append(t)
            tables.append(t)
    for _ in range(gen):  # decode: each sample writes one token per step
        for t in tables:
            m.append(t)
    return m.live(), m.copies


def closed_form(prompt: int, gen: int, samples: int) -> tuple[int, int, int]:
    full, rem = divmod(prompt, int(B))
    unshared = samples * math.ceil((prompt + gen) / B)
    shared = full + samples * math.ceil((rem + gen) / B)
    copies = samples - 1 if rem else 0
    return unshared, shared, copies


# %% [markdown]
# ## Three workloads

# %%
cases = {
    "misaligned": (
        given("prompt_misaligned", 1000, unit="tokens", source="example prompt, 1000 = 62 x 16 + 8"),
        given("gen_short", 200, unit="tokens", source="example reply length"),
    ),
    "aligned": (given("prompt_aligned", 1008, unit="tokens", source="example prompt, 1008 = 63 x 16"), 200),
    "long_gen": (
        given("prompt_short", 200, unit="tokens", source="example short prompt"),
        given("gen_long", 4000, unit="tokens", source="example long reply (reasoning-style)"),
    ),
}
out = {}
for name, (p, g) in cases.items():
    u_sim, u_cp = simulate(int(p), int(g), int(n), share=False)
    s_sim, s_cp = simulate(int(p), int(g), int(n), share=True)
    u_cf, s_cf, cp_cf = closed_form(int(p), int(g), int(n))
    check(u_sim == u_cf and s_sim == s_cf and s_cp == cp_cf and u_cp == 0, f"{name}: simulation matches closed form")
    out[name] = (u_sim, s_sim, s_cp)
    claim(f"{name}_blocks_unshared", u_sim, unit="blocks")
    claim(f"{name}_blocks_shared", s_sim, unit="blocks")
    claim(f"{name}_copies", s_cp, unit="blocks")
    claim(f"{name}_saving", 1 - s_sim / u_sim, unit="fraction")
    print(f"{name:10s} unshared {u_sim} shared {s_sim} copies {s_cp} saving {1 - s_sim / u_sim:.1%}")

# %%
block_bytes = claim("block_bytes", B * kv_tok, unit="B")
claim("misaligned_unshared_bytes", out["misaligned"][0] * block_bytes, unit="B")
claim("misaligned_shared_bytes", out["misaligned"][1] * block_bytes, unit="B")
claim("misaligned_copy_bytes", out["misaligned"][2] * block_bytes, unit="B")
full_blocks_mis = claim("misaligned_full_prompt_blocks", 1000 // B, unit="blocks")
rem_mis = claim("misaligned_tail_tokens", 1000 % B, unit="tokens")
extra = claim("extra_samples", n - 1, unit="requests")  # samples beyond the first, each a separate request in V1
claim("tail_recompute_tokens_vllm_v1", extra * rem_mis, unit="tokens")
check(out["aligned"][2] == 0, "an aligned prompt never copies")
claim("last_writer_keeps_original", 1, unit="blocks", note="the last writer finds ref count 1 and writes in place")
