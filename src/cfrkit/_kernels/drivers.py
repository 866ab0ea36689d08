"""One small driver per traversal family: a block of iterations in one call.

Each driver runs ``schedule.shape[1]`` iterations; column ``k`` of ``schedule`` holds iteration
``k``'s positive and negative regret discounts and its average weight (see
:func:`cfrkit.rules.kernel_schedule`). Everything is written in place in ``state`` and
``scratch``; the drivers return the nodes touched. They are separate functions so that numba
compiles only the family a trainer uses: a user of the full pass never pays for pruning or
sampling. The pieces come inlined from ``full_pass``, ``queued_pass``, ``chance``,
``sampled_pass``, ``update`` and ``regret_pruning``.

Update order (OpenSpiel's ``CFRSolver`` convention): with ``alternating`` the players update in
order ``0..P-1``, each player's pass followed at once by its update, so later players see the
refreshed strategy; otherwise every pass sees the same profile and all update at the end.
"""

from __future__ import annotations

from numba import njit

from .chance import draw_sample
from .full_pass import full_pass
from .queued_pass import queued_backward, visit_forward
from .regret_pruning import begin_pass, end_pass
from .sampled_pass import cut_segments, joint_sampled_walk, sampled_pass
from .update import (
    advance_discounts,
    average_player,
    clear_visited,
    update_player,
    update_sampled,
    update_visited,
)


@njit(cache=True, _nrt=False, inline="always")
def step_order(step: int, num_players: int, alternating) -> tuple:
    """``(player, is_pass)`` of step ``step`` of an iteration's ``2 P`` steps.

    Alternating: pass 0, update 0, pass 1, update 1, ...; simultaneous: every pass, then every
    update. One loop over the steps keeps a single inlined copy of the pass and of the update
    (half the compile time of one loop per schedule).
    """
    if alternating:
        return step // 2, step % 2 == 0
    return step % num_players, step < num_players


@njit(cache=True, nogil=True, _nrt=False)
def run_full(tree, state, scratch, schedule, alternating, lower, predictive) -> int:
    """Full passes: every node once per player per iteration."""
    num_players = tree.num_players
    for k in range(schedule.shape[1]):
        for step in range(2 * num_players):
            player, is_pass = step_order(step, num_players, alternating)
            if is_pass:
                full_pass(tree, state, scratch, player)
            else:
                update_player(
                    tree, state, scratch, player, schedule[0, k], schedule[1, k], schedule[2, k],
                    lower, predictive,
                )
    return schedule.shape[1] * num_players * tree.node_kind.shape[0]


@njit(cache=True, nogil=True, _nrt=False)
def run_pruned(
    tree, statics, state, scratch, schedule, alternating, threshold: float, regret_pruning,
    lower, predictive, lazy,
) -> int:
    """Queued passes that skip zero-reach subtrees (and below-threshold or windowed ones).

    The average adds every infoset of the player, reached or not, as a full pass does; only the
    visited infosets are folded and re-matched (the others' regrets did not change, and under a
    discounting rule they are discounted lazily).
    """
    num_players = tree.num_players
    touched = 0
    for k in range(schedule.shape[1]):
        if lazy:
            advance_discounts(state, schedule[0, k], schedule[1, k])
        for step in range(2 * num_players):
            player, is_pass = step_order(step, num_players, alternating)
            if is_pass:
                if regret_pruning:
                    touched += begin_pass(tree, statics, state, scratch, player)
                count, visits = visit_forward(
                    tree, statics, state, scratch, player, threshold, regret_pruning
                )
                queued_backward(tree, statics, state, scratch, count, player, regret_pruning)
                touched += visits
                continue
            average_player(tree, state, scratch, player, schedule[2, k])
            state.accumulations[player] += 1
            if alternating or player == num_players - 1:  # the players updated now
                first = player if alternating else 0
                update_visited(
                    tree, state, scratch, first, player + 1, schedule[0, k], schedule[1, k],
                    schedule[2, k], lower, predictive, lazy, False,
                )
                if regret_pruning:
                    for updated in range(first, player + 1):
                        end_pass(tree, statics, state, scratch, updated)
                clear_visited(scratch)
    return touched


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def run_chance_sampled(
    tree, statics, state, scratch, schedule, alternating, per_player, lower, predictive, lazy,
) -> int:
    """Chance-sampled passes, one per player: one sampled outcome per chance node reached,
    every player action walked.

    One sample per iteration shared by the players' passes, or a fresh one per pass
    (``per_player``). Only the visited infosets get average weight, regrets and a refresh;
    with alternating updates under a rule without discounts or predictions, those a sample
    meets once are updated during their pass (see ``sampled_pass``). Simultaneous updates on
    one shared sample walk it once for everyone: :func:`run_joint_sampled`; alternating updates
    under a rule without predictions or discounts run in :func:`run_chance_sampled_plain`,
    which inlines this driver (``inline`` matters only to calls from other kernels).
    """
    num_players = tree.num_players
    touched = 0
    count = 0  # segments of the current sample, and lone chance nodes skipped
    skipped = 0
    for k in range(schedule.shape[1]):
        if lazy:
            advance_discounts(state, schedule[0, k], schedule[1, k])
        dpos, dneg, weight = schedule[0, k], schedule[1, k], schedule[2, k]
        fused = alternating and not (predictive or lazy) and dpos == 1.0 and dneg == 1.0
        for step in range(2 * num_players):
            player, is_pass = step_order(step, num_players, alternating)
            if is_pass:
                if per_player or step == 0:
                    draw_sample(tree, statics, state, scratch)
                    count, skipped = cut_segments(statics, scratch)
                touched += skipped + sampled_pass(
                    tree, statics, state, scratch, count, player, fused, weight, lower
                )
            elif alternating or player == num_players - 1:  # the players updated now
                update_sampled(
                    tree, state, scratch, statics.layout.infoset_once, fused,
                    player if alternating else 0, player + 1, dpos, dneg, weight, lower,
                    predictive, lazy,
                )
                clear_visited(scratch)
    return touched


@njit(cache=True, nogil=True, _nrt=False)
def run_chance_sampled_plain(tree, statics, state, scratch, schedule, per_player, lower) -> int:
    """:func:`run_chance_sampled` for alternating updates under a rule without predictions or
    discounts (vanilla, regret matching+, linear averaging), those switches constant: the
    compiled loop carries no code for the other cases. Measured on three-player Kuhn poker: 13%
    faster per iteration than with the switches read at run time (less code in the loops,
    fewer values kept on the stack).

    (A separate driver rather than arguments left out of :func:`run_chance_sampled`: numba
    would compile those as constants too, but then takes its slow path at every call, about
    0.6 ms with these argument bundles -- 6% of a 10 ms block.)
    """
    return run_chance_sampled(
        tree, statics, state, scratch, schedule, True, per_player, lower, False, False
    )


@njit(cache=True, nogil=True, _nrt=False)
def run_joint_sampled(tree, statics, state, scratch, schedule, lower, predictive, lazy) -> int:
    """Chance-sampled CFR with simultaneous updates and one sample per iteration: the sample
    walked once for every player (``joint_sampled_walk``), then every player updated.

    A driver of its own, so that the default alternating trainers never compile the joint
    walk. (Its switches stay run-time values: compiled as constants, as in
    :func:`run_chance_sampled`, it measured no faster.)
    """
    touched = 0
    for k in range(schedule.shape[1]):
        if lazy:
            advance_discounts(state, schedule[0, k], schedule[1, k])
        dpos, dneg, weight = schedule[0, k], schedule[1, k], schedule[2, k]
        fused = not (predictive or lazy) and dpos == 1.0 and dneg == 1.0
        draw_sample(tree, statics, state, scratch)
        count, skipped = cut_segments(statics, scratch)
        touched += skipped + joint_sampled_walk(
            tree, statics, state, scratch, count, fused, weight, lower
        )
        update_sampled(
            tree, state, scratch, statics.layout.infoset_once, fused, 0, tree.num_players, dpos,
            dneg, weight, lower, predictive, lazy,
        )
        clear_visited(scratch)
    return touched
