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

A chance-sampled pass visits few histories per infoset, so its update step weighs as much as
the pass: an infoset is averaged, folded and summed for regret matching in one sweep over its
slots (the same operations in the same order, so the same bits), and an alternating pass may
update an infoset it can meet only once on the spot, from that history's values
(:func:`update_single_history`). Slots and infosets index as ``uint64``: numba tests signed
indices for wrap-around at every access (see ``sampled_pass.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64


@njit(cache=True, _nrt=False, inline="always")
def match_infoset(regret, prediction, probs, start: int, end: int, predictive) -> None:
    """Regret matching on slots ``[start, end)``: ``sigma(a) = y_a^+ / sum_b y_b^+``, uniform
    when no ``y`` is positive, with ``y = R`` (plus ``prediction`` if ``predictive``).

    Hart and Mas-Colell 2000; predictive regret matching+ (Farina et al. 2021) adds the
    prediction. Writes ``probs[start:end]`` in place.
    """
    # branch-free positive parts: whether a regret is positive is unpredictable
    total = 0.0
    for k in range(start, end):
        slot = uint64(k)  # (unsigned: see the module's docstring)
        y = regret[slot] + prediction[slot] if predictive else regret[slot]
        total += max(y, 0.0)
    _rematch(regret, prediction, probs, start, end, total, predictive)


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
    i = uint64(infoset)
    b = scratch.baseline[i]
    scratch.baseline[i] = 0.0
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
    for k in range(start, end):
        slot = uint64(k)
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
    i = uint64(infoset)
    start = tree.infoset_first_slot[i]
    end = start + tree.infoset_num_actions[i]
    pending_pos = 1.0
    pending_neg = 1.0
    if lazy:
        pending_pos = _pending(state, i, 0, 0)
        pending_neg = _pending(state, i, 1, 0)
        for sign in range(2):
            state.stamp_scale[i, sign] = state.discount_scale[1, sign]
            state.stamp_exponent[i, sign] = state.discount_exponent[1, sign]
    fold_regrets(
        state, scratch, i, start, end, dpos, dneg, pending_pos, pending_neg, lower,
        predictive,
    )
    if not state.locked[i]:
        match_infoset(state.regret, state.prediction, state.probs, start, end, predictive)


@njit(cache=True, _nrt=False, inline="always")
def _pending(state, infoset: int, sign: int, row: int) -> float:
    """``G_sign(row) / G_sign(infoset's last update)``: the discounts an infoset missed.

    ``row`` 0 is the product through the previous iteration (an update in progress), row 1
    through the current one (a read after the iteration).
    """
    i = uint64(infoset)
    shift = state.discount_exponent[row, sign] - state.stamp_exponent[i, sign]
    # numba's ldexp takes a C int, so an int64 shift below -2^31 (about 5e6 iterations of
    # beta=-19) would wrap around to a huge factor; the ratio of two mantissas is below 2, so
    # from -1100 on the product is 0 anyway
    return math.ldexp(
        state.discount_scale[row, sign] / state.stamp_scale[i, sign], max(shift, -1100)
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
    i = uint64(infoset)
    ps = tree.infoset_parent_slot[i]
    scratch.own_reach[i] = (
        1.0 if ps < 0
        else scratch.own_reach[uint64(tree.infoset_parent[i])] * state.probs[uint64(ps)]
    )


@njit(cache=True, _nrt=False, inline="always")
def add_to_average(tree, state, infoset: int, weight: float) -> None:
    """``S(I, a) += weight * sigma(I, a)`` for the actions of ``infoset``."""
    i = uint64(infoset)
    start = tree.infoset_first_slot[i]
    for k in range(start, start + tree.infoset_num_actions[i]):
        slot = uint64(k)
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
        full_update_infoset(tree, state, scratch, infoset, dpos, dneg, weight, lower, predictive)


@njit(cache=True, _nrt=False, inline="always")
def full_update_infoset(tree, state, scratch, infoset, dpos, dneg, weight, lower, predictive) -> None:
    """One infoset's step of :func:`update_player` (its own reach already taken): average,
    fold, and re-match unless locked."""
    start = tree.infoset_first_slot[infoset]
    stop = start + tree.infoset_num_actions[infoset]
    add_to_average(tree, state, infoset, weight * scratch.own_reach[infoset])
    fold_regrets(state, scratch, infoset, start, stop, dpos, dneg, 1.0, 1.0, lower, predictive)
    if state.locked[infoset]:
        return
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
    i = uint64(infoset)
    if scratch.visited_stamp[i] != scratch.visited_count[1]:
        scratch.visited_stamp[i] = scratch.visited_count[1]
        scratch.visited[uint64(scratch.visited_count[0])] = i
        scratch.visited_count[0] += 1


@njit(cache=True, _nrt=False, inline="always")
def visit_sampled(tree, state, scratch, infoset: int) -> None:
    """A sampled pass reaches a history of ``infoset``: list it, take its own reach on the first
    visit (its player's previous infoset was visited before it, with the strategy as played),
    and count the visit for the average."""
    i = uint64(infoset)
    if scratch.visited_stamp[i] != scratch.visited_count[1]:
        list_visited(scratch, i)
        take_own_reach(tree, state, scratch, i)
    scratch.visits[i] += 1.0


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
        infoset = uint64(scratch.visited[uint64(k)])
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
def update_sampled(
    tree, state, scratch, once, fused, first_player: int, end_player: int, dpos, dneg, weight,
    lower, predictive, lazy,
) -> None:
    """:func:`update_visited` for chance-sampled passes, which may have updated some infosets
    already: with ``fused``, those with ``once[I]`` (their pass called
    :func:`update_single_history`) are skipped.
    """
    for k in range(scratch.visited_count[0]):
        infoset = uint64(scratch.visited[uint64(k)])
        if fused and once[infoset]:
            continue
        _update_visited_infoset(
            tree, state, scratch, infoset, dpos, dneg, weight, lower, predictive, lazy, True
        )
    if predictive:
        for player in range(first_player, end_player):
            _forget_predictions(tree, state, scratch, player)


@njit(cache=True, _nrt=False, inline="always")
def update_single_history(
    state, infoset, start, end, value, first_child, cf: float, v: float, own: float,
    weight: float, lower: float,
) -> None:
    """Update ``infoset`` at once from its one visited history, under a rule without discounts
    or predictions: average, fold and refresh exactly as :func:`update_visited` would after
    the pass.

    For a chance-sampled pass that cannot meet the infoset twice. The infoset's slots are
    ``[start, end)``; the history has others' reach ``cf``, own reach ``own``, value ``v``
    and its children's values at ``value[first_child + a]``. The regret comes from them
    directly, with the roundings it would get through ``scratch.instant`` and
    ``scratch.baseline`` (each then holds one term, ``0.0 + x``), and the visit count is 1.
    Sound only when nothing the pass computes later reads this infoset's strategy: no other
    history of it is in the sample, and its own reach and its history's value are taken.
    """
    regret = state.regret
    probs = state.probs
    w = weight * 1.0 * own
    b = 0.0 + cf * v
    total = 0.0
    for k in range(start, end):
        slot = uint64(k)
        state.strategy_sum[slot] += w * probs[slot]
        x = max(regret[slot] + ((0.0 + cf * value[first_child + (slot - start)]) - b), lower)
        regret[slot] = x
        total += max(x, 0.0)
    if not state.locked[infoset]:
        _rematch(regret, state.prediction, probs, start, end, total, False)


@njit(cache=True, _nrt=False, inline="always")
def _update_visited_infoset(
    tree, state, scratch, infoset, dpos, dneg, weight, lower, predictive, lazy, sampled,
) -> None:
    """:func:`add_to_average` (when ``sampled``, with the visit count) then
    :func:`update_infoset`, in one sweep over the infoset's slots.

    The same operations on the same values, so the same bits: the average takes the strategy
    as played (regret matching comes last), the fold and the sum of positive parts go slot by
    slot in order, and only the division and scaling need a second sweep. One sweep instead of
    four: a sampled pass visits few histories per infoset, so its update step is a large part
    of its cost, mostly loop overhead on two or three slots. (:func:`update_visited`, for the
    pruned passes, keeps :func:`update_infoset`: the single sweep measured 10% slower there on
    two-player Kuhn, and compiling it too made PrunedCFR's first use 25% longer.)
    """
    start = uint64(tree.infoset_first_slot[infoset])
    end = start + uint64(tree.infoset_num_actions[infoset])
    w = 0.0
    if sampled:
        w = weight * scratch.visits[infoset] * scratch.own_reach[infoset]
        scratch.visits[infoset] = 0.0
    pending_pos = 1.0
    pending_neg = 1.0
    if lazy:
        pending_pos = _pending(state, infoset, 0, 0)
        pending_neg = _pending(state, infoset, 1, 0)
        for sign in range(2):
            state.stamp_scale[infoset, sign] = state.discount_scale[1, sign]
            state.stamp_exponent[infoset, sign] = state.discount_exponent[1, sign]
    b = scratch.baseline[infoset]
    scratch.baseline[infoset] = 0.0
    if dpos == 1.0 and dneg == 1.0 and pending_pos == 1.0 and pending_neg == 1.0:
        total = _sweep(state, scratch, start, end, w, b, 1.0, 1.0, 1.0, 1.0, lower,
                       predictive, sampled, False)
    else:
        total = _sweep(state, scratch, start, end, w, b, dpos, dneg, pending_pos, pending_neg,
                       lower, predictive, sampled, True)
    if not state.locked[infoset]:
        _rematch(state.regret, state.prediction, state.probs, start, end, total, predictive)


@njit(cache=True, _nrt=False, inline="always")
def _sweep(state, scratch, start, end, w, b, dpos, dneg, pending_pos, pending_neg, lower,
           predictive, average, discounted) -> float:
    """The average (if ``average``), the fold (as :func:`_fold`) and the sum of the positive
    parts regret matching divides by (as :func:`match_infoset`), slot by slot; returns that
    sum."""
    regret = state.regret
    instant = scratch.instant
    total = 0.0
    for k in range(start, end):
        slot = uint64(k)
        if average:
            state.strategy_sum[slot] += w * state.probs[slot]
        r = instant[slot] - b
        instant[slot] = 0.0
        if discounted:
            x = regret[slot]
            x = max(x * (pending_pos if x > 0.0 else pending_neg) + r, lower)
            x = x * (dpos if x > 0.0 else dneg)
        else:
            x = max(regret[slot] + r, lower)
        regret[slot] = x
        if predictive:
            state.prediction[slot] = r
            total += max(x + r, 0.0)
        else:
            total += max(x, 0.0)
    return total


@njit(cache=True, _nrt=False, inline="always")
def _rematch(regret, prediction, probs, start, end, total: float, predictive) -> None:
    """The second sweep of :func:`match_infoset`, given the sum of positive parts."""
    if total > 0.0:
        scale = 1.0 / total  # one division per infoset
        if scale < math.inf:
            for k in range(start, end):
                slot = uint64(k)
                y = regret[slot] + prediction[slot] if predictive else regret[slot]
                probs[slot] = max(y, 0.0) * scale
        else:
            # a subnormal total (regrets of histories whose reach underflowed, ~700 moves
            # deep): 1 / total is inf and 0 * inf would be NaN, so divide slot by slot
            for k in range(start, end):
                slot = uint64(k)
                y = regret[slot] + prediction[slot] if predictive else regret[slot]
                probs[slot] = max(y, 0.0) / total
    else:
        uniform = 1.0 / (end - start)
        for k in range(start, end):
            probs[uint64(k)] = uniform


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
