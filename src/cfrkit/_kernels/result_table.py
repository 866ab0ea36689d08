"""Result-table learning (Dave Computes, 2019): self-play games against a shared result table.

Each game is one root-to-terminal walk. Its random draws come from the learner's own
xoshiro256** stream, in the order the walk meets the nodes, and an oracle replays them in that
order:

* at a chance node, :func:`.chance.sample_outcome` (two draws: a column, then the alias test);
* at a decision node, one draw ``u``; if ``u < explore`` a second draw ``v`` picks the uniform
  choice ``min(floor(v m), m - 1)``, else the greedy choice is taken (no draw).

The greedy choice at infoset ``I`` (slots ``s .. s + m``): the first never-tried choice
(``games[s + j] == 0``) in the game's action order, if there is one; else the choice with the
largest average gain ``gains[s + j] / games[s + j]`` (float64 division), the first in action
order among equal averages.

When the game ends at terminal ``z``, every decision of the game -- slot ``s + j`` taken by
player ``p`` -- gets ``games[s + j] += 1`` and ``gains[s + j] += u_p(z)``, in the order the
decisions were made. Nothing is written during the walk, so every choice of a game reads the
table as it was after the previous game.
"""

from __future__ import annotations

from numba import njit

from ..tree import CHANCE
from .chance import sample_outcome
from .random import next_double


@njit(cache=True, _nrt=False, inline="always")
def greedy_choice(games, gains, s: int, m: int) -> int:
    """The greedy choice at slots ``s .. s + m``: the first untried, else the first of the
    largest average gain."""
    for j in range(m):
        if games[s + j] == 0:
            return j
    best = 0
    best_value = gains[s] / games[s]
    for j in range(1, m):
        value = gains[s + j] / games[s + j]
        if value > best_value:
            best = j
            best_value = value
    return best


@njit(cache=True, nogil=True, _nrt=False)
def run_result_table(
    tree, alias_prob, alias_index, games, gains, rng, path_slot, path_player,
    count: int, explore: float,
) -> int:
    """Play ``count`` self-play games, updating the result table after each; return the
    decisions made.

    Modifies in place: ``games`` (int64[A], times each choice was made), ``gains``
    (float64[A], total payoff of the games in which it was made, to the player who made it),
    ``rng`` (uint64[4], the xoshiro256** state) and the buffers ``path_slot`` / ``path_player``
    (int32[N], the current game's decisions).
    """
    node_kind = tree.node_kind
    node_player = tree.node_player
    node_slot = tree.node_slot
    first_child = tree.node_first_child
    num_children = tree.node_num_children
    utility = tree.utility
    chance_offset = tree.num_action_slots
    decisions = 0
    for _ in range(count):
        n = 0
        depth = 0
        while num_children[n] > 0:
            m = num_children[n]
            s = node_slot[n]
            if node_kind[n] == CHANCE:
                k = sample_outcome(rng, alias_prob, alias_index, s - chance_offset, m)
            else:
                if next_double(rng) < explore:
                    k = min(int(next_double(rng) * m), m - 1)
                else:
                    k = greedy_choice(games, gains, s, m)
                path_slot[depth] = s + k
                path_player[depth] = node_player[n]
                depth += 1
            n = first_child[n] + k
        for i in range(depth):
            slot = path_slot[i]
            games[slot] += 1
            gains[slot] += utility[path_player[i], n]
        decisions += depth
    return decisions
