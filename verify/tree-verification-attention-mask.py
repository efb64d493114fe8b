# %% [markdown]
# # Tree verification: the tree attention mask and accepted-path selection
# Tree-structured verification as in SpecInfer (Miao et al., arXiv:2305.09781) and Medusa
# (Cai et al., arXiv:2401.10774 §2.1.2): every draft node attends to the prefix, its ancestors and itself,
# and sits at position prefix_len + depth. A tiny single-layer attention model in float64 stands in for the
# target; greedy verification (temperature 0) is checked against running each branch sequentially.

# %%
import torch

from qbank.verify import check, claim, kernel_check

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


def ancestors(parents: torch.Tensor) -> torch.Tensor:
    """[N, N] bool: anc[i, j] = node j is node i or one of its ancestors (pointer jumping, vectorized)."""
    n = parents.numel()
    anc = torch.eye(n, dtype=torch.bool)
    cur = parents.clone()
    rows = torch.arange(n)
    for _ in range(n):  # depth <= n; stops early when every pointer reached the root
        live = cur >= 0
        if not bool(live.any()):
            break
        anc[rows[live], cur[live]] = True
        cur = torch.where(live, parents[cur.clamp(min=0)], cur)
    return anc


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
print(n_nodes, max_depth, n_leaves, accepted, emitted, sel.tolist())
