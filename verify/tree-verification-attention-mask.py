# %% [markdown]
# # Tree verification: the tree attention mask and accepted-path selection
# Tree-structured verification as in SpecInfer (Miao et al., arXiv:2305.09781) and Medusa
# (Cai et al., arXiv:2401.10774 §2.1.2): every draft node attends to the prefix, its ancestors and itself,
# and sits at position prefix_len + depth. A tiny single-layer attention model in float64 stands in for the
# target; greedy verification (temperature 0) is checked against running each branch sequentially.

# %%
import torch

from tree_kernels import (
    ancestors,
    first_token_distribution,
    tree_accept,
    tree_accept_reference,
    tree_accept_single_draft,
    tree_attention,
    tree_attention_causal,
    tree_attention_reference,
)

from qbank.verify import check, claim, given, kernel_check, triton_check

torch.manual_seed(0)
V, D = 16, 32
emb = torch.randn(V, D, dtype=torch.float64)
pos = torch.randn(64, D, dtype=torch.float64) * 0.5
wq, wk, wv, wo = (torch.randn(D, D, dtype=torch.float64) / D**0.5 for _ in range(4))
unembed = torch.randn(D, V, dtype=torch.float64)


def model(tokens: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """One attention layer + unembedding; mask[i, j] True where row i may attend to column j."""
    h = emb[tokens] + pos[positions]
    q, k, v = h @ wq, h @ wk, h @ wv
    scores = (q @ k.T) / D**0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    return (h + torch.softmax(scores, -1) @ v @ wo) @ unembed


def causal(n: int) -> torch.Tensor:
    return torch.tril(torch.ones(n, n, dtype=torch.bool))


prefix = torch.randint(0, V, (6,))
P = prefix.numel()


def greedy_continue(tokens: list[int], n: int) -> list[int]:
    out = list(tokens)
    for _ in range(n):
        t = torch.tensor(out)
        out.append(int(model(t, torch.arange(len(out)), causal(len(out)))[-1].argmax()))
    return out[len(tokens) :]


# %% [markdown]
# ## A draft tree: parents[i] is the parent node (-1 = the last accepted token)
# Branches mix the target's own greedy continuation (so something is accepted) with wrong tokens.

# %%
g = greedy_continue(prefix.tolist(), 4)
wrong = [(t + 1) % V for t in g]
#          0      1      2         3         4         5        6         7         8         9
parents = [-1, -1, 0, 0, 1, 2, 2, 3, 5, 5]
tokens = [g[0], wrong[0], g[1], wrong[1], g[1], g[2], wrong[2], g[2], g[3], wrong[3]]
parents_t, tokens_t = torch.tensor(parents), torch.tensor(tokens)
n_nodes = int(claim("tree_nodes", len(parents), unit="nodes"))


# ancestors(parents) comes from verify/_lib/tree_kernels.py: one parent step per iteration, vectorised
# over nodes, so as many iterations as the tree is deep.


def tree_mask(parents: torch.Tensor, prefix_len: int) -> torch.Tensor:
    """[(P+N), (P+N)] attention mask: causal over the prefix, ancestors-or-self inside the tree."""
    n = parents.numel()
    m = torch.zeros(prefix_len + n, prefix_len + n, dtype=torch.bool)
    m[:prefix_len, :prefix_len] = causal(prefix_len)
    m[prefix_len:, :prefix_len] = True
    m[prefix_len:, prefix_len:] = ancestors(parents)
    return m


def tree_mask_reference(parents: torch.Tensor, prefix_len: int) -> torch.Tensor:
    """Walk up from every node in Python."""
    n = parents.numel()
    m = torch.zeros(prefix_len + n, prefix_len + n, dtype=torch.bool)
    for i in range(prefix_len):
        for j in range(i + 1):
            m[i, j] = True
    for i in range(n):
        m[prefix_len + i, :prefix_len] = True
        j = i
        while j >= 0:
            m[prefix_len + i, prefix_len + j] = True
            j = int(parents[j])
    return m


kernel_check("tree_mask_vs_walk", tree_mask, tree_mask_reference, parents_t, P)
depth = ancestors(parents_t).sum(1)  # 1 for children of the root
max_depth = int(claim("tree_depth", int(depth.max())))
leaves = [i for i in range(n_nodes) if i not in parents]
n_leaves = int(claim("tree_leaves", len(leaves)))

# %% [markdown]
# ## One tree pass equals every branch run sequentially


# %%
def tree_logits(prefix: torch.Tensor, tokens: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
    """Logits at [last prefix token, node 0..N-1] from a single forward pass over prefix + tree."""
    seq = torch.cat([prefix, tokens])
    d = ancestors(parents).sum(1)
    positions = torch.cat([torch.arange(prefix.numel()), prefix.numel() - 1 + d])
    out = model(seq, positions, tree_mask(parents, prefix.numel()))
    return out[prefix.numel() - 1 :]


def branch_logits(prefix: torch.Tensor, tokens: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
    """Same rows, computed by running each node's root-to-node path as an ordinary causal sequence."""
    plen = prefix.numel()
    rows = [model(prefix, torch.arange(plen), causal(plen))[-1]]
    for i in range(tokens.numel()):
        path, j = [], i
        while j >= 0:
            path.append(int(tokens[j]))
            j = int(parents[j])
        seq = torch.cat([prefix, torch.tensor(path[::-1])])
        rows.append(model(seq, torch.arange(seq.numel()), causal(seq.numel()))[-1])
    return torch.stack(rows)


kernel_check("tree_pass_vs_sequential_branches", tree_logits, branch_logits, prefix, tokens_t, parents_t)

# %% [markdown]
# ## Accepted-path selection (greedy), vectorized, against verifying each branch on its own


# %%
def select_path(logits: torch.Tensor, tokens: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
    """Returns [accepted node ids..., -1 padding] of length N+1 and the bonus token at the end."""
    n = tokens.numel()
    pred = logits.argmax(-1)  # row 0 = prefix's prediction, row i+1 = node i's
    ok = tokens == pred[parents + 1]  # node accepted if it is its parent's argmax
    anc = ancestors(parents)
    path_ok = ~(anc & ~ok.unsqueeze(0)).any(1)  # every ancestor-or-self accepted
    depth = anc.sum(1)
    score = torch.where(path_ok, depth, torch.zeros_like(depth))
    best = int(score.argmax())  # first node of maximal accepted depth
    out = torch.full((n + 1,), -1, dtype=torch.long)
    if int(score[best]) == 0:
        out[-1] = int(pred[0])  # nothing accepted: the target's own token
        return out
    chain = anc[best].nonzero().squeeze(-1)  # ancestors are ordered: parents precede children
    out[: chain.numel()] = tokens[chain]
    out[-1] = int(pred[best + 1])
    return out


def select_reference(logits: torch.Tensor, tokens: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
    """Verify each root-to-leaf branch token by token with ordinary decoding; keep the longest."""
    n = tokens.numel()
    best_toks: list[int] = []
    best_bonus = int(greedy_continue(prefix.tolist(), 1)[0])
    for leaf in [i for i in range(n) if i not in parents.tolist()]:
        path, j = [], leaf
        while j >= 0:
            path.append(int(tokens[j]))
            j = int(parents[j])
        path.reverse()
        ctx, acc = prefix.tolist(), []
        for t in path:
            nxt = greedy_continue(ctx, 1)[0]
            if t != nxt:
                break
            acc.append(t)
            ctx.append(t)
        if len(acc) > len(best_toks):
            best_toks, best_bonus = acc, greedy_continue(ctx, 1)[0]
    out = torch.full((n + 1,), -1, dtype=torch.long)
    out[: len(best_toks)] = torch.tensor(best_toks, dtype=torch.long)
    out[-1] = best_bonus
    return out


logits = tree_logits(prefix, tokens_t, parents_t)
kernel_check(
    "accepted_path_vs_sequential",
    lambda lg, tk, pa: select_path(lg, tk, pa),
    select_reference,
    logits,
    tokens_t,
    parents_t,
)
sel = select_path(logits, tokens_t, parents_t)
accepted = int(claim("accepted_tokens", int((sel[:-1] >= 0).sum()), unit="tokens"))
emitted = claim("emitted_tokens", accepted + 1, unit="tokens")
check(sel[:accepted].tolist() == g[:accepted], "the accepted path is the target's own greedy continuation")

# %% [markdown]
# ## Cost in target passes and in query rows

# %%
seq_passes = claim("sequential_branch_passes", n_leaves, unit="steps")

# %% [markdown]
# ## The tree-attention kernel (Triton)
# One program per (node, query head) streams the prefix and tree keys in blocks with an online softmax;
# a key is visible when it is in the prefix or an ancestor-or-self of the node. Grouped-query heads
# (4 query heads on 2 KV heads) as in every current model. A kernel that uses the causal mask over the
# packing order instead must disagree.

# %%
g = torch.Generator().manual_seed(1)
heads = int(given("attn_heads", 4, unit="heads", source="toy attention shape for the kernel check"))
kv_heads = int(given("attn_kv_heads", 2, unit="heads", source="toy attention shape for the kernel check"))
hd = int(given("attn_head_dim", 16, unit="dims", source="toy attention shape for the kernel check"))
anc8 = ancestors(parents_t).to(torch.int8)
qa = torch.randn(n_nodes, heads, hd, generator=g)
ka = torch.randn(P + n_nodes, kv_heads, hd, generator=g)
va = torch.randn(P + n_nodes, kv_heads, hd, generator=g)
attn_bytes = 4 * (qa.numel() + ka.numel() + va.numel() + qa.numel()) + anc8.numel()
attn_flops = 4 * n_nodes * heads * (P + n_nodes) * hd
triton_check("tree_attention", tree_attention, tree_attention_reference, qa, ka, va, anc8, P,
             bytes_moved=attn_bytes, flops=attn_flops, rtol=1e-5, atol=1e-6)
triton_check("tree_attention_causal_mask", tree_attention_causal, tree_attention_reference, qa, ka, va, anc8, P,
             expect_mismatch=True)

# %% [markdown]
# ## Sampling: multi-draft acceptance with the recursive residual
# SpecInfer (Miao et al., arXiv:2305.09781, §4, multi-step speculative sampling) and Recursive Speculative
# Decoding (Jeon et al., arXiv:2402.14160): at a node, children are tried in order; child j, drawn from
# q_j, is accepted with probability min(1, r(x_j) / q_j(x_j)) against the CURRENT residual r, and a
# rejection updates r <- norm(max(0, r - q_j)) before the next sibling. First: the exact distribution of
# the emitted token at a node with 3 children drawn i.i.d. from q, over all candidate tuples.

# %%
vs = int(given("toy_vocab", 6, unit="tokens", source="toy vocabulary for exact enumeration"))
k_children = int(given("children", 3, unit="elements", source="children per node in the enumeration"))
ge = torch.Generator().manual_seed(4)
p_node = torch.softmax(torch.randn(vs, generator=ge, dtype=torch.float64) * 2, -1)
q_node = torch.softmax(torch.randn(vs, generator=ge, dtype=torch.float64) * 2, -1)
tv_multi = claim("tv_multi_draft", float((first_token_distribution(p_node, q_node, k_children) - p_node).abs().sum()) / 2,
                 unit="fraction")
tv_single = claim("tv_single_draft",
                  float((first_token_distribution(p_node, q_node, k_children, single_draft=True) - p_node).abs().sum()) / 2,
                  unit="fraction")
tv_one = float((first_token_distribution(p_node, q_node, 1, single_draft=True) - p_node).abs().sum()) / 2
check(tv_multi < 1e-12, "recursive residual: the emitted token is distributed exactly as the target")
check(tv_single > 0.01, "single-draft residual with several drafts: the output is not the target's")
check(tv_one < 1e-12, "with one draft the two rules coincide (why single-draft tests pass)")


# %% [markdown]
# Children need not be i.i.d. Drawn without replacement (RSD's Gumbel-top-k), child j's draft distribution
# is q with the earlier siblings removed and renormalised. Taken as the deterministic top-k of q (EAGLE-style
# trees), a child is no sample at all: its q_j is a point mass, so it is accepted with probability r(x_j)
# and a rejection removes x_j from r (vLLM's NO_DRAFT_PROBS path does the same with draft_prob = 1).
# Feeding the i.i.d. rule's q to deterministic top-k children is the bug.


# %%
def first_token_without_replacement(p, q, k):
    """Exact emitted-token distribution, k children drawn from q without replacement, q_j renormalised."""
    v = p.numel()
    out = torch.zeros(v, dtype=torch.float64)
    for flat in range(v**k):
        cands = [(flat // v**i) % v for i in range(k)]
        if len(set(cands)) < k:
            continue
        qs, used = [], torch.zeros(v, dtype=torch.bool)
        for x in cands:  # q_j: q over the tokens not drawn yet
            qs.append(torch.where(used, 0.0, q) / float(q[~used].sum()))
            used[x] = True
        weight = 1.0
        for x, qj in zip(cands, qs):
            weight *= float(qj[x])
        r, alive = p.clone(), 1.0
        for x, qj in zip(cands, qs):
            a = min(1.0, float(r[x]) / float(qj[x]))
            out[x] += weight * alive * a
            alive *= 1.0 - a
            left = torch.clamp(r - qj, min=0.0)
            if float(left.sum()) > 0:
                r = left / left.sum()
        out += weight * alive * r
    return out


def first_token_top_k(p, q, k, as_samples=False):
    """Exact emitted-token distribution, children = the k most likely tokens of q, tried in order; as point
    masses (correct) or, with as_samples, as if each had been drawn from q (the bug)."""
    r, alive = p.clone(), 1.0
    out = torch.zeros_like(p)
    for x in torch.argsort(q, descending=True)[:k].tolist():
        qj = q if as_samples else torch.nn.functional.one_hot(torch.tensor(x), p.numel()).double()
        a = min(1.0, float(r[x]) / float(qj[x]))
        out[x] += alive * a
        alive *= 1.0 - a
        left = torch.clamp(r - qj, min=0.0)
        if float(left.sum()) > 0:
            r = left / left.sum()
    return out + alive * r


tv_wor = float((first_token_without_replacement(p_node, q_node, k_children) - p_node).abs().sum()) / 2
tv_topk = float((first_token_top_k(p_node, q_node, k_children) - p_node).abs().sum()) / 2
tv_topk_bug = claim("tv_top_k_as_samples",
                    float((first_token_top_k(p_node, q_node, k_children, as_samples=True) - p_node).abs().sum()) / 2,
                    unit="fraction")
check(tv_wor < 1e-12, "without replacement, with q_j renormalised over the unused tokens: exactly the target")
check(tv_topk < 1e-12, "deterministic top-k children as point masses: exactly the target")
check(tv_topk_bug > 0.01, "deterministic top-k children tested as if drawn from q: not the target")

# %% [markdown]
# ## The acceptance kernel (Triton), down the whole tree
# Per batch row: target probabilities at the root and after every node, the draft distribution each
# node was drawn from, the drafted tokens, uniforms supplied as input. Output: the deepest accepted node
# and the emitted token (residual sample, or the bonus token at a leaf). Equal to the PyTorch reference
# row by row given the same uniforms; the single-draft variant must disagree.

# %%
rows = int(given("accept_rows", 16, unit="requests", source="batch of the acceptance kernel check"))
gk = torch.Generator().manual_seed(2)
p_rows = torch.softmax(torch.randn(rows, n_nodes + 1, vs, generator=gk) * 1.5, -1)
q_rows = torch.softmax(torch.randn(rows, n_nodes, vs, generator=gk) * 1.5, -1)
drafted = torch.multinomial(q_rows.reshape(-1, vs), 1, generator=gk).reshape(rows, n_nodes).to(torch.int32)
u_rows = torch.rand(rows, n_nodes, generator=gk)
u_final = torch.rand(rows, generator=gk)
par32 = parents_t.to(torch.int32)
accept_args = (p_rows, q_rows, drafted, par32, u_rows, u_final)
triton_check("tree_accept", tree_accept, tree_accept_reference, *accept_args,
             bytes_moved=4 * (p_rows.numel() + q_rows.numel() + drafted.numel() + u_rows.numel() + 3 * rows))
triton_check("tree_accept_single_draft_residual", tree_accept_single_draft, tree_accept_reference, *accept_args,
             expect_mismatch=True)
walk = tree_accept_reference(*accept_args)
deepest = claim("max_accepted_depth", int(ancestors(parents_t).sum(1)[walk[:, 0].clamp(min=0)].max()), unit="tokens")
check(bool((walk[:, 0] == -1).any()) and deepest >= 2, "some rows reject at the root, some go deeper")
print(n_nodes, max_depth, n_leaves, accepted, emitted, sel.tolist())
