"""Loops over a compiled tree's nodes, in breadth-first order, for the sampling layout.

Each is one pass over the nodes (parents before children, or the reverse), where numpy needs
a few calls per depth level, which a game thousands of levels deep pays thousands of times.
The caller allocates every array (no allocation here) and reads the results in place.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True, _nrt=False)
def subtree_sizes(parent, size) -> None:
    """``size[n]``: the number of nodes in ``n``'s subtree (``size`` preset to ones)."""
    for n in range(parent.shape[0] - 1, 0, -1):
        size[parent[n]] += size[n]


@njit(cache=True, nogil=True, _nrt=False)
def chance_regions(parent, edge_player, edge_slot, num_slots: int, region) -> None:
    """``region[n]``: the chance slot of the nearest chance edge at or above ``n`` (the root's,
    preset, is the number of chance slots: none)."""
    for n in range(1, parent.shape[0]):
        if edge_player[n] == -1:
            region[n] = edge_slot[n] - num_slots
        else:
            region[n] = region[parent[n]]


@njit(cache=True, nogil=True, _nrt=False)
def region_starts(edge_player, edge_slot, num_slots: int, outer, region_size, before,
                  region_start) -> None:
    """``region_start[s]``, the first position of chance slot ``s``'s region: after its outer
    region's own nodes and the subtrees of the outer region's earlier chance slots (``before``).
    Node order visits an outer region's chance edge before those inside it."""
    for n in range(1, edge_player.shape[0]):
        if edge_player[n] == -1:
            s = edge_slot[n] - num_slots
            o = outer[s]
            region_start[s] = region_start[o] + region_size[o] + before[s]


@njit(cache=True, nogil=True, _nrt=False)
def offsets_in_group(keys, sizes, running, offsets) -> None:
    """``offsets[i]``: the sum of ``sizes`` of the items before ``i`` with the same key
    (``running``, one per key, preset to zeros)."""
    for i in range(keys.shape[0]):
        k = keys[i]
        offsets[i] = running[k]
        running[k] += sizes[i]


@njit(cache=True, nogil=True, _nrt=False)
def around_decisions(parent, above, below) -> None:
    """``above[p, n]``: ``n`` is, or has below it, a decision node of player ``p``;
    ``below[p, n]``: ``n`` is, or hangs below, one (both preset to ``n`` is one)."""
    num_players = above.shape[0]
    for n in range(parent.shape[0] - 1, 0, -1):
        for p in range(num_players):
            if above[p, n]:
                above[p, parent[n]] = True
    for n in range(1, parent.shape[0]):
        for p in range(num_players):
            if below[p, parent[n]]:
                below[p, n] = True


@njit(cache=True, nogil=True, _nrt=False)
def preorder_and_depth(first_child, num_children, size, preorder, depth) -> None:
    """Each node's number in depth-first pre-order and its depth (the root's, preset: 0)."""
    for n in range(first_child.shape[0]):
        c = first_child[n]
        running = preorder[n] + 1
        for j in range(num_children[n]):
            preorder[c + j] = running
            depth[c + j] = depth[n] + 1
            running += size[c + j]


@njit(cache=True, nogil=True, _nrt=False)
def common_ancestors(parent, depth, u, v) -> None:
    """``u[i]`` becomes the lowest common ancestor of ``u[i]`` and ``v[i]``."""
    for i in range(u.shape[0]):
        a = u[i]
        b = v[i]
        while a != b:
            da = depth[a]
            db = depth[b]
            if da >= db:
                a = parent[a]
            if db >= da:
                b = parent[b]
        u[i] = a
