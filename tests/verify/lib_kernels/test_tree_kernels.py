"""Tree attention and multi-draft tree acceptance against their references through the interpreter."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch

# a branching tree: two children of the root, node 0 has two children, node 2 one, node 1 one
PARENTS = [-1, -1, 0, 0, 2, 1]


@pytest.fixture(scope="module")
def tk(kernels: Callable[[str], ModuleType]) -> ModuleType:
    return kernels("tree_kernels")


def test_ancestor_matrix(tk: ModuleType) -> None:
    anc = tk.ancestors(torch.tensor(PARENTS))
    assert anc[4].nonzero().squeeze(-1).tolist() == [0, 2, 4]
    assert anc[5].nonzero().squeeze(-1).tolist() == [1, 5]
    assert anc.sum(1).tolist() == [1, 1, 2, 2, 3, 2]  # depth


@pytest.fixture(scope="module")
def attn_case(tk: ModuleType) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    n, p, h, hkv, d = len(PARENTS), 5, 4, 2, 16  # grouped-query: 2 query heads per key/value head
    anc = tk.ancestors(torch.tensor(PARENTS)).to(torch.int8)
    q = torch.randn(n, h, d, generator=g)
    k = torch.randn(p + n, hkv, d, generator=g)
    v = torch.randn(p + n, hkv, d, generator=g)
    return q, k, v, anc, torch.tensor(p)


def test_tree_attention_matches_dense_masked_attention(tk: ModuleType, attn_case: tuple[torch.Tensor, ...]) -> None:
    q, k, v, anc, p = attn_case
    ref = tk.tree_attention_reference(q, k, v, anc, int(p))
    for block_k in (4, 16):  # several key blocks (online softmax) and one
        assert torch.allclose(tk.tree_attention(q, k, v, anc, int(p), block_k=block_k), ref, rtol=1e-5, atol=1e-6)


def test_causal_mask_over_the_packing_fails(tk: ModuleType, attn_case: tuple[torch.Tensor, ...]) -> None:
    q, k, v, anc, p = attn_case
    ref = tk.tree_attention_reference(q, k, v, anc, int(p))
    wrong = tk.tree_attention_causal(q, k, v, anc, int(p))
    assert torch.allclose(wrong[:1], ref[:1], rtol=1e-5, atol=1e-6)  # node 0 sees the same keys either way
    assert not torch.allclose(wrong, ref, rtol=1e-3, atol=1e-3)  # node 1 onwards sees siblings


def accept_case(rows: int, v: int, seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    n = len(PARENTS)
    p = torch.softmax(torch.randn(rows, n + 1, v, generator=g) * 1.5, -1)
    q = torch.softmax(torch.randn(rows, n, v, generator=g) * 1.5, -1)
    tokens = torch.multinomial(q.reshape(-1, v), 1, generator=g).reshape(rows, n).to(torch.int32)
    u = torch.rand(rows, n, generator=g)
    u_final = torch.rand(rows, generator=g)
    return p, q, tokens, torch.tensor(PARENTS, dtype=torch.int32), u, u_final


def test_tree_accept_matches_reference(tk: ModuleType) -> None:
    args = accept_case(32, 6, seed=2)
    got = tk.tree_accept(*args)
    assert torch.equal(got, tk.tree_accept_reference(*args))
    assert {-1, 0, 1}.issubset(set(got[:, 0].tolist()))  # rows stop at the root, after one node, deeper


def test_all_rejected_and_all_accepted_rows(tk: ModuleType) -> None:
    p, q, tokens, parents, u, u_final = accept_case(2, 6, seed=3)
    # row 0: the target gives every drafted token probability 0, so every child is rejected
    drafted = tokens[0].long()
    p[0, 0] = 1.0
    p[0, 0, drafted] = 0.0
    p[0, 0] /= p[0, 0].sum()
    # row 1: target equals draft everywhere and u < 1, so every test accepts; the walk ends at a leaf
    for j, par in reversed(list(enumerate(PARENTS))):  # reversed: the first child's q wins
        p[1, par + 1] = q[1, j]
    got = tk.tree_accept(p, q, tokens, parents, u, u_final)
    assert torch.equal(got, tk.tree_accept_reference(p, q, tokens, parents, u, u_final))
    assert int(got[0, 0]) == -1 and int(got[0, 1]) not in drafted[[0, 1]].tolist()  # residual excludes them
    assert int(got[1, 0]) == 4  # node 0, then node 2, then the leaf 4: the first child wins at each level


def test_multi_draft_residual_is_lossless_and_single_draft_is_not(tk: ModuleType) -> None:
    g = torch.Generator().manual_seed(4)
    p = torch.softmax(torch.randn(5, generator=g, dtype=torch.float64) * 2, -1)
    q = torch.softmax(torch.randn(5, generator=g, dtype=torch.float64) * 2, -1)
    right = tk.first_token_distribution(p, q, k=3)
    wrong = tk.first_token_distribution(p, q, k=3, single_draft=True)
    assert float((right - p).abs().max()) < 1e-12
    assert float((wrong - p).abs().sum()) / 2 > 0.01  # total variation from the target
    assert torch.allclose(tk.first_token_distribution(p, q, k=1, single_draft=True), p, atol=1e-12)  # k = 1 agrees


def test_single_draft_kernel_fails_the_check(tk: ModuleType) -> None:
    args = accept_case(32, 6, seed=2)
    assert not torch.equal(tk.tree_accept_single_draft(*args), tk.tree_accept_reference(*args))
