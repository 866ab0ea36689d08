"""Regret-based pruning (Brown and Sandholm 2015, "Regret-Based Pruning in Extensive-Form Games").

An action ``a`` of player ``i`` at infoset ``I`` that regret matching gives probability 0 adds
nothing to the other players' reach, so their passes skip it already (partial pruning). Regret-
based pruning also skips it in ``i``'s own pass, for a *window* of passes, and settles its regret
when the window closes:

* **Opening.** After ``i``'s pass the window opens if ``sigma(I, a) = 0`` and
  ``R(I, a) + M(I, a) <= 0``, where ``M(I, a) = sum_{h in I} pi_c(h) (U_i(h a) - L_i(h))`` bounds
  what one pass can add to the regret (``U``/``L``: static upper/lower bounds of ``i``'s value
  below a node, ``pi_c``: chance reach, which bounds ``pi_{-i}``).
* **During the window** ``i``'s pass visits ``I`` but not the subtrees behind ``a``; it adds the
  upper bound ``pi_{-i}(h) (U_i(h a) - v_i(h))`` of each history's regret increment to
  ``R(I, a)``, and the bound's unknown part ``pi_{-i}(h) U_i(h a)`` also to ``B(I, a)``. The
  stored regret is then at least the true one, and the window stays open while
  ``R + M <= 0``: the action provably could not have had positive regret, and regret matching
  plays it with probability 0 exactly as if it had been explored on every iteration.
* **Closing** (the bound runs out, or another action's regret stops being positive): the
  bounded part ``B`` is replaced by the settled value, found in one walk of the subtrees: ``i``'s best response to the others'
  reach *summed over the window*. In a two-player game that sum is known exactly at every leaf
  ``z``: ``pi_c(z)`` times the change, over the window, of the opponent's cumulative sequence
  weight -- the average-strategy sum CFR keeps anyway (the empty sequence's weight is the
  number of passes). The response is taken with ``i`` seeing the whole subtree (an upper bound
  of the true best response), so the settled regret is an upper bound of the regret any
  strategy inside the subtree would have earned; by the counterfactual-regret decomposition
  (Zinkevich et al. 2007) CFR's regret bound is kept. The infosets inside the subtree resume
  from their stored regrets.

Windows do not nest: one opens only when no action on the player's own path above it is in a
window, and opening one first settles any window below it. With three or more players the
summed reach would need the joint history of several opponents, which CFR does not keep, so the
trainers use regret-based pruning in two-player games only.
"""

from __future__ import annotations

from numba import njit

from .update import correct_regret

# window states, one per decision slot
NONE, OPEN, CLOSING, OPENING = 0, 1, 2, 3


@njit(cache=True, nogil=True, _nrt=False)
def prepare(tree, upper, lower, chance_reach, last_slot, max_increment) -> None:
    """Static data of regret-based pruning; writes every argument after ``tree`` in place.

    ``upper``/``lower`` (float64[P, N]): the most/least player ``p`` can get below each node
    (max/min over any decision, expectation over chance). ``chance_reach`` (float64[N]): product
    of chance probabilities on the path. ``last_slot`` (int32[P, N]): the last decision slot of
    player ``p`` on the path to each node, -1 if none. ``max_increment`` (float64[A]):
    ``M(I, a)`` above, for the acting player of each slot.
    """
    num_players = upper.shape[0]
    num_nodes = tree.node_kind.shape[0]
    internal = tree.internal_nodes
    for p in range(num_players):
        for n in range(num_nodes):
            upper[p, n] = tree.utility[p, n]
            lower[p, n] = tree.utility[p, n]
    for k in range(internal.shape[0] - 1, -1, -1):
        n = internal[k]
        c = tree.node_first_child[n]
        m = tree.node_num_children[n]
        s = tree.node_slot[n]
        for p in range(num_players):
            if tree.node_player[n] < 0:  # chance: expectation
                hi = 0.0
                lo = 0.0
                for j in range(m):
                    q = tree.chance_prob[s - tree.num_action_slots + j]
                    hi += q * upper[p, c + j]
                    lo += q * lower[p, c + j]
            else:
                hi = upper[p, c]
                lo = lower[p, c]
                for j in range(1, m):
                    hi = max(hi, upper[p, c + j])
                    lo = min(lo, lower[p, c + j])
            upper[p, n] = hi
            lower[p, n] = lo
    chance_reach[0] = 1.0
    for p in range(num_players):
        last_slot[p, 0] = -1
    for n in internal:
        c = tree.node_first_child[n]
        s = tree.node_slot[n]
        actor = tree.node_player[n]
        for j in range(tree.node_num_children[n]):
            if actor < 0:
                chance_reach[c + j] = chance_reach[n] * tree.chance_prob[s - tree.num_action_slots + j]
            else:
                chance_reach[c + j] = chance_reach[n]
            for p in range(num_players):
                last_slot[p, c + j] = s + j if p == actor else last_slot[p, n]
    for i in range(max_increment.shape[0]):
        max_increment[i] = 0.0
    for n in internal:
        actor = tree.node_player[n]
        if actor < 0:
            continue
        c = tree.node_first_child[n]
        s = tree.node_slot[n]
        for j in range(tree.node_num_children[n]):
            max_increment[s + j] += chance_reach[n] * (upper[actor, c + j] - lower[actor, n])


@njit(cache=True, _nrt=False, inline="always")
def _cumulative_reach(statics, state, opponent: int, z: int) -> float:
    """``pi_c(z)`` times the opponent's cumulative sequence weight at ``z`` (two players)."""
    q = statics.last_slot[opponent, z]
    weight = state.strategy_sum[q] if q >= 0 else float(state.accumulations[opponent])
    return statics.chance_reach[z] * weight


@njit(cache=True, _nrt=False, inline="always")
def _settle(tree, statics, state, scratch, player: int, slot: int) -> tuple:
    """Walk the subtrees behind ``slot`` once: the window's best-response value, new snapshots.

    For every history ``h`` of the slot's infoset, the subtree below ``h a`` is collected
    breadth-first into ``scratch.subtree_queue`` and evaluated bottom-up in ``scratch.work``: at a
    leaf, (others' reach summed since the last snapshot) x utility; ``player``'s nodes take
    the maximum, all others the sum. Leaves' snapshots move to now. Returns
    ``(value, nodes touched)``.
    """
    opponent = 1 - player
    infoset = tree.slot_infoset[slot]
    action = slot - tree.infoset_first_slot[infoset]
    queue = scratch.subtree_queue
    work = scratch.work
    total = 0.0
    touched = 0
    for k in range(tree.infoset_node_start[infoset], tree.infoset_node_start[infoset + 1]):
        root = tree.node_first_child[tree.infoset_nodes[k]] + action
        queue[0] = root
        head = 0
        tail = 1
        while head < tail:
            n = queue[head]
            head += 1
            c = tree.node_first_child[n]
            for j in range(tree.node_num_children[n]):
                queue[tail] = c + j
                tail += 1
        touched += tail
        for q in range(tail - 1, -1, -1):
            n = queue[q]
            m = tree.node_num_children[n]
            if m == 0:
                now = _cumulative_reach(statics, state, opponent, n)
                work[n] = (now - state.snapshot[player, n]) * tree.utility[player, n]
                state.snapshot[player, n] = now
                continue
            c = tree.node_first_child[n]
            if tree.node_player[n] == player:
                best = work[c]
                for j in range(1, m):
                    best = max(best, work[c + j])
                work[n] = best
            else:
                acc = 0.0
                for j in range(m):
                    acc += work[c + j]
                work[n] = acc
        total += work[root]
    return total, touched


@njit(cache=True, _nrt=False, inline="always")
def _close(tree, statics, state, scratch, player: int, slot: int) -> int:
    """Settle the window of ``slot`` into its regret; returns the nodes touched."""
    value, touched = _settle(tree, statics, state, scratch, player, slot)
    correct_regret(state, slot, value - state.bound_extra[slot])
    state.bound_extra[slot] = 0.0
    state.window[slot] = NONE
    return touched


@njit(cache=True, _nrt=False, inline="always")
def _close_windows_below(tree, statics, state, scratch, player: int, slot: int) -> int:
    """Settle every open window of ``player`` inside the subtrees behind ``slot``.

    The subtrees are collected into ``scratch.queue`` (free between passes) and scanned for the
    player's own nodes; their infosets lie wholly inside (perfect recall). Returns the nodes
    touched.
    """
    infoset = tree.slot_infoset[slot]
    action = slot - tree.infoset_first_slot[infoset]
    queue = scratch.queue
    tail = 0
    for k in range(tree.infoset_node_start[infoset], tree.infoset_node_start[infoset + 1]):
        queue[tail] = tree.node_first_child[tree.infoset_nodes[k]] + action
        tail += 1
    head = 0
    touched = 0
    while head < tail:
        n = queue[head]
        head += 1
        touched += 1
        c = tree.node_first_child[n]
        for j in range(tree.node_num_children[n]):
            queue[tail] = c + j
            tail += 1
    for k in range(tail):
        n = queue[k]
        if tree.node_player[n] != player:
            continue
        inner = tree.node_infoset[n]
        start = tree.infoset_first_slot[inner]
        for other in range(start, start + tree.infoset_num_actions[inner]):
            if state.window[other] == OPEN or state.window[other] == CLOSING:
                touched += _close(tree, statics, state, scratch, player, other)
    return touched


@njit(cache=True, _nrt=False, inline="always")
def _under_open_window(tree, state, infoset: int) -> bool:
    s = tree.infoset_parent_slot[infoset]
    while s >= 0:
        if state.window[s] != NONE and state.window[s] != OPENING:
            return True
        s = tree.infoset_parent_slot[tree.slot_infoset[s]]
    return False


@njit(cache=True, nogil=True, _nrt=False)
def begin_pass(tree, statics, state, scratch, player: int) -> int:
    """Before ``player``'s pass: close the windows due to close, open those due to open.

    Works through the slots :func:`end_pass` marked, in the order they were marked (a
    player's earlier infosets first, so an opening window can see the windows above it).
    Returns the nodes touched by the settling walks. Writes the window state, regrets (through
    :func:`.update.correct_regret`), the pending list and the scratch buffers in place.
    """
    touched = 0
    for k in range(state.pending_count[player]):
        slot = state.pending[player, k]
        mark = state.window[slot]
        if mark == CLOSING:
            touched += _close(tree, statics, state, scratch, player, slot)
            # still prunable after settling: reopen at once (the snapshots are fresh)
            if state.probs[slot] == 0.0 and state.regret[slot] + statics.max_increment[slot] <= 0.0:
                state.window[slot] = OPEN
        elif mark == OPENING:
            infoset = tree.slot_infoset[slot]
            if _under_open_window(tree, state, infoset):
                state.window[slot] = NONE
                continue
            touched += _close_windows_below(tree, statics, state, scratch, player, slot)  # no nesting
            _, walked = _settle(tree, statics, state, scratch, player, slot)  # take the snapshots
            touched += walked
            state.bound_extra[slot] = 0.0
            state.window[slot] = OPEN
    state.pending_count[player] = 0
    return touched


@njit(cache=True, nogil=True, _nrt=False)
def end_pass(tree, statics, state, scratch, player: int) -> None:
    """After a strategy refresh: mark ``player``'s windows to open or close at its next pass.

    Only the infosets the pass visited (``scratch.visited``) can change state: elsewhere
    neither the regrets nor the strategy moved. Marked slots go to ``state.pending[player]``.
    """
    for k in range(scratch.visited_count[0]):
        infoset = scratch.visited[k]
        if tree.infoset_player[infoset] != player:
            continue
        start = tree.infoset_first_slot[infoset]
        for slot in range(start, start + tree.infoset_num_actions[infoset]):
            mark = state.window[slot]
            bound = state.regret[slot] + statics.max_increment[slot]
            if mark == OPEN:
                if state.probs[slot] != 0.0 or bound > 0.0:
                    state.window[slot] = CLOSING
                    _mark(state, player, slot)
            elif mark == NONE:
                if state.probs[slot] == 0.0 and bound <= 0.0:
                    state.window[slot] = OPENING
                    _mark(state, player, slot)


@njit(cache=True, _nrt=False, inline="always")
def _mark(state, player: int, slot: int) -> None:
    state.pending[player, state.pending_count[player]] = slot
    state.pending_count[player] += 1
