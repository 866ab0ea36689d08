"""Extensive-form fictitious play (XFP), full width, on the compiled tree.

Not a regret minimiser, so not a :class:`~cfrkit.Trainer`: it has no regrets, regret rule,
current strategy, node locking or checkpoint format, only an average profile and a counter.
It shares the trainers' way of running (``iterate(n)`` in short kernel blocks, Ctrl-C
honoured between blocks) and evaluation's best-response kernel.
"""

from __future__ import annotations


import numpy as np

from ._interrupt import Blocks, FixedGame, NoCopies, between_blocks, interruptible
from ._kernels.fictitious_play import xfp_iterations
from ._notice import first_call
from ._numbers import integer_value
from ._text import short_repr
from .evaluation import _response_order
from .game import Game
from .limits import MAX_ITERATIONS
from .policy import Policy
from .tree import CompiledGame, compile_game

__all__ = ["FictitiousPlay"]

# as the trainers: blocks of about 10 ms, one kernel call each (see trainers/base.py)


class FictitiousPlay(NoCopies, FixedGame):
    """Extensive-form fictitious play (XFP): Heinrich, Lanctot and Silver (2015), Algorithm 1.

    *Fictitious Self-Play in Extensive-Form Games* (ICML 2015), full width: each iteration
    computes every player's best response to the current average profile, exactly, on the
    compiled tree, and mixes it into that player's average. In two-player zero-sum games the
    average converges to a Nash equilibrium (as fictitious play does in normal form); with
    more players, or general-sum payoffs, convergence is not guaranteed.

    **The iteration.** The average starts uniform, ``pi_1``. At iteration ``t = 1, 2, ...``
    every player ``i`` gets a pure best response ``beta_t`` to the others' part of ``pi_t``
    (all players against the same ``pi_t``), from the kernel behind
    :func:`cfrkit.best_response`, and every infoset ``u`` of player ``i`` is updated with
    ``alpha_t = 1 / (t + 1)``::

        pi_{t+1}(u) = pi_t(u) + alpha_t x_beta(u) (beta_t(u) - pi_t(u))
                                / ((1 - alpha_t) x_pi(u) + alpha_t x_beta(u))

    ``x_pi(u)`` is player ``i``'s own realization probability of ``sigma_u``, its sequence of
    own (infoset, action) pairs leading to ``u`` (one sequence, by perfect recall): the
    product of ``pi_t``'s probabilities of those actions. ``x_beta(u)`` is the same under
    ``beta_t``: 1 if the response plays every one of them, else 0, and then the row stays as
    it is.

    **Why this update.** A behavioural strategy ``mu`` and its realization plan ``x_mu``
    determine each other: ``mu(u, a) = x_mu(sigma_u a) / x_mu(sigma_u)``. Playing ``pi`` with
    probability ``1 - alpha`` and ``beta`` with probability ``alpha`` (drawn once, before the
    game) has the realization plan ``x = (1 - alpha) x_pi + alpha x_beta``: the sequence form
    is linear. The behavioural strategy equivalent to that mixture is therefore::

        x(sigma_u a) / x(sigma_u)
          = ((1 - alpha) x_pi(u) pi(u, a) + alpha x_beta(u) beta(u, a))
            / ((1 - alpha) x_pi(u) + alpha x_beta(u))

    which is the update above, rearranged (the paper's Theorem 7). Each player's own reach
    weighs the two rows; mixing rows with ``alpha`` alone would not give the mixture. By
    induction, with ``alpha_t = 1 / (t + 1)``::

        x_{pi_{T+1}} = (x_{pi_1} + x_{beta_1} + ... + x_{beta_T}) / (T + 1)

    after ``T`` iterations the average is the uniform mixture, in the sequence form, of the
    uniform strategy and the ``T`` best responses. (So every own sequence keeps a realization
    probability of at least ``x_{pi_1}(sigma_u) / (t + 1) > 0``: the denominator is never 0.)
    OpenSpiel's ``XFPSolver`` takes the same step.

    **Ties.** A best response plays, at each infoset, the first action in the game's order
    among those whose value ``sum_{h in u} pi_{-i}(h) v_i(h a)`` is the largest float64 value,
    as :func:`cfrkit.best_response` does (and OpenSpiel's Python ``max`` over the legal
    actions). Fictitious play meets exactly tied actions often (two-player Kuhn poker: 20
    times in its first 100 iterations, the game has indifferences at equilibrium); their
    computed values then differ only by rounding, and the rounding picks the action (here the
    first of the tied actions 14 times, the second 6 times). The kernel does OpenSpiel's
    arithmetic operation for operation (own reaches multiplied from the root down, the update
    as written above), so the averages agree with ``XFPSolver``'s bit for bit (checked for
    1,000 iterations of Kuhn poker, 500 of three-player Kuhn, 30 of Leduc). An implementation
    that is only mathematically equal (summing the realization plans, then normalising) breaks
    one such tie the other way at iteration 52 of two-player Kuhn (player 1 holding the queen
    facing a bet: folding and calling are both worth -17/156) and follows another, equally
    valid, trajectory from there.

    Parameters
    ----------
    game : Game or CompiledGame
        The game to solve (compiled once, cached per game).

    Attributes
    ----------
    game : CompiledGame
        The compiled game, read-only (``fp.game.game`` is the object passed in).

    Raises
    ------
    TypeError
        If ``game`` is not a :class:`~cfrkit.Game` or :class:`~cfrkit.CompiledGame` (as for
        the trainers and :func:`cfrkit.compile_game`).
    GameError
        If the game breaks a rule when it is compiled.

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import RockPaperScissors
    >>> fp = cfrkit.FictitiousPlay(RockPaperScissors()).iterate(2)
    >>> print(fp.average_policy().format_table(digits=3))
    P0  player 0  rock: 0.444  paper: 0.444  scissors: 0.111
    P1  player 1  rock: 0.444  paper: 0.444  scissors: 0.111
    """

    def __init__(self, game: Game | CompiledGame) -> None:
        self._game = compile_game(game)
        compiled = self.game
        tree = compiled.tree
        self._iteration = 0
        self._blocks = Blocks()
        self._warm = False
        # the average profile over the decision slots, then the (constant) chance slots
        self._probs = np.concatenate([Policy.uniform(compiled).table, tree.chance_prob])
        num_players = compiled.num_players
        responses = [_response_order(compiled, p) for p in range(num_players)]
        width = max([used for _order, used in responses], default=0)
        self._orders = np.zeros((num_players, max(width, 1)), dtype=np.int64)
        self._used = np.zeros(num_players, dtype=np.int64)
        for p, (order, used) in enumerate(responses):
            self._orders[p, :used] = order
            self._used[p] = used
        self._reach = np.empty(compiled.num_nodes)
        self._value = np.array(tree.utility, dtype=np.float64)  # terminal entries stay
        self._choice = np.zeros(compiled.num_infosets, dtype=np.int64)  # last responses
        self._own_average = np.empty(compiled.num_infosets)
        self._own_response = np.empty(compiled.num_infosets)

    @property
    def iteration(self) -> int:
        """Iterations completed (always those whose updates are in the average)."""
        return self._iteration

    def iterate(self, n: int = 1) -> FictitiousPlay:
        """Run ``n`` iterations; return ``self`` for chaining.

        The iterations run inside numba, without the GIL, in blocks of about 10 ms (one kernel
        call each), as the trainers' do. Ctrl-C is honoured at the end of the block it arrives
        in: :attr:`iteration` then counts exactly the iterations in the average, the object
        keeps working, and the KeyboardInterrupt propagates.

        Parameters
        ----------
        n : int, optional
            Iterations to run (default 1; 0 does nothing).

        Returns
        -------
        FictitiousPlay
            ``self``.

        Raises
        ------
        ValueError
            If ``n`` is not a non-negative integer, or ``iteration + n`` is past
            :data:`cfrkit.limits.MAX_ITERATIONS` (2^53: the step size ``1/(t+1)`` is computed
            from ``t`` as a float64). Checked before anything runs.
        """
        if integer_value(n) is None or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {short_repr(n)}")
        if self._iteration + int(n) > MAX_ITERATIONS:
            raise ValueError(
                f"iterate(n={short_repr(n)}): at most 2**53 iterations in all "
                f"(cfrkit.limits.MAX_ITERATIONS); this one is at {self._iteration}"
            )
        remaining = int(n)
        with interruptible():
            if remaining and not self._warm:
                self._warm_up()
            self._blocks.run(remaining, self._step)
        return self

    def _step(self, count: int) -> None:
        """``count`` iterations in one kernel call, and the counter with them."""
        self._run(count)
        self._iteration += count

    def _run(self, count: int) -> None:
        xfp_iterations(
            self.game.tree, self._probs, self._iteration + 1, count, self._orders, self._used,
            self._reach, self._value, self._choice, self._own_average, self._own_response,
        )

    def _warm_up(self) -> None:
        """Compile (or load) the kernel with an empty block, once per process, announcing a
        long wait."""
        first_call(xfp_iterations, "the FictitiousPlay kernel", lambda: self._run(0))
        self._warm = True

    @between_blocks
    def average_policy(self) -> Policy:
        """The average profile ``pi_{t+1}`` after ``t =`` :attr:`iteration` iterations, as a
        fresh :class:`~cfrkit.Policy` (later iterations do not change it): the uniform policy
        before the first iteration."""
        return Policy(self.game, self._probs[: self.game.tree.num_action_slots])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.game!r}, iteration={self._iteration})"
