"""Monte Carlo CFR that samples players' actions too: external and outcome sampling.

Lanctot, Waugh, Zinkevich and Bowling 2009, "Monte Carlo Sampling for Regret Minimization in
Extensive Games" (and Lanctot's 2013 thesis, chapter 4). Each pass belongs to one *traverser*
``p`` and draws from the trainer's own xoshiro256** stream, in depth-first pre-order (a node's
draw happens when it is first reached, before anything below it), so that a recursive oracle
replays the same draws:

* external sampling -- chance and the other players' actions are sampled (from the chance
  probabilities and the current strategy), every action of ``p`` is walked. The sampled-away
  reach cancels against its sampling probability, so ``v(h a) - v(h)`` at each visited history
  ``h`` of ``p`` is an unbiased estimate of the counterfactual regret.
* outcome sampling -- one terminal history per pass. At ``p``'s nodes the action is drawn from
  ``s(a) = e / |A| + (1 - e) sigma(a)`` (``e``: exploration), elsewhere from the strategy or
  the chance probabilities; the importance weights ``1 / q(z)`` make the regret estimates
  unbiased.

Passes leave, like every pass, the slot sums ``instant`` and the baselines of ``p``'s visited
infosets (their difference is the regret estimate) and list those infosets; :mod:`.update`
folds them in with the regret rule. The average strategy is added during the pass, through
:func:`.update.add_to_average`:

* external sampling: at the sampled nodes of the player after ``p`` (``(p + 1) mod P``),
  ``sigma(I)`` with weight ``w_t / pi_o(h)``, where ``pi_o`` is the sampled reach of the
  players other than those two. In two-player games that is ``w_t``, OpenSpiel's "simple"
  averaging; the ``1 / pi_o`` importance weight keeps it unbiased with more players (each
  visit happens with probability ``pi_c pi_q pi_o``; the target is ``pi_q``, up to a factor
  constant per infoset, which normalisation removes). A one-player game has no one else: its
  player's own nodes get ``w_t pi_p(h)``, as in chance sampling.
* outcome sampling: "stochastically weighted averaging" -- at ``p``'s sampled nodes,
  ``sigma(I)`` with weight ``w_t pi_p(h) / q(h)``, ``q(h)`` the probability of sampling ``h``.
"""

from __future__ import annotations

from numba import njit

from ..tree import CHANCE
from .chance import sample_outcome
from .random import next_double
from .update import (
    add_to_average,
    advance_discounts,
    clear_visited,
    list_visited,
    take_own_reach,
    update_visited,
)


@njit(cache=True, _nrt=False, inline="always")
def sample_action(rng, probs, s: int, m: int, exploration: float) -> int:
    """Draw an action index in ``[0, m)`` from ``e / m + (1 - e) probs[s + j]`` (one uniform
    draw, inverse CDF in action order). Never returns an action of probability 0, whatever
    the rounding of the running sum."""
    u = next_double(rng)
    uniform = exploration / m
    keep = 1.0 - exploration
    total = 0.0
    last = 0
    for j in range(m):
        p = uniform + keep * probs[s + j]
        if p > 0.0:
            last = j
            total += p
            if u < total:
                return j
    return last


@njit(cache=True, _nrt=False, inline="always")
def external_pass(tree, statics, state, scratch, stack, player: int, weight: float) -> int:
    """One external-sampling pass of ``player``; returns the nodes touched.

    Forward: a depth-first walk (``stack``) in pre-order, drawing chance outcomes and the other
    players' actions as nodes are reached, listing the visited internal nodes in
    ``scratch.queue`` and ``player``'s infosets; it adds the average of the next player's
    sampled nodes. Backward: the list in reverse (children before parents) for the values:
    the sampled child's value at a sampled node, ``sum_a sigma(a) v(h a)`` at ``player``'s,
    where ``v(h a)`` goes to the slot sums and ``v(h)`` to the baseline. Writes
    ``scratch.value[player]``, ``scratch.reach`` (``pi_o``), ``scratch.sampled_child``,
    ``scratch.queue``, ``scratch.instant``, ``scratch.baseline`` and ``state.strategy_sum``.
    """
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    rng = state.rng
    others = scratch.reach  # pi_o: sampled reach of the players other than p and the averaged
    chosen = scratch.sampled_child
    order = scratch.queue
    value = scratch.value[player]
    averaged = (player + 1) % tree.num_players
    solo = tree.num_players == 1
    chance_offset = tree.num_action_slots
    stack[0] = 0
    others[0] = 1.0
    top = 1
    count = 0
    touched = 1
    while top > 0:
        top -= 1
        n = stack[top]
        order[count] = n
        count += 1
        c = first_child[n]
        m = num_children[n]
        s = node_slot[n]
        reach = others[n]
        if node_kind[n] == CHANCE:
            k = sample_outcome(rng, statics.alias_prob, statics.alias_index, s - chance_offset, m)
        elif node_player[n] == player:
            infoset = node_infoset[n]
            list_visited(scratch, infoset)
            if solo:  # no one else to average it: its own reach, as chance sampling does
                take_own_reach(tree, state, scratch, infoset)
                add_to_average(tree, state, infoset, weight * scratch.own_reach[infoset])
            touched += m
            for j in range(m - 1, -1, -1):  # pushed last first: the first child pops first
                if num_children[c + j] > 0:
                    others[c + j] = reach
                    stack[top] = c + j
                    top += 1
            continue
        else:
            k = sample_action(rng, probs, s, m, 0.0)
            if node_player[n] == averaged:
                add_to_average(tree, state, node_infoset[n], weight / reach)
            else:
                reach *= probs[s + k]
        chosen[n] = k
        touched += 1
        if num_children[c + k] > 0:
            others[c + k] = reach
            stack[top] = c + k
            top += 1
    instant = scratch.instant
    baseline = scratch.baseline
    for i in range(count - 1, -1, -1):
        n = order[i]
        c = first_child[n]
        if node_kind[n] == CHANCE or node_player[n] != player:
            value[n] = value[c + chosen[n]]
            continue
        s = node_slot[n]
        m = num_children[n]
        v = 0.0
        for j in range(m - 1, -1, -1):  # last child first, as the other passes sum
            v += probs[s + j] * value[c + j]
        value[n] = v
        baseline[node_infoset[n]] += v
        for j in range(m):
            instant[s + j] += value[c + j]
    return touched


@njit(cache=True, _nrt=False, inline="always")
def outcome_pass(
    tree, statics, state, scratch, stack, player: int, weight: float, exploration: float,
) -> int:
    """One outcome-sampling pass of ``player``: one sampled path; returns the nodes touched.

    Forward, root to terminal: draw each node's child, keep the path in ``stack`` and, at
    ``player``'s nodes, ``q_p(h)`` (the product of ``player``'s sampling probabilities above
    ``h``) in ``scratch.reach``, and add the average with weight ``w_t pi_p(h) / q(h)``.
    Backward, terminal to root, with ``v`` the sampled utility times the tail's
    ``sigma / s`` ratios: at ``player``'s node with sampled action ``k``, the sampled action's
    value is ``v / s(k)`` and the node's ``sigma(k) v / s(k)``; both, divided by ``q_p(h)``
    (chance's and the others' probabilities cancel against their sampling), go to the slot
    sum of ``k`` and to the baseline. Writes ``scratch.reach``, ``scratch.sampled_child``,
    ``scratch.instant``, ``scratch.baseline`` and ``state.strategy_sum``.
    """
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_infoset = tree.node_infoset
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    probs = state.probs
    rng = state.rng
    chosen = scratch.sampled_child
    chance_offset = tree.num_action_slots
    own = 1.0  # pi_p(h)
    own_sampling = 1.0  # q_p(h)
    sampling = 1.0  # q(h): every sampling probability on the path, chance included
    depth = 0
    n = 0
    while num_children[n] > 0:
        stack[depth] = n
        depth += 1
        m = num_children[n]
        s = node_slot[n]
        if node_kind[n] == CHANCE:
            k = sample_outcome(rng, statics.alias_prob, statics.alias_index, s - chance_offset, m)
            sampling *= probs[s + k]
        elif node_player[n] == player:
            infoset = node_infoset[n]
            list_visited(scratch, infoset)
            add_to_average(tree, state, infoset, weight * own / sampling)
            k = sample_action(rng, probs, s, m, exploration)
            scratch.reach[n] = own_sampling
            explored = exploration / m + (1.0 - exploration) * probs[s + k]
            own *= probs[s + k]
            own_sampling *= explored
            sampling *= explored
        else:
            k = sample_action(rng, probs, s, m, 0.0)
            sampling *= probs[s + k]
        chosen[n] = k
        n = first_child[n] + k
    v = scratch.value[player, n]  # a terminal: its utility
    for i in range(depth - 1, -1, -1):
        n = stack[i]
        if node_kind[n] == CHANCE or node_player[n] != player:
            continue  # sampled with its own probability: sigma / s = 1
        s = node_slot[n]
        k = chosen[n]
        explored = exploration / num_children[n] + (1.0 - exploration) * probs[s + k]
        sampled_value = v / explored
        v = probs[s + k] * sampled_value
        scale = 1.0 / scratch.reach[n]
        scratch.instant[s + k] += sampled_value * scale
        scratch.baseline[node_infoset[n]] += v * scale
    return depth + 1


@njit(cache=True, _nrt=False, inline="always")
def _mccfr_block(
    tree, statics, state, scratch, stack, schedule, alternating, lower, lazy, outcome,
    exploration: float,
) -> int:
    """``schedule.shape[1]`` iterations: each player's pass in turn (and its update at once
    when ``alternating``; else every update after the last pass, all on the same profile)."""
    num_players = tree.num_players
    touched = 0
    for k in range(schedule.shape[1]):
        if lazy:
            advance_discounts(state, schedule[0, k], schedule[1, k])
        weight = schedule[2, k]
        for player in range(num_players):
            if outcome:
                touched += outcome_pass(
                    tree, statics, state, scratch, stack, player, weight, exploration
                )
            else:
                touched += external_pass(tree, statics, state, scratch, stack, player, weight)
            if alternating or player == num_players - 1:
                update_visited(
                    tree, state, scratch, player if alternating else 0, player + 1,
                    schedule[0, k], schedule[1, k], weight, lower, False, lazy, False,
                )
                clear_visited(scratch)
    return touched


@njit(cache=True, nogil=True, _nrt=False)
def run_external(tree, statics, state, scratch, stack, schedule, alternating, lower, lazy) -> int:
    """External-sampling MCCFR: a block of iterations in one call (see :func:`external_pass`)."""
    return _mccfr_block(
        tree, statics, state, scratch, stack, schedule, alternating, lower, lazy, False, 0.0
    )


@njit(cache=True, nogil=True, _nrt=False)
def run_outcome(
    tree, statics, state, scratch, stack, schedule, alternating, lower, lazy, exploration: float,
) -> int:
    """Outcome-sampling MCCFR: a block of iterations in one call (see :func:`outcome_pass`)."""
    return _mccfr_block(
        tree, statics, state, scratch, stack, schedule, alternating, lower, lazy, True,
        exploration,
    )
