"""Chance-sampled passes on the sampling layout: flat loops over the sampled regions.

The sampling layout (:func:`cfrkit.statics.sampling_layout`) cuts the tree at its chance edges
into *regions* -- the root's, and one below each chance outcome -- each contiguous and
breadth-first inside. A chance-sampled pass walks the root's region and, at every chance node
it meets, the region of the drawn outcome only; so once a sample is drawn
(``chance.draw_sample``) its walk is a short list of *segments*, one region each, found by
:func:`cut_segments`. A segment's first node is the root or a drawn outcome *linked* to its
chance node: its reach is the chance node's (the chance probability is left out), and the chance
node's value is its value. Every other edge of a segment comes from a decision node, so the
loops are the full pass's (``full_pass.py``), with no queue, no test of a node's kind and no
stamp per chance node: three-player Kuhn poker, whose only chance node is the deal at the root,
is two segments per sample, the root and one 25-node region.

The sums are those of the breadth-first queued pass of earlier versions, term for term: a
region's breadth-first order is the tree's, so a parent's value is summed from its last child
(``v = 0.0; v += p v``), and the slot sums ``instant`` and the baselines get one term per
visited history, in reverse breadth-first order within a region. Only the order *across*
regions differs (the breadth-first queue interleaved the levels of all of them), so the rounding
can differ only when one sample reaches an infoset in two regions.

Indices are cast to unsigned (``uint64``) before they index: numba wraps negative signed
indices around (``a[-1]`` is the last element), a test and a conditional move at every access,
on the path from the load of an index to the load it feeds; an unsigned index has none. Measured
on these small loops: more than half their time.
"""

from __future__ import annotations

from numba import njit, uint64

from .update import list_visited, update_single_history

# columns of the layout's tables (cfrkit.statics.sampling_layout builds them)
EDGE_SLOT = 0  # position_edge: slot of the edge into the node (its probability), -1 at the root
EDGE_FAMILY = 1  # the parent's position if the node is its parent's last child, else -1
INNER_POSITION = 0  # inner: the node's position
INNER_PARENT = 1  # its parent's position
INNER_SLOT = 2  # the slot of the edge into it
INNER_PLAYER = 3  # the player acting at its parent
DECISION_POSITION = 0  # decisions: the node's position
DECISION_FIRST_CHILD = 1  # its first child's position (its children are contiguous)
DECISION_SLOT = 2  # its infoset's first slot
DECISION_ACTIONS = 3  # its number of actions
DECISION_INFOSET = 4  # its infoset


@njit(cache=True, _nrt=False, inline="always")
def cut_segments(statics, scratch) -> tuple:
    """The regions of the drawn sample, in the layout's order.

    Reads the drawn outcomes (``scratch.chance_pick``, by chance index) and writes
    ``scratch.segments``: row 0 the region, row 1 the position of the chance node whose drawn
    outcome starts it (-1 below the root). A region comes before the regions below it (so
    forward loops find a chance node's reach set, and backward loops, running the list in
    reverse, its drawn outcome's value). A region that is a lone chance node (the root of
    Kuhn poker, the first card of a deal) is not a segment: the walk goes straight on to its
    drawn outcome, linked to the chance node above (the chance probabilities are left out all
    the way; nothing reads the skipped node's value). Returns ``(segments, nodes skipped)``.
    """
    next_chance = statics.layout.next_chance
    chance_position = statics.layout.chance_position
    region_start = statics.layout.region_start
    pick = scratch.chance_pick
    segments = scratch.segments
    stack = scratch.chance_stack
    count = 0
    skipped = 0
    depth = 0
    r = 0  # the region to enter, and the chance node it hangs from
    link = -1
    i = 0  # where to look for the next chance node of the current region, and its end
    bound = 0
    entering = True
    while True:
        if entering:
            a = region_start[uint64(r)]
            k = next_chance[uint64(a)]
            if chance_position[uint64(k)] == a:  # a chance node first: the region is that node
                skipped += 1
                r = pick[uint64(k)]
                continue
            segments[0, count] = r
            segments[1, count] = link
            count += 1
            i = a
            bound = region_start[uint64(r) + 1]
            entering = False
        k = next_chance[uint64(i)]
        x = chance_position[uint64(k)]  # N past the last chance node
        if x < bound:  # a chance node of this region: walk the region of its drawn outcome
            stack[0, depth] = x + 1  # then look on in this region
            stack[1, depth] = bound
            depth += 1
            r = pick[uint64(k)]
            link = x
            entering = True
        elif depth == 0:
            return count, skipped
        else:
            depth -= 1
            i = stack[0, depth]
            bound = stack[1, depth]


@njit(cache=True, _nrt=False, inline="always")
def sampled_pass(
    tree, statics, state, scratch, count: int, player: int, fused, weight: float, lower: float,
) -> int:
    """One chance-sampled pass for ``player`` over the ``count`` segments; returns the nodes
    touched in them.

    Per region: forward over its internal nodes, ``scratch.reach`` (``pi_{-p}``) and
    ``scratch.position_own`` (``pi_p``) by position; backward edge by edge, as
    ``full_pass.full_backward`` (a family summed in a register), the values
    ``scratch.position_value[player]``; then over the player's decision nodes of the region,
    last first, the regrets. Keeping the player's work out of the edge loops leaves them
    without a branch on the player.

    With ``fused`` (alternating updates under a rule without discounts or predictions, this
    iteration's weight ``weight`` and floor ``lower``), an infoset the sample can meet only
    once (``statics.layout.infoset_once``) is updated there and then
    (:func:`~.update.update_single_history`): nothing else reads its strategy before its
    update. Each other one is listed, with its own reach and visit count, and its slot sums
    and baseline added to ``scratch.instant`` and ``scratch.baseline``, for
    :func:`~.update.update_sampled` after the pass.
    """
    edges = statics.layout.position_edge
    region_start = statics.layout.region_start
    region_inner = statics.layout.region_inner[player]
    region_values = statics.layout.region_values[player]
    inner = statics.layout.inner
    region_decisions = statics.layout.region_decisions[player]
    decisions = statics.layout.decisions
    once = statics.layout.infoset_once
    segments = scratch.segments
    probs = state.probs
    reach = scratch.reach
    own = scratch.position_own
    value = scratch.position_value[player]
    touched = 0
    for g in range(count):
        r = uint64(segments[0, g])
        link = segments[1, g]
        a = uint64(region_start[r])
        touched += region_start[r + 1] - region_start[r]
        if link >= 0:  # a drawn outcome: the chance probability is left out
            reach[a] = reach[uint64(link)]
            own[a] = own[uint64(link)]
        else:
            reach[a] = 1.0
            own[a] = 1.0
        for t in range(region_inner[r], region_inner[r + 1]):
            row = uint64(t)
            up = uint64(inner[row, INNER_PARENT])
            i = uint64(inner[row, INNER_POSITION])
            q = probs[uint64(inner[row, INNER_SLOT])]
            mine = inner[row, INNER_PLAYER] == player
            reach[i] = reach[up] if mine else reach[up] * q
            own[i] = own[up] * q if mine else own[up]
    epoch = scratch.visited_count[1]
    for g in range(count - 1, -1, -1):
        r = uint64(segments[0, g])
        a = region_start[r]
        b = region_start[r + 1]
        # (the player's regrets read no value above region_values[r])
        _region_values(edges, probs, value, a, region_values[r], b)
        for t in range(region_decisions[r + 1] - 1, region_decisions[r] - 1, -1):
            row = uint64(t)
            i = uint64(decisions[row, DECISION_POSITION])
            infoset = uint64(decisions[row, DECISION_INFOSET])
            c = uint64(decisions[row, DECISION_FIRST_CHILD])
            s = uint64(decisions[row, DECISION_SLOT])
            m = uint64(decisions[row, DECISION_ACTIONS])
            cf = reach[i]
            if fused and once[infoset]:
                update_single_history(
                    state, infoset, s, s + m, value, c, cf, value[i], own[i], weight, lower
                )
                continue
            if scratch.visited_stamp[infoset] != epoch:
                list_visited(scratch, infoset)
                scratch.own_reach[infoset] = own[i]
            scratch.visits[infoset] += 1.0
            scratch.baseline[infoset] += cf * value[i]
            for j in range(m):
                scratch.instant[s + uint64(j)] += cf * value[c + uint64(j)]
        link = segments[1, g]
        if link >= 0:
            value[uint64(link)] = value[uint64(a)]  # a sampled chance node: its drawn outcome
    return touched


@njit(cache=True, _nrt=False, inline="always")
def joint_sampled_walk(
    tree, statics, state, scratch, count: int, fused, weight: float, lower: float,
) -> int:
    """One sampled walk that computes every player's regrets at once (simultaneous updates);
    returns the nodes touched in the ``count`` segments.

    The semantics of the original chance-sampling papers: one sampled deal, walked once, each
    node carrying every player's own reach (``joint_reach[i, q]``, chance left out) forward and
    every player's value (``position_value[q, i]``) back. At a decision node of player ``a``
    the regret weight is ``prod_{q != a} joint_reach[i, q]``; the sums are those of the
    per-player passes, so the result is the same as ``P`` passes over the same sample with the
    same profile. Per region, every player's values come before any regret, so that with
    ``fused`` an infoset met once is updated on the spot as in :func:`sampled_pass`; the others
    are left for :func:`~.update.update_sampled`.
    """
    edges = statics.layout.position_edge
    region_start = statics.layout.region_start
    num_players = scratch.joint_reach.shape[1]
    region_inner = statics.layout.region_inner[num_players]  # nodes above any decision node
    region_values = statics.layout.region_values
    inner = statics.layout.inner
    region_decisions = statics.layout.region_decisions
    decisions = statics.layout.decisions
    once = statics.layout.infoset_once
    segments = scratch.segments
    probs = state.probs
    joint_reach = scratch.joint_reach
    touched = 0
    for g in range(count):
        r = uint64(segments[0, g])
        link = segments[1, g]
        a = uint64(region_start[r])
        touched += region_start[r + 1] - region_start[r]
        for q in range(num_players):
            joint_reach[a, q] = joint_reach[uint64(link), q] if link >= 0 else 1.0
        for t in range(region_inner[r], region_inner[r + 1]):
            row = uint64(t)
            i = uint64(inner[row, INNER_POSITION])
            up = uint64(inner[row, INNER_PARENT])
            for q in range(num_players):
                joint_reach[i, q] = joint_reach[up, q]
            q = probs[uint64(inner[row, INNER_SLOT])]
            joint_reach[i, uint64(inner[row, INNER_PLAYER])] *= q
    epoch = scratch.visited_count[1]
    for g in range(count - 1, -1, -1):
        r = uint64(segments[0, g])
        a = region_start[r]
        b = region_start[r + 1]
        for actor in range(num_players):
            value = scratch.position_value[actor]
            _region_values(edges, probs, value, a, region_values[actor, r], b)
        for actor in range(num_players):
            value = scratch.position_value[actor]
            for t in range(region_decisions[actor, r + 1] - 1, region_decisions[actor, r] - 1, -1):
                row = uint64(t)
                i = uint64(decisions[row, DECISION_POSITION])
                infoset = uint64(decisions[row, DECISION_INFOSET])
                c = uint64(decisions[row, DECISION_FIRST_CHILD])
                s = uint64(decisions[row, DECISION_SLOT])
                m = uint64(decisions[row, DECISION_ACTIONS])
                cf = 1.0
                for q in range(num_players):
                    if q != actor:
                        cf *= joint_reach[i, q]
                if fused and once[infoset]:
                    update_single_history(
                        state, infoset, s, s + m, value, c, cf, value[i],
                        joint_reach[i, actor], weight, lower,
                    )
                    continue
                if scratch.visited_stamp[infoset] != epoch:
                    list_visited(scratch, infoset)
                    scratch.own_reach[infoset] = joint_reach[i, actor]
                scratch.visits[infoset] += 1.0
                scratch.baseline[infoset] += cf * value[i]
                for j in range(m):
                    scratch.instant[s + uint64(j)] += cf * value[c + uint64(j)]
        link = segments[1, g]
        if link >= 0:
            for q in range(num_players):
                scratch.position_value[q, uint64(link)] = scratch.position_value[q, uint64(a)]
    return touched


@njit(cache=True, _nrt=False, inline="always")
def _region_values(edges, probs, value, a, lowest, b) -> None:
    """Values of one region's families, positions ``b - 1`` down to ``lowest``: a family's value
    is summed in a register while its children (contiguous) go by, last child first, and
    stored when the next family starts. Writes ``value`` in place."""
    total = 0.0
    family = uint64(a)  # (the first store, before any family is complete, is overwritten)
    for k in range(b - 1, lowest - 1, -1):
        i = uint64(k)
        up = edges[i, EDGE_FAMILY]
        if up >= 0:
            value[family] = total
            family = uint64(up)
            total = 0.0
        total += probs[uint64(edges[i, EDGE_SLOT])] * value[i]
    if lowest < b:
        value[family] = total
