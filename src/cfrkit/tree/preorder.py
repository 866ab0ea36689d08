"""The shape of a tree recorded in pre-order: each node's depth, from every node's child count.

A depth-first walk that visits a node, then its first child's whole subtree, then the next
child's, needs to record nothing but each node's number of children: the sequence of counts
determines the tree (it is the tree's Łukasiewicz word). The compiler's walk records a code per
node from which the count follows, and :func:`preorder_depths` turns the counts back into
depths -- for the layout, where a stable sort by depth gives the breadth-first order, and for
the action paths named in error messages -- in a dozen numpy passes (no numba: compiling a
small game must not wait for numba to start).
"""

from __future__ import annotations

import numpy as np

__all__ = ["narrow_keys", "preorder_depths"]


def narrow_keys(keys: np.ndarray) -> np.ndarray:
    """Non-negative sort keys in the smallest unsigned type that holds them: numpy sorts 8-
    and 16-bit keys stably by radix sort, in linear time."""
    largest = int(keys.max()) if len(keys) else 0
    for dtype in (np.uint8, np.uint16):
        if largest <= np.iinfo(dtype).max:
            return keys.astype(dtype)
    return keys


def preorder_depths(counts: np.ndarray) -> np.ndarray:
    """Depths of the nodes of a pre-order walk whose nodes have ``counts`` children.

    Returns int32[n + 1]: the depth of each of the ``n`` nodes and, last, the depth of the
    node the walk would visit next (0 once the root's subtree is complete). Node ``i``'s depth
    depends only on the counts before it, so the counts of a walk still under way give the
    depths of its nodes so far and of the node it is at.

    With the walk's stack of nodes waiting holding ``size[i] = 1 + sum_{j<i} (counts[j] - 1)``
    entries when node ``i`` is taken, the subtree of ``i`` ends at the first leaf ``j >= i``
    with ``size[j] == size[i]`` (the stack only shrinks at leaves, one entry at a time), and
    ``depth[i] = i - #{k : k's subtree ended before i}``. A stable sort by ``size`` (a radix
    sort: sizes are small) puts each node before the leaf that ends its subtree, within its
    group; a backward running minimum finds that leaf.
    """
    counts = np.asarray(counts, dtype=np.int32)  # every array below int32 where numpy lets it:
    n = len(counts)  # fewer fresh pages to fault in (each costs microseconds on a VM)
    waiting = 1 + int(counts.sum(dtype=np.int64)) - n  # entries still on the stack after the last node
    if waiting > 0:  # a walk under way: leaves in their place complete the tree
        counts = np.concatenate([counts, np.zeros(waiting, dtype=np.int32)])
    total = len(counts)
    size = np.empty(total, dtype=np.int32)
    size[0] = 1
    np.cumsum(counts[:-1], out=size[1:])
    size[1:] -= np.arange(total - 1, dtype=np.int32)
    order = np.argsort(narrow_keys(size), kind="stable")
    del size
    leaf_at = np.arange(total, dtype=np.int32)
    leaf_at[counts[order] != 0] = total
    next_leaf = np.minimum.accumulate(leaf_at[::-1])[::-1]  # within the group: its last is a leaf
    del leaf_at
    end = np.empty(total, dtype=np.int32)  # the last node of each node's subtree
    end[order] = order[next_leaf]
    del order, next_leaf
    ended = np.bincount(end, minlength=total)[:n]
    del end
    depth = np.empty(n + 1, dtype=np.int64)  # subtrees ended before each node, then the depth
    depth[0] = 0
    np.cumsum(ended, out=depth[1:])
    np.subtract(np.arange(n + 1, dtype=np.int64), depth, out=depth)
    return depth.astype(np.int32)
