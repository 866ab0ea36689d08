"""The CFR traversal family: one breadth-first array pass per updating player.

Counterfactual regret minimisation (Zinkevich, Johanson, Bowling and Piccione 2007, "Regret
Minimization in Games with Incomplete Information"). For the updating player ``p`` and every
history ``h`` of ``p`` in infoset ``I``::

    R(I, a) += pi_{-p}(h) * (v_p(h a) - v_p(h))

where ``pi_{-p}(h)`` is the product of the other players' and chance's probabilities on the
path to ``h`` and ``v_p`` is ``p``'s expected utility under the current profile. On the
breadth-first tree this is two loops: a forward loop computes ``pi_{-p}`` at every node
(parents come first), a backward loop computes ``v_p`` (children come first) and adds the
regrets on the way. No recursion, no stack. The regret is accumulated in two sums,
``sum_h pi_{-p}(h) v_p(h a)`` per slot and the baseline ``sum_h pi_{-p}(h) v_p(h)`` per
infoset, the second subtracted from every action of the infoset at the end of the pass, so a
full pass can run edge by edge over flat arrays.

Every trainer is this one pass with switches (:class:`Config`):

* vanilla -- both loops run edge by edge over the whole tree (flat loops, no inner loops);
* pruning -- the forward loop builds a queue of the nodes worth visiting (skipping subtrees
  whose reach by the others is zero or below a threshold, or behind actions that regret-based
  pruning rules out), and the backward loop walks that queue in reverse;
* chance sampling -- the forward loop follows one sampled outcome at each chance node, and
  the chance probabilities drop out of the reach (they cancel against the sampling
  probability: Lanctot, Waugh, Zinkevich and Bowling 2009, "Monte Carlo Sampling for Regret
  Minimization in Extensive Games").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..tree import CHANCE
from .random import next_double
from .regret import match_infoset, regret_matching
from .regret_pruning import OPEN, begin_pass, end_pass


class Workspace(NamedTuple):
    """A trainer's arrays, passed whole to the kernels (which write them in place).

    ``N`` nodes, ``S`` infosets, ``A`` decision slots, ``C`` chance slots, ``P`` players.
    """

    probs: np.ndarray  # float64[A + C]: current strategy, then the constant chance probabilities
    regret: np.ndarray  # float64[A]: cumulative (counterfactual) regrets
    strategy_sum: np.ndarray  # float64[A]: average-strategy weights
    locked: np.ndarray  # bool[S]: infosets whose strategy is held fixed
    reach: np.ndarray  # float64[N]: pi_{-p} of the current pass
    value: np.ndarray  # float64[P, N]: v_p; terminal entries fixed to the utilities
    own_reach: np.ndarray  # float64[S]: pi_p(I) of the current pass
    joint_reach: np.ndarray  # float64[N, P]: every player's own reach (joint sampled walks)
    baseline: np.ndarray  # float64[S]: sum_h pi_{-p}(h) v_p(h) of the current pass
    queue: np.ndarray  # int32[N]: internal nodes visited by the current pass, in order
    accumulations: np.ndarray  # int64[P]: average-strategy updates made per player
    # regret-based pruning (see regret_pruning.py); empty when it is off
    window: np.ndarray  # int8[A]: window state of each slot
    bound_extra: np.ndarray  # float64[A]: B(I, a), the bound of the window's unknown regret
    max_increment: np.ndarray  # float64[A]: M(I, a), the most one pass can add to R(I, a)
    upper_bound: np.ndarray  # float64[P, N]: U_p, the most p can get below each node
    chance_reach: np.ndarray  # float64[N]
    last_slot: np.ndarray  # int32[P, N]: each player's last slot on the path to each node
    snapshot: np.ndarray  # float64[P, N]: leaves' summed others' reach at the window's start
    scratch: np.ndarray  # float64[N]
    subtree_queue: np.ndarray  # int32[N]
    pending: np.ndarray  # int32[P, A]: slots marked to open or close, per player
    pending_count: np.ndarray  # int64[P]
    # queued (pruned or sampled) passes; empty when off
    visited: np.ndarray  # int32[S]: infosets whose regrets changed since the last refresh
    visited_stamp: np.ndarray  # int64[S]: refresh epoch in which each infoset was listed
    visited_count: np.ndarray  # int64[2]: entries used in ``visited``, current refresh epoch
    # chance sampling; empty when it is off
    sampled_child: np.ndarray  # int32[N]: sampled outcome index at each chance node
    sample_stamp: np.ndarray  # int64[N]: the sample id each sampled_child belongs to
    sample_id: np.ndarray  # int64[1]: id of the current chance sample
    alias_prob: np.ndarray  # float64[C]: Walker/Vose alias tables of the chance nodes
    alias_index: np.ndarray  # int32[C]
    rng: np.ndarray  # uint64[4]: xoshiro256** state


class Config(NamedTuple):
    """The switches that make one traversal into each trainer."""

    alternating: bool  # players update in turn (True) or all from the same profile
    dynamic: bool  # visit a queue built per pass (needed for any pruning or sampling)
    threshold: float  # skip subtrees whose reach by the others is below this (0: exact)
    regret_pruning: bool  # skip the player's own zero-probability actions (see below)
    sample_chance: bool  # follow one sampled outcome per chance node
    sample_per_player: bool  # a fresh chance sample for each player's pass


@njit(cache=True, _nrt=False, inline="always")
def _sample_outcome(rng, alias_prob, alias_index, s: int, m: int) -> int:
    """Draw an outcome index in ``[0, m)`` from the alias table at chance slots ``s..s+m``."""
    k = min(int(next_double(rng) * m), m - 1)
    if next_double(rng) < alias_prob[s + k]:
        return k
    return alias_index[s + k]


@njit(cache=True, _nrt=False, inline="always")
def _chance_choice(
    n: int, s: int, m: int, num_action_slots: int, sampled_child, sample_stamp,
    sample_id: int, rng, alias_prob, alias_index,
) -> int:
    """The outcome index sampled at chance node ``n`` for ``sample_id`` (drawn on first use)."""
    if sample_stamp[n] != sample_id:
        sampled_child[n] = _sample_outcome(rng, alias_prob, alias_index, s - num_action_slots, m)
        sample_stamp[n] = sample_id
    return sampled_child[n]


@njit(cache=True, _nrt=False, inline="always")
def _list_visited(infoset: int, visited, visited_stamp, visited_count) -> None:
    """List ``infoset`` (once per refresh) as one whose regrets this pass changes.

    A queued pass changes only the regrets of the infosets it visits, so only those need the
    baseline subtracted, regret matching and the pruning-window checks.
    """
    if visited_stamp[infoset] != visited_count[1]:
        visited_stamp[infoset] = visited_count[1]
        visited[visited_count[0]] = infoset
        visited_count[0] += 1


@njit(cache=True, _nrt=False, inline="always")
def _visit_sampled_history(
    infoset: int, s: int, m: int, probs, infoset_parent, infoset_parent_slot, own_reach,
    strategy_sum, visited, visited_stamp, visited_count,
) -> None:
    """A sampled pass reaches a history of ``infoset``: list the infoset for the refresh and
    add ``pi_p(I) sigma(I, a)`` to its average-strategy weights."""
    _list_visited(infoset, visited, visited_stamp, visited_count)
    ps = infoset_parent_slot[infoset]
    w = 1.0 if ps < 0 else own_reach[infoset_parent[infoset]] * probs[ps]
    own_reach[infoset] = w
    for j in range(m):
        strategy_sum[s + j] += w * probs[s + j]


@njit(cache=True, _nrt=False, inline="always")
def _visit_forward(
    node_kind, node_player, node_infoset, node_slot, first_child, num_children,
    probs, reach, queue, player: int, threshold: float,
    regret_pruning, window,
    sample_chance, sampled_child, sample_stamp, sample_id: int, alias_prob, alias_index, rng,
    num_action_slots: int, infoset_parent, infoset_parent_slot, own_reach, strategy_sum,
    visited, visited_stamp, visited_count,
) -> tuple:
    """Forward loop of a pruned or sampled pass: fill ``queue`` and ``reach``.

    Children with zero reach by the others are neither queued nor read (unless sampling), nor
    are those below ``threshold`` queued, nor ``player``'s actions in a regret-pruning
    ``window``. At a chance node, when ``sample_chance``, only the outcome sampled for
    ``sample_id`` is followed, with the chance probability left out of the reach (it cancels
    against the sampling probability); there each visited history of ``player`` also adds
    ``pi_p(I) sigma(I, a)`` to ``strategy_sum`` and lists its infoset in ``visited`` for the
    refresh.

    Returns ``(count, touched)``: the internal nodes queued, and the nodes read or written.
    """
    queue[0] = 0
    reach[0] = 1.0
    head = 0
    tail = 1
    touched = 1
    while head < tail:
        n = queue[head]
        head += 1
        r = reach[n]
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        if sample_chance and node_kind[n] == CHANCE:
            child = c + _chance_choice(
                n, s, m, num_action_slots, sampled_child, sample_stamp, sample_id, rng,
                alias_prob, alias_index,
            )
            reach[child] = r
            touched += 1
            if num_children[child] > 0:
                queue[tail] = child
                tail += 1
        elif node_player[n] == player:
            if sample_chance:
                _visit_sampled_history(
                    node_infoset[n], s, m, probs, infoset_parent, infoset_parent_slot,
                    own_reach, strategy_sum, visited, visited_stamp, visited_count,
                )
            else:
                _list_visited(node_infoset[n], visited, visited_stamp, visited_count)
            for j in range(m):
                if regret_pruning and window[s + j] == OPEN:
                    continue  # regret-based pruning: an action in its window
                reach[c + j] = r
                touched += 1
                if num_children[c + j] > 0:
                    queue[tail] = c + j
                    tail += 1
        else:
            for j in range(m):
                rc = r * probs[s + j]
                reach[c + j] = rc
                # zero reach: neither the child nor its subtree is read -- except when sampling,
                # where every history consistent with the sample must be visited so that the
                # average-strategy weights do not depend on the others' zeros
                if rc > 0.0 or sample_chance:
                    touched += 1
                    if num_children[c + j] > 0 and rc >= threshold:
                        queue[tail] = c + j
                        tail += 1
    return tail, touched


@njit(cache=True, _nrt=False, inline="always")
def full_forward(parent, edge_slot, edge_player, probs, reach, player: int) -> None:
    """Forward loop of an unpruned pass, edge by edge (node ``c``'s edge comes from its parent).

    ``reach[c] = reach[parent] * (1 if the parent is player's, else the edge's probability)``,
    which is ``pi_{-player}`` at every node. Writes ``reach`` in place.
    """
    reach[0] = 1.0
    for c in range(1, parent.shape[0]):
        r = reach[parent[c]]
        reach[c] = r if edge_player[c] == player else r * probs[edge_slot[c]]


@njit(cache=True, _nrt=False, inline="always")
def full_backward(
    parent, edge_slot, edge_player, edge_last, node_player, node_infoset,
    probs, reach, value, regret, baseline, player: int,
) -> None:
    """Backward loop of an unpruned pass, over the nodes from the last.

    Node ``c``'s value is final (its children come after it), so it goes to its infoset's
    baseline (if ``c`` is ``player``'s), to its edge's regret sum (if the parent is
    ``player``'s) and into its parent's value. ``value`` is ``player``'s row (terminal entries
    fixed to the utilities). Writes ``value``, ``regret`` and ``baseline`` in place.
    """
    # a parent's value is summed in a register while its children go by (they are
    # contiguous), and stored when the next family starts: no round trip through memory
    total = 0.0
    family = 0
    for c in range(parent.shape[0] - 1, 0, -1):
        if edge_last[c]:  # the first child seen of a new family: the last one is complete
            value[family] = total
            family = parent[c]
            total = 0.0
        v = value[c]
        if node_player[c] == player:
            baseline[node_infoset[c]] += reach[c] * v
        s = edge_slot[c]
        if edge_player[c] == player:
            regret[s] += reach[family] * v
        total += probs[s] * v  # last child first: the same order as the queued pass below
    value[family] = total
    if node_player[0] == player:
        baseline[node_infoset[0]] += value[0]


@njit(cache=True, _nrt=False, inline="always")
def _queued_backward(
    order, count: int, node_kind, node_player, node_infoset, node_slot, first_child,
    num_children, probs, regret, baseline, reach, value, player: int,
    regret_pruning, window, bound_extra, upper_bound,
    sample_chance, sampled_child,
) -> None:
    """Backward loop over the queued nodes ``order[count-1] .. order[0]``.

    Node by node, with the same sums in the same order as :func:`full_backward` (so pruning only
    zero-reach subtrees gives the same regrets). Children with probability zero were not
    visited: their stale (finite) values are multiplied by zero, cheaper than a branch;
    children skipped by the threshold keep the value of the last pass that visited them; a sampled chance node takes its sampled child's value. An
    action in a regret-pruning window gets the bound ``pi_{-p}(h) U_p(h a)`` in place of
    ``pi_{-p}(h) v_p(h a)``, also added to ``bound_extra`` to be replaced when the window
    closes. Writes ``value``, ``regret``, ``baseline`` and ``bound_extra`` in place.
    """
    for k in range(count - 1, -1, -1):
        n = order[k]
        c = first_child[n]
        m = num_children[n]
        if sample_chance and node_kind[n] == CHANCE:
            value[n] = value[c + sampled_child[n]]
            continue
        s = node_slot[n]
        v = 0.0
        for j in range(m - 1, -1, -1):  # unvisited children have probability 0: no branch
            v += probs[s + j] * value[c + j]
        value[n] = v
        if node_player[n] == player:
            cf = reach[n]
            baseline[node_infoset[n]] += cf * v
            for j in range(m):
                if regret_pruning and window[s + j] == OPEN:
                    bound = cf * upper_bound[c + j]
                    regret[s + j] += bound
                    bound_extra[s + j] += bound
                else:
                    regret[s + j] += cf * value[c + j]


@njit(cache=True, _nrt=False, inline="always")
def _subtract_baseline(
    first_infoset: int, end_infoset: int, first_slot, num_actions, regret, baseline
) -> None:
    """``R(I, a) -= sum_h pi_{-p}(h) v_p(h)`` for infosets ``[first, end)``; clears the sums."""
    for infoset in range(first_infoset, end_infoset):
        b = baseline[infoset]
        if b != 0.0:
            baseline[infoset] = 0.0
            s = first_slot[infoset]
            for a in range(num_actions[infoset]):
                regret[s + a] -= b


@njit(cache=True, _nrt=False, inline="always")
def accumulate_average(
    first_infoset: int, end_infoset: int, infoset_parent, infoset_parent_slot,
    first_slot, num_actions, probs, strategy_sum, own_reach, weight: float,
) -> None:
    """Add ``weight * pi_p(I) * sigma(I, a)`` to ``strategy_sum`` for infosets ``[first, end)``.

    ``pi_p(I)`` is the acting player's own reach of ``I``: one number per infoset under perfect
    recall, the reach of the player's previous infoset times the probability of the action
    taken there. Infosets are numbered so that this previous infoset comes first. Writes
    ``own_reach`` and ``strategy_sum`` in place.
    """
    for infoset in range(first_infoset, end_infoset):
        ps = infoset_parent_slot[infoset]
        w = 1.0 if ps < 0 else own_reach[infoset_parent[infoset]] * probs[ps]
        own_reach[infoset] = w
        s = first_slot[infoset]
        w *= weight
        for a in range(num_actions[infoset]):
            strategy_sum[s + a] += w * probs[s + a]


@njit(cache=True, _nrt=False, inline="always")
def _joint_sampled_walk(
    node_kind, node_player, node_infoset, node_slot, first_child, num_children,
    probs, regret, baseline, value, joint_reach, queue, sampled_child, sample_stamp,
    sample_id: int, alias_prob, alias_index, rng, num_action_slots: int,
    infoset_parent, infoset_parent_slot, own_reach, strategy_sum,
    visited, visited_stamp, visited_count,
) -> int:
    """One sampled walk that updates every player at once (simultaneous updates).

    The 2018 semantics of chance-sampled CFR: one sampled deal, walked once, each node
    carrying every player's own reach (``joint_reach[n, q]``, chance left out) forward and
    every player's value (``value[q, n]``) back. At a decision node of player ``a`` the
    regret weight is ``prod_{q != a} joint_reach[n, q]``; the sums are those of the
    per-player passes, so the result is the same as ``P`` passes over the same sample with
    the same profile. Writes ``joint_reach``, ``value``, ``regret``, ``baseline``,
    ``strategy_sum``, ``own_reach``, the visited list and the sampling buffers in place;
    returns the nodes touched.
    """
    num_players = joint_reach.shape[1]
    queue[0] = 0
    for q in range(num_players):
        joint_reach[0, q] = 1.0
    head = 0
    tail = 1
    touched = 1
    while head < tail:
        n = queue[head]
        head += 1
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        if node_kind[n] == CHANCE:
            first = c + _chance_choice(
                n, s, m, num_action_slots, sampled_child, sample_stamp, sample_id, rng,
                alias_prob, alias_index,
            )
            last = first + 1
        else:
            _visit_sampled_history(
                node_infoset[n], s, m, probs, infoset_parent, infoset_parent_slot, own_reach,
                strategy_sum, visited, visited_stamp, visited_count,
            )
            first = c
            last = c + m
        actor = node_player[n]  # -1 at a chance node
        for child in range(first, last):
            touched += 1
            if num_children[child] > 0:  # a terminal's reach is never read
                for q in range(num_players):
                    joint_reach[child, q] = joint_reach[n, q]
                if actor >= 0:
                    joint_reach[child, actor] *= probs[s + child - c]
                queue[tail] = child
                tail += 1
    for k in range(tail - 1, -1, -1):
        n = queue[k]
        c = first_child[n]
        m = num_children[n]
        if node_kind[n] == CHANCE:
            chosen = c + sampled_child[n]
            for q in range(num_players):
                value[q, n] = value[q, chosen]
            continue
        s = node_slot[n]
        for q in range(num_players):
            v = 0.0
            for j in range(m - 1, -1, -1):
                v += probs[s + j] * value[q, c + j]
            value[q, n] = v
        actor = node_player[n]
        cf = 1.0
        for q in range(num_players):
            if q != actor:
                cf *= joint_reach[n, q]
        baseline[node_infoset[n]] += cf * value[actor, n]
        for j in range(m):
            regret[s + j] += cf * value[actor, c + j]
    return touched


@njit(cache=True, _nrt=False)
def cfr_iterations(
    tree,
    ws,
    iterations: int,
    alternating,
    dynamic,
    regret_pruning,
    sample_chance,
    sample_per_player,
    threshold: float,
) -> int:
    """Run ``iterations`` CFR iterations in one call; return the number of nodes touched.

    The arrays are unpacked once here and the two loops of a pass run inline (handing whole
    tuples, or thirty arrays, to a call per pass costs more than the loops on small games).

    With ``alternating`` the players update in order ``0..P-1``, each player's strategy
    refreshed by regret matching right after its own pass (OpenSpiel's CFRSolver convention);
    otherwise every player's pass sees the same profile and all refresh at the end. The
    average strategy gets ``pi_p(I) sigma(I, a)`` for each player's current strategy before it
    changes (exactly per infoset; per visited history when sampling). With chance sampling,
    one sample serves the whole iteration unless ``sample_per_player``, and only the sampled
    infosets are refreshed. Everything is written in place in ``ws``.
    """
    num_players = tree.num_players
    num_nodes = tree.node_kind.shape[0]
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    infoset_start = tree.player_infoset_start
    infoset_parent = tree.infoset_parent
    infoset_parent_slot = tree.infoset_parent_slot
    first_slot = tree.infoset_first_slot
    num_actions = tree.infoset_num_actions
    probs = ws.probs
    regret = ws.regret
    strategy_sum = ws.strategy_sum
    locked = ws.locked
    reach = ws.reach
    value = ws.value
    own_reach = ws.own_reach
    baseline = ws.baseline
    parent = tree.node_parent
    edge_slot = tree.edge_slot
    edge_player = tree.edge_player
    edge_last = tree.edge_last
    queue = ws.queue
    window = ws.window
    bound_extra = ws.bound_extra
    upper_bound = ws.upper_bound
    visited = ws.visited
    visited_stamp = ws.visited_stamp
    visited_count = ws.visited_count
    sampled_child = ws.sampled_child
    sample_stamp = ws.sample_stamp
    alias_prob = ws.alias_prob
    alias_index = ws.alias_index
    rng = ws.rng
    accumulations = ws.accumulations
    joint = sample_chance and not alternating and not sample_per_player
    touched = 0
    for _ in range(iterations):
        if sample_chance and not sample_per_player:
            ws.sample_id[0] += 1
        if joint:  # one walk serves every player
            touched += _joint_sampled_walk(
                node_kind, node_player, node_infoset, node_slot, first_child, num_children,
                probs, regret, baseline, value, ws.joint_reach, queue, sampled_child,
                sample_stamp, ws.sample_id[0], alias_prob, alias_index, rng,
                tree.num_action_slots, infoset_parent, infoset_parent_slot, own_reach,
                strategy_sum, visited, visited_stamp, visited_count,
            )
        for player in range(0 if joint else num_players):
            if sample_chance and sample_per_player:
                ws.sample_id[0] += 1
            if regret_pruning:
                touched += begin_pass(tree, ws, player)
            upper_row = upper_bound[player] if regret_pruning else reach
            if dynamic:
                count, visits = _visit_forward(
                    node_kind, node_player, node_infoset, node_slot, first_child, num_children,
                    probs, reach, queue, player, threshold, regret_pruning, window,
                    sample_chance, sampled_child, sample_stamp, ws.sample_id[0], alias_prob,
                    alias_index, rng, tree.num_action_slots, infoset_parent,
                    infoset_parent_slot, own_reach, strategy_sum, visited, visited_stamp,
                    visited_count,
                )
                _queued_backward(
                    queue, count, node_kind, node_player, node_infoset, node_slot, first_child,
                    num_children, probs, regret, baseline, reach, value[player], player,
                    regret_pruning, window, bound_extra, upper_row, sample_chance,
                    sampled_child,
                )
                touched += visits
            else:
                full_forward(parent, edge_slot, edge_player, probs, reach, player)
                full_backward(
                    parent, edge_slot, edge_player, edge_last, node_player, node_infoset,
                    probs, reach, value[player], regret, baseline, player,
                )
                touched += num_nodes
            if not dynamic:
                _subtract_baseline(
                    infoset_start[player], infoset_start[player + 1], first_slot, num_actions,
                    regret, baseline,
                )
            if alternating:
                if not sample_chance:
                    accumulate_average(
                        infoset_start[player], infoset_start[player + 1], infoset_parent,
                        infoset_parent_slot, first_slot, num_actions, probs, strategy_sum,
                        own_reach, 1.0,
                    )
                    accumulations[player] += 1
                if dynamic:  # only the visited infosets' regrets changed
                    _refresh_visited(
                        regret, probs, baseline, first_slot, num_actions, locked, visited,
                        visited_count,
                    )
                    if regret_pruning:
                        end_pass(tree, ws, player)
                    _clear_visited(visited_count)
                else:
                    regret_matching(
                        regret, probs, first_slot, num_actions, locked,
                        infoset_start[player], infoset_start[player + 1],
                    )
        if not alternating:
            if not sample_chance:
                for player in range(num_players):
                    accumulate_average(
                        infoset_start[player], infoset_start[player + 1], infoset_parent,
                        infoset_parent_slot, first_slot, num_actions, probs, strategy_sum,
                        own_reach, 1.0,
                    )
                    accumulations[player] += 1
            if dynamic:
                _refresh_visited(
                    regret, probs, baseline, first_slot, num_actions, locked, visited,
                    visited_count,
                )
                if regret_pruning:
                    for player in range(num_players):
                        end_pass(tree, ws, player)
                _clear_visited(visited_count)
            else:
                regret_matching(
                    regret, probs, first_slot, num_actions, locked, 0, infoset_start[num_players]
                )
    return touched


@njit(cache=True, _nrt=False, inline="always")
def _refresh_visited(
    regret, probs, baseline, first_slot, num_actions, locked, visited, visited_count
):
    """Subtract the baseline and match regrets at the infosets listed in ``visited``.

    Unlocked ones get regret matching; the list is kept for the pruning-window checks
    (:func:`_clear_visited` empties it).
    """
    for k in range(visited_count[0]):
        infoset = visited[k]
        start = first_slot[infoset]
        end = start + num_actions[infoset]
        b = baseline[infoset]
        baseline[infoset] = 0.0
        for slot in range(start, end):
            regret[slot] -= b
        if not locked[infoset]:
            match_infoset(regret, probs, start, end)


@njit(cache=True, _nrt=False, inline="always")
def _clear_visited(visited_count) -> None:
    """Empty the visited list (a new epoch: the stamps of the old one no longer match)."""
    visited_count[0] = 0
    visited_count[1] += 1
