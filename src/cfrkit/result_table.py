"""Result-table learning: self-play against a table of average gains (Dave Computes, 2019).

Not a regret minimiser: a baseline to set against CFR. The rules follow the blog post "Dave
Computes a Simple Machine Learning Algorithm" (7 April 2019); :class:`ResultTableLearner`
documents them and where they differ from the post.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from pathlib import Path

import numpy as np

from ._interrupt import Blocks, FixedGame, NoCopies, between_blocks, interruptible
from ._kernels.random import seed_state
from ._kernels.result_table import run_result_table
from ._notice import first_call
from ._numbers import integer_value, real_value
from ._text import short_repr
from .game import Game, InfoSet
from .policy import Policy
from .statics import alias_tables
from .trainers.base import check_seed, normalise_rows
from .tree import CompiledGame, compile_game

__all__ = ["MAX_GAMES", "ResultTableLearner"]

#: The most games a learner plays in all: its counters are int64.
MAX_GAMES = 2**63 - 1


class ResultTableLearner(NoCopies, FixedGame):
    """Result-table learning by self-play (Dave Computes, "A Simple Machine Learning
    Algorithm", 2019): greedy on average gains, with a little uniform exploration.

    The learner keeps, for every infoset ``I`` and choice ``a``, the *result table*: the number
    of games ``n(I, a)`` in which ``a`` was chosen at ``I`` and the total gain ``g(I, a)`` of
    those games to the player who chose it. Every player of every game reads and writes the
    same table (self-play). One game:

    * Chance outcomes are drawn with their probabilities.
    * At each decision, with probability ``explore`` the player picks a choice uniformly at
      random; otherwise the *greedy* choice: the one with the greatest average gain
      ``g(I, a) / n(I, a)``, ties going to the first in the game's action order. A choice
      never tried yet (``n(I, a) = 0``) has no average; it is taken before any tried one (the
      first untried in action order), so every choice is tried once before the averages
      decide.
    * When the game ends at terminal ``z``, each choice ``a`` a player ``p`` made at ``I``
      during the game gets ``n(I, a) += 1`` and ``g(I, a) += u_p(z)``, exploring choices
      included. The table changes only between games.

    The *recommended strategy* (:meth:`average_policy`) is the frequency of each choice,
    ``n(I, a) / sum_b n(I, b)``: the post's "focus on the result table's numbers of games --
    not expected values".

    Differences from the post. It records, for each choice, the money gained *after* it
    (stack at the end minus stack when choosing); a :class:`~cfrkit.Game` only has terminal
    utilities, so the gain recorded here is the player's utility for the whole game. In games
    where the amount a player has committed before acting at ``I`` is fixed by ``I`` (poker:
    the antes and bets the player has made are part of its infoset) the two differ by a
    constant per infoset, ``n(I, a)`` times the amount committed, which changes no comparison
    between the choices of ``I``: the choices, and so the counts and the recommended strategy,
    are those the post's recording makes (in exact arithmetic). The post does not say what a
    never-tried choice is worth (its averages are ``0 / 0`` there); "untried first" is this
    implementation's rule, chosen because it too is unchanged by that constant. The post's
    worked example drops a choice made only by exploration from the recommendation ("never
    choose B"); :meth:`average_policy` keeps every choice's frequency.

    Convergence is not guaranteed: the learner is a fictitious-play-like best reply to the
    table's averages, which mix every past strategy of the opponents, and its recommended
    strategy keeps about ``explore / |A(I)|`` of exploration on every choice. Measure it
    (:func:`~cfrkit.nash_conv` of :meth:`average_policy`) rather than assume it.

    ``iterate(n)`` plays the ``n`` games inside numba (blocks of about 10 ms per kernel call,
    interruptible with Ctrl-C between blocks, as the trainers). Counters are int64 (the post
    warns 32 bits are not enough); gains are float64.

    Parameters
    ----------
    game : Game or CompiledGame
        Any game: any number of players, chance nodes allowed.
    explore : float, optional
        The probability of a uniformly random choice at each decision, in ``[0, 1]`` (default
        0.01: the post's "Perhaps 1% of the time"). ``0`` is pure greedy play, ``1`` uniform
        random play.
    seed : int, optional
        Seed of the learner's random stream (xoshiro256**, seeded as the sampled trainers'):
        the same seed gives bit-identical tables. An integer in ``[0, 2**64)``; ``None``
        (default) draws 64 bits from the operating system, kept in :attr:`seed`.

    Attributes
    ----------
    game : CompiledGame
        The compiled game, read-only (``learner.game.game`` is the object passed in).

    Raises
    ------
    ValueError
        If ``explore`` is not a number in ``[0, 1]`` or ``seed`` is not an integer in
        ``[0, 2**64)`` or ``None``.
    GameError
        If the game does not compile.

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import KuhnPoker
    >>> learner = cfrkit.ResultTableLearner(KuhnPoker(), seed=0).iterate(1000)
    >>> learner.iteration
    1000
    >>> sum(games for games, _ in learner.result_table()["J"].values())
    298
    """

    _copy_instead = NoCopies.SAVE_AND_LOAD

    def __init__(
        self, game: Game | CompiledGame, *, explore: float = 0.01, seed: int | None = None
    ) -> None:
        number = real_value(explore)
        if number is None or not 0.0 <= number <= 1.0:
            raise ValueError(f"explore must be a number in [0, 1], got {short_repr(explore)}")
        self._explore = number
        self._seed = check_seed(seed)
        self._game = compile_game(game)
        tree = self.game.tree
        self._games = np.zeros(tree.num_action_slots, dtype=np.int64)
        self._gains = np.zeros(tree.num_action_slots, dtype=np.float64)
        self._rng = seed_state(self._seed)
        self._alias_prob, self._alias_index = alias_tables(self.game)
        # the current game's decisions: no path is longer than the tree has nodes
        self._path_slot = np.zeros(self.game.num_nodes, dtype=np.int32)
        self._path_player = np.zeros(self.game.num_nodes, dtype=np.int32)
        self._iteration = 0
        self._decisions = 0
        self._blocks = Blocks()
        self._warm = False

    # -- switches -----------------------------------------------------------------------------
    @property
    def explore(self) -> float:
        """The probability of a uniformly random choice at each decision (fixed at construction)."""
        return self._explore

    @property
    def seed(self) -> int:
        """The seed of the learner's random stream, in ``[0, 2**64)`` (fixed at construction)."""
        return self._seed

    @property
    def iteration(self) -> int:
        """Games played so far (all of them in the table)."""
        return self._iteration

    @property
    def decisions(self) -> int:
        """Decisions made so far, summed over the games and players (the table's total count)."""
        return self._decisions

    @property
    def infosets(self) -> Mapping[str, InfoSet]:
        """Infoset key -> :class:`~cfrkit.InfoSet` record (key, player, actions)."""
        return self.game.infosets

    # -- running ------------------------------------------------------------------------------
    def iterate(self, n: int = 1) -> ResultTableLearner:
        """Play ``n`` self-play games, updating the table after each; return ``self``.

        The games run inside numba, without the GIL, in blocks of about 10 ms (one kernel call
        each). Ctrl-C is honoured at the end of the block it arrives in: :attr:`iteration`
        then counts exactly the games in the table, the learner keeps working, and the
        KeyboardInterrupt propagates. Splitting the games over several calls changes nothing.

        Parameters
        ----------
        n : int, optional
            Games to play (default 1; 0 does nothing).

        Returns
        -------
        ResultTableLearner
            ``self``.

        Raises
        ------
        ValueError
            If ``n`` is not a non-negative integer, or ``iteration + n`` is past
            :data:`MAX_GAMES` (2^63 - 1, the int64 counters' limit).
        """
        if integer_value(n) is None or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {short_repr(n)}")
        if self._iteration + int(n) > MAX_GAMES:
            raise ValueError(
                f"iterate(n={short_repr(n)}): a learner plays at most 2**63 - 1 games in all "
                f"(int64 counters); this one is at {self._iteration}"
            )
        remaining = int(n)
        with interruptible():
            if remaining and not self._warm:
                first_call(run_result_table, "the ResultTableLearner kernel", lambda: self._run(0))
                self._warm = True
            self._blocks.run(remaining, self._step)
        return self

    def _step(self, count: int) -> None:
        """``count`` games in one kernel call, and the counters with them."""
        decisions = self._run(count)
        self._iteration += count
        self._decisions += int(decisions)

    def _run(self, count: int) -> int:
        return run_result_table(
            self.game.tree, self._alias_prob, self._alias_index, self._games, self._gains,
            self._rng, self._path_slot, self._path_player, count, self._explore,
        )

    # -- reading ------------------------------------------------------------------------------
    @between_blocks
    def average_policy(self) -> Policy:
        """The recommended strategy: how often each choice was made, per infoset (a fresh
        :class:`~cfrkit.Policy`).

        ``n(I, a) / sum_b n(I, b)``, exploring choices included; uniform at infosets no game
        has reached yet.
        """
        return Policy(self.game, normalise_rows(self.game, self._games.astype(np.float64)))

    @between_blocks
    def greedy_policy(self) -> Policy:
        """The choice the next game would make at each infoset when not exploring, as a pure
        policy: the first untried choice, else the first of the greatest average gain."""
        tree = self.game.tree
        table = np.zeros(tree.num_action_slots)
        for s, m in zip(tree.infoset_first_slot, tree.infoset_num_actions):
            games = self._games[s : s + m]
            untried = np.flatnonzero(games == 0)
            if untried.size:
                j = int(untried[0])
            else:
                j = int(np.argmax(self._gains[s : s + m] / games))  # first of the maxima
            table[s + j] = 1.0
        return Policy(self.game, table)

    @between_blocks
    def result_table(self) -> dict[str, dict[Hashable, tuple[int, float]]]:
        """``{infoset key: {action: (games, total_gain)}}``, a fresh copy.

        ``games`` (an int) is the number of games in which the action was chosen at the
        infoset, ``total_gain`` (a float) the sum of the acting player's utilities in those
        games; the average gain is their ratio (undefined while ``games`` is 0). Every infoset
        and action of the game appears, in the compiled game's order.
        """
        first = self.game.tree.infoset_first_slot
        games = self._games.tolist()
        gains = self._gains.tolist()
        return {
            key: {a: (games[first[i] + j], gains[first[i] + j]) for j, a in enumerate(actions)}
            for i, (key, actions) in enumerate(zip(self.game.infoset_keys, self.game.infoset_actions))
        }

    @between_blocks
    def table_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The result table as two fresh arrays over the compiled game's action slots:
        ``games`` (int64) and ``total_gain`` (float64). Infoset ``I`` owns the slots
        ``game.tree.infoset_first_slot[I]`` onwards, one per action (see
        :class:`~cfrkit.GameTree`)."""
        return self._games.copy(), self._gains.copy()

    # -- checkpoints --------------------------------------------------------------------------
    @between_blocks
    def save(self, path: str | os.PathLike) -> Path:
        """Write a checkpoint (the table, the random stream and the counters) to one ``.npz``
        file, in the trainers' checkpoint format; :func:`cfrkit.load_trainer` reads it back,
        and the loaded learner continues bit for bit as if it had never stopped.

        Parameters
        ----------
        path : str or os.PathLike
            Where to write; conventionally ending in ``.npz``. An existing file is replaced.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        from .checkpoint import save_learner

        return save_learner(self, path)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.game.game!r}, explore={self._explore!r}, "
                f"iteration={self._iteration})")
