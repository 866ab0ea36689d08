"""Leduc hold'em (Southey et al. 2005, "Bayes' Bluff: Opponent Modelling in Poker").

Two players, a six-card deck: jack, queen and king in two suits (spades ``s`` and hearts
``h``). Each player antes 1 and gets one private card. A betting round follows, then one public
card is dealt and a second betting round follows. In each round player 0 acts first; a player
may *call* (check when nothing is owed), *raise* (by 2 in round one, 4 in round two; at most two
raises per round) or, facing a raise, *fold*. A round ends when a player calls a raise or both
check. At the showdown a player whose card pairs the public card wins; otherwise the higher
rank wins, and equal ranks split the pot.

The tree is the one of OpenSpiel's ``leduc_poker`` (default parameters) node for node: chance
deals player 0's card (6 outcomes), then player 1's (5), and after round one the public card
(4), each as its own chance node, and the actions are listed in OpenSpiel's order ``fold``,
``call``, ``raise``. :func:`cfrkit.compile_game` gives 9,457 nodes -- 157 chance, 3,780
decision and 5,520 terminal, every history OpenSpiel has -- and 936 information sets (both
players' together), the numbers OpenSpiel's own walk of ``leduc_poker`` gives.
"""

from __future__ import annotations

from ..game import FixedAttributes, Game, History

__all__ = ["LeducPoker"]

FOLD, CALL, RAISE = "fold", "call", "raise"
_LETTER = {FOLD: "f", CALL: "c", RAISE: "r"}
#: card labels in OpenSpiel's card order: card ``c`` has rank ``c // 2`` and suit ``c % 2``
CARDS = ("Js", "Jh", "Qs", "Qh", "Ks", "Kh")
_RANK = {card: i // 2 for i, card in enumerate(CARDS)}
_ANTE = 1
_RAISE_SIZE = (2, 4)
_MAX_RAISES = 2


class LeducPoker(FixedAttributes, Game):
    """Two-player Leduc hold'em, the same game tree as OpenSpiel's ``leduc_poker``.

    Notes
    -----
    Cards are labelled ``"Js"``, ``"Jh"``, ``"Qs"``, ``"Qh"``, ``"Ks"``, ``"Kh"`` (OpenSpiel's
    cards 0 to 5) and actions ``"fold"``, ``"call"``, ``"raise"`` (OpenSpiel's actions 0, 1, 2;
    ``"call"`` is also the check). An infoset key is the player's card, a colon and the
    round-one betting, one letter per action (``f``/``c``/``r``); in round two a ``|``, the
    public card, a colon and the round-two betting follow::

        "Qh:"           player 0 holding the queen of hearts, first to act
        "Ks:cr"         player 0 holding the king of spades, after check and raise
        "Jh:rc|Qs:r"    round two, public queen of spades, facing a raise

    Compiled: 9,457 nodes (157 chance, 3,780 decision, 5,520 terminal) and 936 information sets
    (468 per player). The game value for player 0 is about -0.0856064.

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import LeducPoker
    >>> compiled = cfrkit.compile_game(LeducPoker())
    >>> compiled.num_nodes, compiled.num_infosets
    (9457, 936)
    """

    num_players = 2
    name = "leduc_poker"

    def root(self) -> History:
        return _LeducHistory((), "", "", None)

    @property
    def identity(self) -> str:
        """The class: Leduc hold'em has no parameters (see :attr:`cfrkit.Game.identity`)."""
        cls = type(self)
        return f"{cls.__module__}.{cls.__qualname__}()"

    def __repr__(self) -> str:
        return "LeducPoker()"


def _round_over(bets: str) -> bool:
    """Whether a round's betting (``c``/``r`` letters, no fold) is complete."""
    return len(bets) >= 2 and bets[-1] == "c"


class _LeducHistory(History):
    __slots__ = ("_private", "_round1", "_round2", "_public")

    def __init__(self, private: tuple[str, ...], round1: str, round2: str, public: str | None):
        self._private = private  # cards dealt to players 0 and 1 so far
        self._round1 = round1  # round-one letters, 'f' only as the last letter of the game
        self._round2 = round2
        self._public = public

    # -- state ----------------------------------------------------------------------------------
    def _bets(self) -> str:
        """The betting of the round in progress (or of the round where the game ended)."""
        return self._round1 if self._public is None else self._round2

    def is_terminal(self) -> bool:
        if self._round1.endswith("f") or self._round2.endswith("f"):
            return True
        return self._public is not None and _round_over(self._round2)

    def is_chance(self) -> bool:
        if len(self._private) < 2:
            return True
        return self._public is None and _round_over(self._round1)

    def current_player(self) -> int:
        return len(self._bets()) % 2

    def actions(self) -> tuple[str, ...]:
        bets = self._bets()
        raises = bets.count("r")
        facing_raise = bets.endswith("r")
        if not facing_raise:
            return (CALL, RAISE)
        if raises < _MAX_RAISES:
            return (FOLD, CALL, RAISE)
        return (FOLD, CALL)

    def chance_outcomes(self) -> tuple[tuple[str, float], ...]:
        used = self._private
        remaining = [c for c in CARDS if c not in used]
        p = 1.0 / len(remaining)
        return tuple((c, p) for c in remaining)

    def child(self, action: str) -> History:
        if len(self._private) < 2:
            return _LeducHistory(self._private + (action,), "", "", None)
        if self._public is None and _round_over(self._round1):
            return _LeducHistory(self._private, self._round1, "", action)
        letter = _LETTER[action]
        if self._public is None:
            return _LeducHistory(self._private, self._round1 + letter, "", None)
        return _LeducHistory(self._private, self._round1, self._round2 + letter, self._public)

    def infoset_key(self) -> str:
        card = self._private[self.current_player()]
        if self._public is None:
            return f"{card}:{self._round1}"
        return f"{card}:{self._round1}|{self._public}:{self._round2}"

    # -- payoffs --------------------------------------------------------------------------------
    def utilities(self) -> tuple[float, float]:
        stake = [_ANTE, _ANTE]
        folder = None
        for round_index, bets in enumerate((self._round1, self._round2)):
            owed = 0  # what the player to act must add to match the other
            for i, letter in enumerate(bets):
                player = i % 2
                if letter == "f":
                    folder = player
                elif letter == "c":
                    stake[player] += owed
                    owed = 0
                else:  # raise: call what is owed, then raise
                    stake[player] += owed + _RAISE_SIZE[round_index]
                    owed = _RAISE_SIZE[round_index]
        pot = stake[0] + stake[1]
        if folder is not None:
            winner = 1 - folder
            return tuple(float((pot if p == winner else 0) - stake[p]) for p in (0, 1))
        strength = [self._strength(self._private[p]) for p in (0, 1)]
        if strength[0] == strength[1]:
            return (float(pot / 2 - stake[0]), float(pot / 2 - stake[1]))
        winner = 0 if strength[0] > strength[1] else 1
        return tuple(float((pot if p == winner else 0) - stake[p]) for p in (0, 1))

    def _strength(self, card: str) -> int:
        """Pairs beat every high card; otherwise the higher rank wins."""
        rank = _RANK[card]
        return rank + (10 if rank == _RANK[self._public] else 0)

    def __repr__(self) -> str:
        public = "" if self._public is None else f", public={self._public!r}"
        return (
            f"Leduc(cards={self._private!r}, round1={self._round1!r}, "
            f"round2={self._round2!r}{public})"
        )
