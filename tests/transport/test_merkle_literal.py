"""Merkle roots against hand computations (issue 28 §4: the tests only compared the code with itself).

``transport/integrity.merkle_root``: leaves are ``sha256("leaf:" + digest)`` over the sorted,
de-duplicated digests; a level pairs neighbours as ``sha256("node:" + left + right)`` and
carries an odd last node up unchanged; no digests give sha256 of the empty string. Each
case below spells the tree out with hashlib, and pins the root as a literal (computed once
with hashlib alone), so a change to the scheme fails here even if the code and the hand tree
were to change together.
"""

from __future__ import annotations

import hashlib

import pytest

from oracleproto.store.sample_entries import sample_entries_root, sample_leaf
from oracleproto.transport.integrity import EMPTY_ROOT, merkle_root

D1, D2, D3, D4, D5 = (c * 64 for c in "12345")


def h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def leaf(digest: str) -> str:
    return h("leaf:" + digest)


def node(left: str, right: str) -> str:
    return h("node:" + left + right)


def test_empty() -> None:
    assert merkle_root([]) == EMPTY_ROOT == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_one_leaf() -> None:
    assert leaf(D1) == "70ed836261af1815d9a99a0c11ae60897f822e22bb028bce9631f12f0abfc3db"
    assert merkle_root([D1]) == leaf(D1)


def test_two_leaves() -> None:
    expected = node(leaf(D1), leaf(D2))
    assert expected == "9f02f1b0f4956b90a635f4b1d3d94a1de64141c58442ae1598bf9d0472e970dd"
    assert merkle_root([D1, D2]) == expected
    assert merkle_root([D2, D1, D2]) == expected  # sorted and de-duplicated


def test_three_leaves_carry_the_odd_one_up() -> None:
    expected = node(node(leaf(D1), leaf(D2)), leaf(D3))
    assert expected == "30fa2d32dda09550a9d72d240a9c66a74098e40f7dda0bdd2c06fc862044401d"
    assert merkle_root([D3, D1, D2]) == expected


def test_five_leaves() -> None:
    #            root
    #          /      \
    #       n0123      L5   (L5 carried up twice)
    #      /     \
    #    n01     n23
    #   /  \    /  \
    #  L1  L2  L3  L4
    expected = node(node(node(leaf(D1), leaf(D2)), node(leaf(D3), leaf(D4))), leaf(D5))
    assert expected == "315a853d5c92191c85a40d00855bfbf93310de5dc0a3d483d41992a38b390b24"
    assert merkle_root([D5, D4, D3, D2, D1]) == expected


@pytest.mark.parametrize("count", [2, 3, 5])
def test_changing_one_leaf_changes_the_root(count: int) -> None:
    digests = [D1, D2, D3, D4, D5][:count]
    root = merkle_root(digests)
    for i in range(count):
        assert merkle_root([*digests[:i], "0" * 64, *digests[i + 1 :]]) != root


def test_sample_leaves_and_the_sample_entries_root() -> None:
    # store/sample_entries.py: a leaf is sha256 of the canonical JSON of
    # [virtual slug, question id, sample index, sorted entry digests].
    leaf_a = h(f'["sim/a::r5::c4","q-1",0,["{D1}","{D2}"]]')
    leaf_b = h(f'["sim/a::r5::c4","q-1",1,["{D3}"]]')
    assert leaf_a == "63fe9cadab0d3678d5cc082835aa64c6c5ef62329ebb6f6ba169c5abebf94840"
    assert leaf_b == "144306e3dc7082cd44e5beee7121accd4c15952eb7bfff6b93a978ff4ddc6ead"
    assert sample_leaf("sim/a::r5::c4", "q-1", 0, [D2, D1]) == leaf_a
    assert sample_leaf("sim/a::r5::c4", "q-1", 1, [D3]) == leaf_b
    digests = {"k1": D1, "k2": D2, "k3": D3}
    keys = {("sim/a::r5::c4", "q-1", 1): ["k3"], ("sim/a::r5::c4", "q-1", 0): ["k2", "k1"]}
    # leaf_b sorts before leaf_a ("14…" < "63…").
    expected = node(leaf(leaf_b), leaf(leaf_a))
    assert expected == "624b2d61dc84ef9f67400f09890dd3e1b13e862a511d5ce4e43adcca1f9cd26c"
    assert sample_entries_root(keys, digests.get) == expected
