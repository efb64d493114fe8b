"""Tree verification in Triton: attention under the tree mask, and multi-draft acceptance down the tree.

Tree layout: nodes 0..N-1 packed after a prefix of P tokens, parents[j] < j (-1 = the last accepted
token), so a parent always precedes its children. anc[i, j] = 1 when node j is node i or one of its
ancestors.

Attention: node i attends to every prefix position and to the tree nodes j with anc[i, j]; one
program per (node, query head), keys streamed in blocks with an online softmax; grouped-query
heads map query head h to key/value head h // (H / H_kv).

Acceptance: recursive rejection sampling down the tree, the multi-draft scheme of SpecInfer (Miao et
al., arXiv:2305.09781, §4, multi-step speculative sampling) generalised as in Recursive Speculative
Decoding (Jeon et al., arXiv:2402.14160): at the current node, try its children in order; child j,
drawn from the draft distribution q_j, is accepted with probability min(1, r(x_j) / q_j(x_j)) where
r is the CURRENT residual; on rejection r <- norm(max(0, r - q_j)) and the next sibling is tried
against that. Accepting a child moves to it with r <- p(child). When no child is accepted (or the
node is a leaf) one token is sampled from r. Children drawn i.i.d. from one q have q_j = q; distinct
top-k children sampled without replacement have q_j = q with the earlier siblings removed.
The single-draft residual (every sibling tested against the node's own p, the fallback sampled from
norm(max(0, p - q))) is the bug the SINGLE_DRAFT flag reproduces.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def tree_attention_kernel(
    q_ptr, k_ptr, v_ptr, anc_ptr, out_ptr, prefix_len, n_nodes, n_heads, n_kv_heads, scale,
    D: tl.constexpr, BLOCK_K: tl.constexpr, CHAIN: tl.constexpr,
):  # fmt: skip
    node = tl.program_id(0)
    h = tl.program_id(1)
    kvh = h // (n_heads // n_kv_heads)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + (node * n_heads + h) * D + d)
    total = prefix_len + n_nodes
    m = tl.full((), -1e30, tl.float32)  # finite: a block with every key masked must not make NaN
    den = tl.zeros((), tl.float32)
    acc = tl.zeros((D,), tl.float32)
    for start in range(0, total, BLOCK_K):
        col = start + tl.arange(0, BLOCK_K)
        in_seq = col < total
        is_tree = (col >= prefix_len) & in_seq
        anc = tl.load(anc_ptr + node * n_nodes + (col - prefix_len), mask=is_tree, other=0)
        allowed = (col < prefix_len) | (anc != 0)
        if CHAIN:  # the deliberately wrong mask: causal over the packing order, siblings and cousins leak in
            allowed = in_seq & (col <= prefix_len + node)
        kv_off = (col[:, None] * n_kv_heads + kvh) * D + d[None, :]
        k = tl.load(k_ptr + kv_off, mask=in_seq[:, None], other=0.0)
        s = tl.sum(k * q[None, :], axis=1) * scale
        s = tl.where(allowed, s, -1e30)
        m_new = tl.maximum(m, tl.max(s, axis=0))
        w = tl.where(allowed, tl.exp(s - m_new), 0.0)
        alpha = tl.exp(m - m_new)
        v = tl.load(v_ptr + kv_off, mask=in_seq[:, None], other=0.0)
        acc = acc * alpha + tl.sum(w[:, None] * v, axis=0)
        den = den * alpha + tl.sum(w, axis=0)
        m = m_new
    tl.store(out_ptr + (node * n_heads + h) * D + d, acc / den)


def tree_attention(q, k, v, anc, prefix_len, block_k=16, chain=False):
    """q [N, H, D], k and v [P + N, H_kv, D] float32, anc [N, N] int8 -> out [N, H, D]."""
    n, h, d = q.shape
    out = torch.empty_like(q)
    grid = (n, h)
    tree_attention_kernel[grid](
        q.contiguous(), k.contiguous(), v.contiguous(), anc.contiguous(), out,
        prefix_len, n, h, k.shape[1], d**-0.5, D=d, BLOCK_K=block_k, CHAIN=chain,
    )  # fmt: skip
    return out


def tree_attention_causal(q, k, v, anc, prefix_len):
    """The deliberately broken launch: a causal mask over the packed nodes instead of the tree mask."""
    return tree_attention(q, k, v, anc, prefix_len, chain=True)


def tree_attention_reference(q, k, v, anc, prefix_len):
    """Dense masked attention in PyTorch: [N, P + N] mask = prefix columns plus the ancestor matrix."""
    n, h, d = q.shape
    group = h // k.shape[1]
    kk = k.repeat_interleave(group, dim=1)  # [L, H, D]
    vv = v.repeat_interleave(group, dim=1)
    mask = torch.cat([torch.ones(n, prefix_len, dtype=torch.bool, device=q.device), anc.bool()], dim=1)
    s = torch.einsum("nhd,lhd->hnl", q, kk) * d**-0.5
    s = s.masked_fill(~mask, float("-inf"))
    return torch.einsum("hnl,lhd->nhd", torch.softmax(s, -1), vv)


@triton.jit
def tree_accept_kernel(
    p_ptr, q_ptr, tok_ptr, parent_ptr, u_ptr, u_final_ptr, out_ptr, n_nodes, vocab,
    BLOCK_V: tl.constexpr, SINGLE_DRAFT: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0)
    offs = tl.arange(0, BLOCK_V)
    live = offs < vocab
    p_base = p_ptr + b * (n_nodes + 1) * vocab
    p_node = tl.load(p_base + offs, mask=live, other=0.0)  # the target at the current node
    r = p_node  # the residual the next sibling is tested against
    cur = b * 0 - 1  # current node; -1 = the last accepted token
    for j in range(n_nodes):  # parents precede children, so one pass in order walks the tree
        is_child = tl.load(parent_ptr + j) == cur
        t = tl.load(tok_ptr + b * n_nodes + j)
        qj = tl.load(q_ptr + (b * n_nodes + j) * vocab + offs, mask=live, other=0.0)
        if SINGLE_DRAFT:  # the bug: every sibling tested against p, not against the running residual
            r = tl.where(is_child, p_node, r)
        r_t = tl.sum(tl.where(offs == t, r, 0.0), axis=0)
        q_t = tl.sum(tl.where(offs == t, qj, 0.0), axis=0)
        accept = is_child & (tl.load(u_ptr + b * n_nodes + j) * q_t < r_t)
        reject = is_child & (accept == 0)
        left = tl.maximum(r - qj, 0.0)
        mass = tl.sum(left, axis=0)
        p_next = tl.load(p_base + (j + 1) * vocab + offs, mask=live, other=0.0)
        r = tl.where(accept, p_next, tl.where(reject & (mass > 0), left / tl.where(mass > 0, mass, 1.0), r))
        p_node = tl.where(accept, p_next, p_node)
        cur = tl.where(accept, j, cur)
    # one token from the residual (all children rejected) or from p (a leaf: the bonus token)
    cdf = tl.cumsum(r, axis=0)
    x = tl.load(u_final_ptr + b) * tl.sum(r, axis=0)
    final = tl.minimum(tl.sum(tl.where(live & (cdf <= x), 1, 0), axis=0), vocab - 1)
    tl.store(out_ptr + b * 2, cur)
    tl.store(out_ptr + b * 2 + 1, final)


def tree_accept(p, q, tokens, parents, u, u_final, single_draft=False):
    """p [B, N + 1, V] target probabilities (row 0 after the last accepted token, row j + 1 after node j),
    q [B, N, V] the draft distribution node j was drawn from, tokens [B, N] int32, parents [N] int32,
    u [B, N] and u_final [B] uniforms -> [B, 2] int32: (deepest accepted node or -1, the emitted token)."""
    b, n1, v = p.shape
    out = torch.empty(b, 2, dtype=torch.int32, device=p.device)
    tree_accept_kernel[(b,)](
        p.contiguous(), q.contiguous(), tokens.contiguous(), parents.contiguous(), u.contiguous(),
        u_final.contiguous(), out, n1 - 1, v, BLOCK_V=triton.next_power_of_2(v), SINGLE_DRAFT=single_draft,
    )  # fmt: skip
    return out


def tree_accept_single_draft(p, q, tokens, parents, u, u_final):
    """The deliberately broken launch: the single-draft residual applied to several drafts."""
    return tree_accept(p, q, tokens, parents, u, u_final, single_draft=True)


def accept_row(p, q, tokens, parents, u, u_final, single_draft=False):
    """One row in plain PyTorch, node by node, in the kernel's order of operations."""
    n = tokens.numel()
    p_node = p[0]
    r = p_node
    cur = -1
    for j in range(n):
        if int(parents[j]) != cur:
            continue
        if single_draft:
            r = p_node
        t = int(tokens[j])
        if float(u[j]) * float(q[j, t]) < float(r[t]):
            cur, p_node, r = j, p[j + 1], p[j + 1]
            continue
        left = torch.clamp(r - q[j], min=0.0)
        mass = left.sum()
        if float(mass) > 0:
            r = left / mass
    cdf = torch.cumsum(r, 0)
    x = float(u_final) * r.sum()
    final = min(int((cdf <= x).sum()), r.numel() - 1)
    return [cur, final]


def tree_accept_reference(p, q, tokens, parents, u, u_final):
    """[B, 2] int32 from :func:`accept_row` over the batch."""
    rows = [accept_row(p[i], q[i], tokens[i], parents, u[i], u_final[i]) for i in range(p.shape[0])]
    return torch.tensor(rows, dtype=torch.int32, device=p.device)


def ancestors(parents):
    """[N, N] bool: anc[i, j] = node j is node i or one of its ancestors. One parent step per iteration,
    vectorised over nodes: as many iterations as the tree is deep (not pointer jumping, which would
    square the ancestor relation and need only log2(depth) rounds)."""
    n = parents.numel()
    anc = torch.eye(n, dtype=torch.bool)
    cur = parents.clone()
    rows = torch.arange(n)
    while bool((cur >= 0).any()):
        live = cur >= 0
        anc[rows[live], cur[live]] = True
        cur = torch.where(live, parents[cur.clamp(min=0)], cur)
    return anc


def first_token_distribution(p, q, k, single_draft=False):
    """Exact distribution of the token emitted at a node with k children drawn i.i.d. from q, p the
    target there (float64 [V]): enumerate all V**k candidate tuples, weight each by its probability
    under q and follow the acceptance tests analytically. Lossless means the result equals p."""
    v = p.numel()
    out = torch.zeros(v, dtype=torch.float64)
    for flat in range(v**k):
        cands = [(flat // v**i) % v for i in range(k)]
        weight = 1.0
        for x in cands:
            weight *= float(q[x])
        if weight == 0.0:
            continue
        r, alive = p.clone(), 1.0
        for x in cands:
            if single_draft:
                r = p
            a = min(1.0, float(r[x]) / float(q[x]))
            out[x] += weight * alive * a
            alive *= 1.0 - a
            left = torch.clamp(r - q, min=0.0)
            if float(left.sum()) > 0:
                r = left / left.sum()
        out += weight * alive * r
    return out
