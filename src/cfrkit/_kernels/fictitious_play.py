"""Extensive-form fictitious play (XFP): best responses, then the realization-weighted update.

One iteration ``t`` (1-based) of Heinrich, Lanctot and Silver (2015), Algorithm 1, full width:

1. every player ``i`` best-responds to the current average profile ``pi_t``
   (:func:`.best_response.best_response_value`, the kernel behind ``cfrkit.best_response``;
   all players against the same ``pi_t``);
2. every infoset ``u`` of every player is moved towards the response ``beta`` with
   ``alpha = 1 / (t + 1)``::

       pi(u) <- pi(u) + alpha x_beta(u) (beta(u) - pi(u)) / ((1 - alpha) x_pi(u) + alpha x_beta(u))

   where ``x_pi(u)`` and ``x_beta(u)`` are the acting player's own realization probabilities of
   the sequence leading to ``u`` under the old average and under the response (1 if the
   response plays every own action on the way to ``u``, else 0).

The arithmetic is that of OpenSpiel's ``XFPSolver`` operation for operation (own reaches
multiplied from the root down, the update as written above), so that the two resolve the
rounding of mathematically tied best-response actions alike (see ``cfrkit.FictitiousPlay``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .best_response import best_response_value


@njit(cache=True, nogil=True)
def xfp_iterations(
    tree,
    probs: np.ndarray,
    first_iteration: int,
    count: int,
    orders: np.ndarray,
    used: np.ndarray,
    reach: np.ndarray,
    value: np.ndarray,
    choice: np.ndarray,
    own_average: np.ndarray,
    own_response: np.ndarray,
) -> None:
    """Run XFP iterations ``first_iteration .. first_iteration + count - 1`` (1-based).

    ``probs`` (float64[A + C]) holds the average profile over the decision slots, then the
    chance probabilities; its decision slots are updated in place. ``orders`` (int64[P, L]) and
    ``used`` (int64[P]) are each player's bottom-up best-response order
    (:func:`.best_response.best_response_order`). Writes the workspaces ``reach``
    (float64[N]), ``value`` (float64[P, N], terminal entries preset to the utilities: they are
    never overwritten), ``choice`` (int64[S]: every infoset's best-response action index of
    the last iteration), ``own_average`` and ``own_response`` (float64[S]: the acting player's
    own realization probability of each infoset under the old average and the response).
    """
    num_players = value.shape[0]
    num_infosets = choice.shape[0]
    parent = tree.infoset_parent
    parent_slot = tree.infoset_parent_slot
    first_slot = tree.infoset_first_slot
    num_actions = tree.infoset_num_actions
    for k in range(count):
        alpha = 1.0 / (first_iteration + k + 1.0)
        # 1. every player's best response to the same average profile (the kernel writes only
        #    the responder's infosets of choice[])
        for p in range(num_players):
            best_response_value(tree, probs, p, orders[p], used[p], reach, value[p], choice)
        # 2. own realization probabilities, parents first (a player's previous infoset always
        #    has a smaller index), all read from the old average before any row changes
        for u in range(num_infosets):
            up = parent[u]
            if up < 0:
                own_average[u] = 1.0
                own_response[u] = 1.0
            else:
                own_average[u] = own_average[up] * probs[parent_slot[u]]
                played = parent_slot[u] - first_slot[up] == choice[up]
                own_response[u] = own_response[up] if played else 0.0
        # 3. the realization-weighted step towards the response; x_beta(u) = 0 leaves the row
        #    exactly as it is (the formula adds 0), so those rows are skipped
        for u in range(num_infosets):
            x_beta = own_response[u]
            if x_beta == 0.0:
                continue
            denominator = (1.0 - alpha) * own_average[u] + alpha * x_beta
            s = first_slot[u]
            for a in range(num_actions[u]):
                old = probs[s + a]
                target = 1.0 if a == choice[u] else 0.0
                probs[s + a] = old + (alpha * x_beta * (target - old)) / denominator
