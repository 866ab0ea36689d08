"""preorder_depths: a tree's depths from its pre-order child counts, against a stack walk."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cfrkit.tree.preorder import preorder_depths


def depths_by_stack(counts):
    """The walk itself: a stack of (node's depth) entries, children pushed last first."""
    depths, stack = [], [0]
    for count in counts:
        depth = stack.pop()
        depths.append(depth)
        stack.extend([depth + 1] * count)
    return depths + [stack[-1] if stack else 0]


def complete(draws):
    """A whole tree in pre-order from a list of child counts: drawn counts while the tree is
    open and draws are left, then leaves until it closes."""
    counts, waiting = [], 1
    for count in draws:
        if waiting == 0:
            break
        counts.append(count)
        waiting += count - 1
    return counts + [0] * waiting


@given(st.lists(st.integers(0, 5), max_size=300), st.integers(0, 400))
@settings(max_examples=300, deadline=None)
def test_depths_match_the_stack_walk_for_whole_and_partial_walks(draws, cut):
    counts = complete(draws)
    got = preorder_depths(np.array(counts, dtype=np.int32))
    assert got.dtype == np.int32 and got.tolist() == depths_by_stack(counts)
    assert got[-1] == 0  # a whole tree: the walk is back at the root's level
    partial = counts[: min(cut, len(counts))]
    assert preorder_depths(np.array(partial, dtype=np.int32)).tolist() == depths_by_stack(partial)


@pytest.mark.parametrize(
    "counts, expected",
    [
        ([], [0]),  # nothing walked: the next node is the root
        ([0], [0, 0]),  # a root that is a leaf
        ([2, 0, 0], [0, 1, 1, 0]),
        ([1, 1, 1, 0], [0, 1, 2, 3, 0]),  # a chain
        ([2, 1, 0, 2, 0, 0], [0, 1, 2, 1, 2, 2, 0]),
        ([2, 1], [0, 1, 2]),  # under way: the next node is the chain's child
        ([3, 0], [0, 1, 1]),
    ],
)
def test_small_trees(counts, expected):
    assert preorder_depths(np.array(counts, dtype=np.int32)).tolist() == expected


def test_a_wide_node_sorts_beyond_16_bits():
    # 70,000 leaves under the root: stack sizes past 65,535 take the int64 sort
    counts = np.zeros(70_001, dtype=np.int32)
    counts[0] = 70_000
    depths = preorder_depths(counts)
    assert depths[0] == 0 and np.all(depths[1:-1] == 1) and depths[-1] == 0
