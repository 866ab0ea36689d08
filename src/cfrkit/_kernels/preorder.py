"""The shape of a tree recorded in pre-order: each node's depth, from every node's child count.

A depth-first walk that visits a node, then its first child's whole subtree, then the next
child's, needs to record nothing but each node's number of children: the sequence of counts
determines the tree (it is the tree's Łukasiewicz word). The compiler's walk records a code per
node from which the count follows, and this kernel turns the counts back into depths, for the
layout (a stable sort by depth gives the breadth-first order) and for the action paths named
in error messages.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def preorder_depths(counts):
    """Depths of the nodes of a pre-order walk with child counts ``counts`` (int32[n]).

    Returns int32[n + 1]: the depth of each of the ``n`` nodes and, last, the depth of the node
    the walk would visit next (0 once the root's subtree is complete). Node ``i``'s depth
    depends only on the counts before it, so a walk still under way gets the depths of its
    nodes so far and of the node it is at. Allocates the result and one stack of ``n + 1``
    counters (the children still to visit below each open ancestor).
    """
    n = counts.shape[0]
    depth = np.empty(n + 1, dtype=np.int32)
    pending = np.empty(n + 1, dtype=np.int64)
    level = 0  # the depth of the next node
    for i in range(n):
        depth[i] = level
        if counts[i] > 0:
            pending[level] = counts[i]  # node i's children, its first one next
            level += 1
        else:  # a leaf: up to the nearest ancestor with a child still to visit
            while level > 0:
                pending[level - 1] -= 1
                if pending[level - 1] > 0:
                    break
                level -= 1
    depth[n] = level
    return depth
