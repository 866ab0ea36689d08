"""The per-infoset update: the ONE place cumulative regrets and average weights change.

A pass (full, queued or sampled) leaves, for the updating player's infosets, the slot sums
``instant[I, a] = sum_h pi_{-p}(h) v_p(h a)`` and the baseline ``sum_h pi_{-p}(h) v_p(h)``; their
difference is the instantaneous regret ``r^t(I, a)``. This module folds it in with the regret
rule (see :mod:`cfrkit.rules`)::

    x = max(R(I, a) + r, lower);  R(I, a) = x * (d_+ if x > 0 else d_-)   (lower: 0 or -inf)
    sigma(I) = RM(R(I) + r(I)) if predictive else RM(R(I))        (unless the infoset is locked)

and adds ``w_t * pi_p(I) * sigma^t(I, a)`` to the average, ``sigma^t`` being the strategy the
pass played (so the average is taken before the refresh).

Full passes update every infoset of the player every pass. Queued passes (pruned or sampled)
update only the infosets they visited; under a discounting rule the others are discounted
*lazily*: each infoset remembers the running products ``G_+(t) = prod_s d_+(s)`` and ``G_-(t)``
of its last update, and its stored regret is brought up to date by ``G(t-1) / G(last)`` (chosen
by the regret's sign, which positive scaling never changes) the next time it is updated or read.
Regret matching is scale-free per sign of the sum, so an infoset's strategy does not move while
it is only being discounted, and nothing else needs touching. The products are kept as
``frexp`` pairs, so no run is long enough to underflow them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False, inline="always")
def match_infoset(regret, prediction, probs, start: int, end: int, predictive) -> None:
    """Regret matching on slots ``[start, end)``: ``sigma(a) = y_a^+ / sum_b y_b^+``, uniform
    when no ``y`` is positive, with ``y = R`` (plus ``prediction`` if ``predictive``).

    Hart and Mas-Colell 2000; predictive regret matching+ (Farina et al. 2021) adds the
    prediction. Writes ``probs[start:end]`` in place.
    """
    # branch-free positive parts: whether a regret is positive is unpredictable
    total = 0.0
    for slot in range(start, end):
        y = regret[slot] + prediction[slot] if predictive else regret[slot]
        total += max(y, 0.0)
    if total > 0.0:
        scale = 1.0 / total  # one division per infoset
        for slot in range(start, end):
            y = regret[slot] + prediction[slot] if predictive else regret[slot]
            probs[slot] = max(y, 0.0) * scale
    else:
        uniform = 1.0 / (end - start)
        for slot in range(start, end):
            probs[slot] = uniform


@njit(cache=True, _nrt=False, inline="always")
def fold_regrets(
    state, scratch, infoset: int, start: int, end: int, dpos: float, dneg: float,
    pending_pos: float, pending_neg: float, lower: float, predictive,
) -> None:
    """``R <- rule(R * pending + instant - baseline)`` on one infoset's slots; clears the sums.

    ``pending_pos`` / ``pending_neg`` bring a lazily discounted regret up to date (1 when the
    infoset was updated on the previous iteration, or the rule does not discount). ``lower``
    is 0 under regret matching+ and -inf otherwise (a branch-free floor).
    """
    b = scratch.baseline[infoset]
    scratch.baseline[infoset] = 0.0
    # one test per infoset: without discounts the per-slot scaling is skipped (measured: the
    # scaling costs ~10% of a vanilla iteration on Leduc)
    if dpos == 1.0 and dneg == 1.0 and pending_pos == 1.0 and pending_neg == 1.0:
        _fold(state, scratch, start, end, b, 1.0, 1.0, 1.0, 1.0, lower, predictive, False)
    else:
        _fold(state, scratch, start, end, b, dpos, dneg, pending_pos, pending_neg, lower,
              predictive, True)


@njit(cache=True, _nrt=False, inline="always")
def _fold(state, scratch, start, end, b, dpos, dneg, pending_pos, pending_neg, lower, predictive,
          discounted) -> None:
    regret = state.regret
    instant = scratch.instant
    for slot in range(start, end):
        r = instant[slot] - b
        instant[slot] = 0.0
        if discounted:
            x = regret[slot]
            x = max(x * (pending_pos if x > 0.0 else pending_neg) + r, lower)
            regret[slot] = x * (dpos if x > 0.0 else dneg)
        else:
            regret[slot] = max(regret[slot] + r, lower)
        if predictive:
            state.prediction[slot] = r


@njit(cache=True, _nrt=False, inline="always")
def update_infoset(
    tree, state, scratch, infoset: int, dpos: float, dneg: float, lower: float, predictive, lazy,
) -> None:
    """Fold one infoset's instantaneous regrets in with the rule, then regret-match it.

    With ``lazy``, first apply the discounts the infoset missed since its last update and
    record the products as of this iteration.
    """
    start = tree.infoset_first_slot[infoset]
    end = start + tree.infoset_num_actions[infoset]
    pending_pos = 1.0
    pending_neg = 1.0
    if lazy:
        pending_pos = _pending(state, infoset, 0, 0)
        pending_neg = _pending(state, infoset, 1, 0)
        for sign in range(2):
            state.stamp_scale[infoset, sign] = state.discount_scale[1, sign]
            state.stamp_exponent[infoset, sign] = state.discount_exponent[1, sign]
    fold_regrets(
        state, scratch, infoset, start, end, dpos, dneg, pending_pos, pending_neg, lower,
        predictive,
    )
    if not state.locked[infoset]:
        match_infoset(state.regret, state.prediction, state.probs, start, end, predictive)


@njit(cache=True, _nrt=False, inline="always")
def _pending(state, infoset: int, sign: int, row: int) -> float:
    """``G_sign(row) / G_sign(infoset's last update)``: the discounts an infoset missed.

    ``row`` 0 is the product through the previous iteration (an update in progress), row 1
    through the current one (a read after the iteration).
    """
    return math.ldexp(
        state.discount_scale[row, sign] / state.stamp_scale[infoset, sign],
        state.discount_exponent[row, sign] - state.stamp_exponent[infoset, sign],
    )


@njit(cache=True, _nrt=False, inline="always")
def advance_discounts(state, dpos: float, dneg: float) -> None:
    """Start an iteration: ``G(t-1) <- G(t)``, ``G(t) <- G(t-1) * d(t)`` for both signs."""
    for sign in range(2):
        scale = state.discount_scale[1, sign]
        exponent = state.discount_exponent[1, sign]
        state.discount_scale[0, sign] = scale
        state.discount_exponent[0, sign] = exponent
        mantissa, shift = math.frexp(scale * (dpos if sign == 0 else dneg))
        state.discount_scale[1, sign] = mantissa
        state.discount_exponent[1, sign] = exponent + shift


@njit(cache=True, _nrt=False, inline="always")
def take_own_reach(tree, state, scratch, infoset: int) -> None:
    """``own_reach[I] = pi_p(I)``, the acting player's own reach of ``I``.

    One number per infoset under perfect recall: the reach of the player's previous infoset
    times the probability, as played, of the action taken there (infosets are numbered, and
    visited, after that previous infoset, so its own reach is already taken).
    """
    ps = tree.infoset_parent_slot[infoset]
    scratch.own_reach[infoset] = (
        1.0 if ps < 0 else scratch.own_reach[tree.infoset_parent[infoset]] * state.probs[ps]
    )


@njit(cache=True, _nrt=False, inline="always")
def add_to_average(tree, state, infoset: int, weight: float) -> None:
    """``S(I, a) += weight * sigma(I, a)`` for the actions of ``infoset``."""
    start = tree.infoset_first_slot[infoset]
    for slot in range(start, start + tree.infoset_num_actions[infoset]):
        state.strategy_sum[slot] += weight * state.probs[slot]


@njit(cache=True, _nrt=False, inline="always")
def update_player(tree, state, scratch, player: int, dpos, dneg, weight, lower, predictive) -> None:
    """After a full pass of ``player``: average, fold and refresh every infoset of the player,
    in one sweep over their slots.

    Each infoset's own reach needs its predecessor's strategy as it was played, so the own
    reaches are all taken first (one product per infoset); then each infoset is averaged,
    folded and re-matched while its slots are in cache.
    """
    first = tree.player_infoset_start[player]
    end = tree.player_infoset_start[player + 1]
    for infoset in range(first, end):
        take_own_reach(tree, state, scratch, infoset)
    for infoset in range(first, end):
        start = tree.infoset_first_slot[infoset]
        stop = start + tree.infoset_num_actions[infoset]
        add_to_average(tree, state, infoset, weight * scratch.own_reach[infoset])
        fold_regrets(state, scratch, infoset, start, stop, dpos, dneg, 1.0, 1.0, lower, predictive)
        if state.locked[infoset]:
            continue
        # a constant switch in each of two copies: testing it per slot costs ~5% of a
        # vanilla Leduc iteration
        if predictive:
            match_infoset(state.regret, state.prediction, state.probs, start, stop, True)
        else:
            match_infoset(state.regret, state.prediction, state.probs, start, stop, False)


@njit(cache=True, _nrt=False, inline="always")
def average_player(tree, state, scratch, player: int, weight: float) -> None:
    """The average step of :func:`update_player` alone (queued passes that are not sampled
    add every infoset's weight, reached or not, exactly as a full pass does)."""
    for infoset in range(tree.player_infoset_start[player], tree.player_infoset_start[player + 1]):
        take_own_reach(tree, state, scratch, infoset)
        add_to_average(tree, state, infoset, weight * scratch.own_reach[infoset])


@njit(cache=True, _nrt=False, inline="always")
def list_visited(scratch, infoset: int) -> None:
    """List ``infoset`` (once per epoch) as one whose regrets this pass changes.

    A queued pass changes only the regrets of the infosets it visits, so only those are folded
    and re-matched, and only those can open or close a pruning window.
    """
    if scratch.visited_stamp[infoset] != scratch.visited_count[1]:
        scratch.visited_stamp[infoset] = scratch.visited_count[1]
        scratch.visited[scratch.visited_count[0]] = infoset
        scratch.visited_count[0] += 1


@njit(cache=True, _nrt=False, inline="always")
def visit_sampled(tree, state, scratch, infoset: int) -> None:
    """A sampled pass reaches a history of ``infoset``: list it, take its own reach on the first
    visit (its player's previous infoset was visited before it, with the strategy as played),
    and count the visit for the average."""
    if scratch.visited_stamp[infoset] != scratch.visited_count[1]:
        list_visited(scratch, infoset)
        take_own_reach(tree, state, scratch, infoset)
    scratch.visits[infoset] += 1.0


@njit(cache=True, _nrt=False, inline="always")
def clear_visited(scratch) -> None:
    """Empty the visited list (a new epoch: the stamps of the old one no longer match)."""
    scratch.visited_count[0] = 0
    scratch.visited_count[1] += 1


@njit(cache=True, _nrt=False, inline="always")
def update_visited(
    tree, state, scratch, first_player: int, end_player: int, dpos, dneg, weight, lower,
    predictive, lazy, sampled,
) -> None:
    """After the queued passes of players ``[first_player, end_player)``: fold and refresh the
    infosets they visited (``scratch.visited``); when ``sampled``, add their average weight
    first.

    A sampled pass adds the average weight once per visited history, ``weight * pi_p(h) *
    sigma(I, a)``; all histories of an infoset share ``pi_p(I)`` (taken at the first visit, see
    :func:`visit_sampled`), so that is the visit count times the infoset's weight.

    Under a predictive rule, an infoset of an updated player that the passes did not visit has
    instantaneous regret 0, so a prediction left from its last update must be dropped and the
    infoset re-matched: each updated player's list of infosets with a nonzero prediction
    (``state.predicted``) is replaced by the infosets visited now.
    """
    for k in range(scratch.visited_count[0]):
        infoset = scratch.visited[k]
        if sampled:
            add_to_average(
                tree, state, infoset, weight * scratch.visits[infoset] * scratch.own_reach[infoset]
            )
            scratch.visits[infoset] = 0.0
        update_infoset(tree, state, scratch, infoset, dpos, dneg, lower, predictive, lazy)
    if predictive:
        for player in range(first_player, end_player):
            _forget_predictions(tree, state, scratch, player)


@njit(cache=True, _nrt=False, inline="always")
def _forget_predictions(tree, state, scratch, player: int) -> None:
    epoch = scratch.visited_count[1]
    first = tree.player_infoset_start[player]
    for k in range(state.predicted_count[player]):
        infoset = state.predicted[first + k]
        if scratch.visited_stamp[infoset] == epoch:
            continue  # updated now: its prediction is this pass's regret
        start = tree.infoset_first_slot[infoset]
        end = start + tree.infoset_num_actions[infoset]
        for slot in range(start, end):
            state.prediction[slot] = 0.0
        if not state.locked[infoset]:
            match_infoset(state.regret, state.prediction, state.probs, start, end, True)
    count = 0
    for k in range(scratch.visited_count[0]):
        infoset = scratch.visited[k]
        if tree.infoset_player[infoset] == player:
            state.predicted[first + count] = infoset
            count += 1
    state.predicted_count[player] = count


@njit(cache=True, nogil=True, _nrt=False)
def synced_regrets(tree, state, out: np.ndarray) -> None:
    """``out`` = every cumulative regret as of now, the lazy discounts applied (reads ``state``
    only, so reading the regrets never changes the rounding of a run)."""
    for slot in range(out.shape[0]):
        out[slot] = state.regret[slot]
    if state.stamp_scale.shape[0] == 0:
        return
    for infoset in range(tree.infoset_player.shape[0]):
        pos = _pending(state, infoset, 0, 1)
        neg = _pending(state, infoset, 1, 1)
        start = tree.infoset_first_slot[infoset]
        for slot in range(start, start + tree.infoset_num_actions[infoset]):
            x = out[slot]
            out[slot] = x * (pos if x > 0.0 else neg)


@njit(cache=True, _nrt=False, inline="always")
def correct_regret(state, slot: int, delta: float) -> None:
    """Regret-based pruning's settlement: replace a window's bounded increments by the
    settled value (plain rule only; see ``regret_pruning.py``)."""
    state.regret[slot] += delta
