"""Kuhn poker for n players (Kuhn 1950; the n-player form of Szafron, Gibson and Sturtevant 2013),
and the two-player variants with raises and an independent deal ("Dave Computes" 2019).

``n`` players, ``n + 1`` cards (J < Q < K for two players, J < Q < K < A for three). Each
player antes 1 and gets one card. Players act in turn with *pass* or *bet* (bet 1). Once
someone has bet, every later player in turn (wrapping around to the players before the bettor)
may *bet* (call 1) or *pass* (fold). When everyone has acted, the highest card among the
players still in wins the pot.

Two players may also play with more than one bet per hand (``max_bets``: a bet and up to
``max_bets - 1`` raises of 1, actions fold / check / call / bet / raise) and with each card drawn
independently from Q < K < A (``deal="independent"``: equal cards split the pot) -- the game
of the "result table" blog post is ``KuhnPoker(max_bets=2, deal="independent")``.
"""

from __future__ import annotations

import math
from functools import cached_property
from itertools import permutations, product

from .._numbers import integer_value
from ..game import FixedAttributes, Game, History
from ..tree import DEFAULT_MAX_NODES

__all__ = ["KuhnPoker"]

#: the ways of dealing the cards, the first the default
DEALS = ("deck", "independent")

PASS, BET = "pass", "bet"  # Kuhn's labels, max_bets=1
FOLD, CHECK, CALL, RAISE = "fold", "check", "call", "raise"  # with BET, max_bets >= 2
_LETTER = {FOLD: "f", CHECK: "c", CALL: "c", BET: "r", RAISE: "r"}
#: card values of the independent deal, lowest first (the blog post's queen, king, ace)
INDEPENDENT_CARDS = ("Q", "K", "A")


def deck_histories(players: int) -> int:
    """The number of histories of Kuhn's game (one bet, a deck) for ``players`` players.

    The deal, then after each of its ``(players + 1)!`` ordered hands a betting tree of
    ``n 2^n + 1`` histories: ``n`` passes and the showdown after them, and after a bet by
    any of the ``n`` players, the others' ``2^(n-1)`` ways to call or fold (``2^n - 1``
    histories each).
    """
    return 1 + math.factorial(players + 1) * (players * 2**players + 1)


#: the most players whose game compiles within compile_game's default node limit (6 players:
#: 1,940,401 histories; 7 players: 36,167,041)
MAX_PLAYERS = max(n for n in range(2, 20) if deck_histories(n) <= DEFAULT_MAX_NODES)


class KuhnPoker(FixedAttributes, Game):
    """Kuhn poker: n-player Kuhn poker, and two-player variants with raises or an independent deal.

    Parameters
    ----------
    players : int, optional
        Number of players, 2 (default) to 6: the game has ``1 + (n + 1)! (n 2^n + 1)``
        histories, 1,940,401 for six players and 36,167,041 for seven, more than
        :func:`cfrkit.compile_game` compiles by default (20 million). OpenSpiel's
        ``kuhn_poker(players=7)`` is the same game, through
        :func:`cfrkit.openspiel.from_openspiel` with a larger ``max_nodes``.
    max_bets : int, optional
        Keyword only. The most bets per hand, counting the opening bet and every raise: at
        least 1 (default 1, Kuhn's game: one bet, which the others call or fold). With 2, the
        opening bet may be raised once; each bet and raise is 1 chip.
    deal : {"deck", "independent"}, optional
        Keyword only. ``"deck"`` (default, Kuhn's deal): the cards come from a deck of
        ``players + 1`` distinct cards, so no two players hold the same card. ``"independent"``:
        each player's card is drawn independently and uniformly from Q < K < A, so both players
        may hold the same value, and equal cards split the pot.

    Raises
    ------
    ValueError
        If ``players`` is not an int from 2 to 6, ``max_bets`` not an int >= 1, ``deal`` not
        one of ``"deck"``, ``"independent"``, or if ``players > 2`` is combined with
        ``max_bets > 1`` or ``deal="independent"`` (those variants are defined for two players
        only).

    Notes
    -----
    **The deal.** Each player antes 1; one chance node then deals every player's card at once.
    With ``deal="deck"`` (Kuhn's) the cards are distinct, from J < Q < K (two players),
    J < Q < K < A (three) or ``"0"`` < ``"1"`` < ... (four to six), each ordered deal equally
    likely (6 deals for two players). With ``deal="independent"`` each card is drawn on its own
    from Q < K < A, the nine ordered pairs (``"QQ"``, ``"QK"``, ..., ``"AA"``) each with
    probability 1/9 -- the deal of the result-table post [1]_ ("Each player is dealt an ace
    (highest), king, or queen (each equally likely). Note that both players may be dealt the
    same card value."). Its cards keep the post's names so that its tables read directly against
    a policy of this game; the deck keeps Kuhn's.

    **Kuhn's betting** (``max_bets=1``, any number of players). Players act in turn with
    ``"pass"`` or ``"bet"`` (1 chip). Once someone has bet, every later player in turn
    (wrapping around to the players before the bettor) may ``"bet"`` (call) or ``"pass"``
    (fold). A player's infoset key is its card followed by the betting so far, one letter per
    action (``p``/``b``): ``"Q"``, ``"Kpb"``. Two-player equilibria form a one-parameter family
    with game value -1/18 for player 0 [2]_; three-player equilibria are described by Szafron,
    Gibson and Sturtevant [3]_.

    **Bets and raises** (``max_bets >= 2``, two players): the betting of the post [1]_
    ("Players take turns acting by folding, calling/checking, or betting/raising in increments
    of $1, with a maximum of 2 raises"; its "raises" count the opening bet, as its six betting
    histories show). Player 0 (the post's "player 1") acts first.

    * With no bet to answer (player 0's first action, or player 1's after a check) a player
      may ``"check"`` or ``"bet"`` 1. Check-check ends the hand in a showdown.
    * Facing a bet or raise a player may ``"fold"`` (losing what it has put in), ``"call"``
      (match it; the hand ends in a showdown) or ``"raise"`` (match it and put in 1 more) --
      ``"raise"`` only while fewer than ``max_bets`` bets and raises have been made ("a player
      cannot raise if two raises have already occurred"). So with ``max_bets=2`` a raise can
      only be folded or called.

    With ``max_bets=2`` the betting histories where someone acts are the post's six: ``""``,
    ``"c"``, ``"cr"``, ``"crr"``, ``"r"``, ``"rr"`` (player 0 acts at ``""``, ``"cr"``, ``"rr"``),
    and a hand ends in one of nine ways: ``cc``, ``crf``, ``crc``, ``crrf``, ``crrc``, ``rf``,
    ``rc``, ``rrf``, ``rrc``. Infoset keys are the post's game states: the player's card, then
    one letter per action so far, ``c`` for check or call and ``r`` for bet or raise (a fold
    ends the hand, so ``f`` never shows): ``"Q"``, ``"Kcr"``, ``"Acrr"``. The actions are
    ``("check", "bet")`` with no bet to answer, ``("fold", "call", "raise")`` facing one, and
    ``("fold", "call")`` once ``max_bets`` bets are in -- the post's columns Fold, Check/Call,
    Bet/Raise in that order. (``max_bets=1`` under these rules is the same tree as Kuhn's
    betting, which keeps its ``"pass"``/``"bet"`` labels and ``p``/``b`` keys.)

    **The showdown.** The highest card among the players still in takes the pot; equal highest
    cards (only with the independent deal) split it equally, so with two players each gets back
    what it put in, a payoff of 0 to both.

    Sizes and game values for player 0 (two players; values by an exact sequence-form LP in
    the tests):

    ========  ===========  =====  =========  ========  =====
    max_bets  deal         deals  terminals  infosets  value
    ========  ===========  =====  =========  ========  =====
    1         deck             6         30        12  -1/18
    2         deck             6         54        18  -1/18
    3         deck             6         78        24  -1/18
    1         independent      9         45        12  -1/36
    2         independent      9         81        18  -1/36
    ========  ===========  =====  =========  ========  =====

    A hand ends in one of ``1 + 4 * max_bets`` ways and someone acts at ``2 + 2 * max_bets``
    betting histories (times the three card values, the infosets). The first row is
    ``KuhnPoker()``, the fifth the post's game.

    References
    ----------
    .. [1] "Dave Computes: A Simple Machine Learning Algorithm" (blog post, 7 April 2019), the
       toy poker of its Example section and its table of results.
    .. [2] H. W. Kuhn, "A simplified two-person poker", Contributions to the Theory of Games I
       (1950).
    .. [3] D. Szafron, R. Gibson and N. Sturtevant, "A Parameterized Family of Equilibrium
       Profiles for Three-Player Kuhn Poker", AAMAS 2013.

    Examples
    --------
    >>> import cfrkit
    >>> from cfrkit.games import KuhnPoker
    >>> game = KuhnPoker(max_bets=2, deal="independent")
    >>> game
    KuhnPoker(players=2, max_bets=2, deal='independent')
    >>> compiled = cfrkit.compile_game(game)
    >>> compiled.num_terminals, compiled.num_infosets
    (81, 18)
    >>> compiled.infosets["Kcr"].actions
    ('fold', 'call', 'raise')
    """

    def __init__(self, players: int = 2, *, max_bets: int = 1, deal: str = "deck") -> None:
        given_players, given_bets = players, max_bets
        players, max_bets = integer_value(players), integer_value(max_bets)
        if players is None or players < 2:
            raise ValueError(f"players must be an int >= 2, got {given_players!r}")
        if max_bets is None or max_bets < 1:
            raise ValueError(f"max_bets must be an int >= 1, got {given_bets!r}")
        if not isinstance(deal, str) or deal not in DEALS:
            raise ValueError(f"deal must be 'deck' or 'independent', got {deal!r}")
        if players > 2 and (max_bets != 1 or deal != "deck"):
            raise ValueError(
                f"players must be 2 when max_bets > 1 or deal='independent', got players={players}"
                f" with max_bets={max_bets}, deal={deal!r} (more players play Kuhn's one-bet game"
                " on a deck only)"
            )
        if players > MAX_PLAYERS:  # refused before any hand is listed (players=10**9 too)
            size = f"{deck_histories(players):,}" if players < 20 else f"more than {players + 1}!"
            raise ValueError(
                f"players must be at most {MAX_PLAYERS}, got {players}: the game has {size} "
                f"histories, over compile_game's limit of {DEFAULT_MAX_NODES:,} nodes"
            )
        self.num_players = players
        self.max_bets = max_bets
        self.deal = deal
        name = "kuhn_poker" if players == 2 else f"kuhn_poker_{players}p"
        if max_bets != 1:
            name += f"_{max_bets}bets"
        if deal != "deck":
            name += f"_{deal}"
        self.name = name
        if deal == "independent":
            self.cards = INDEPENDENT_CARDS
        else:
            # at most 10 cards (MAX_PLAYERS < 10): the labels "0" ... "9" are one character each,
            # so a deal's string reads back unambiguously
            self.cards = tuple("JQKA") if players < 4 else tuple(str(r) for r in range(players + 1))

    @cached_property
    def _deal_outcomes(self) -> tuple[tuple[str, float], ...]:
        # listed on first use, not by the constructor: naming a big game (cfrkit sweep checks
        # its grid this way) costs nothing
        n = self.num_players
        if self.deal == "independent":
            deals = list(product(range(len(self.cards)), repeat=n))
        else:
            deals = list(permutations(range(n + 1), n))
        return tuple(("".join(self.cards[c] for c in deal), 1.0 / len(deals)) for deal in deals)

    def root(self) -> History:
        if self.max_bets == 1:
            return _KuhnHistory(self, None, "")
        return _RaiseHistory(self, None, "")

    @property
    def identity(self) -> str:
        """The class and every parameter (see :attr:`cfrkit.Game.identity`)."""
        cls = type(self)
        return (
            f"{cls.__module__}.{cls.__qualname__}(players={self.num_players}, "
            f"max_bets={self.max_bets}, deal={self.deal!r})"
        )

    def __repr__(self) -> str:
        extra = "" if self.max_bets == 1 else f", max_bets={self.max_bets}"
        if self.deal != "deck":
            extra += f", deal={self.deal!r}"
        return f"KuhnPoker(players={self.num_players}{extra})"


def _showdown(cards: str, rank, contenders: list[int], stake: list[float]) -> tuple[float, ...]:
    """Payoffs when ``contenders`` show ``cards``: the highest take the pot, shared equally."""
    best = max(rank(cards[p]) for p in contenders)
    winners = [p for p in contenders if rank(cards[p]) == best]
    share = sum(stake) / len(winners)
    return tuple((share if p in winners else 0.0) - stake[p] for p in range(len(stake)))


class _KuhnHistory(History):
    """Kuhn's one-bet game for n players (``max_bets=1``)."""

    __slots__ = ("_game", "_deal", "_bets")

    def __init__(self, game: KuhnPoker, deal: str | None, bets: str) -> None:
        self._game = game
        self._deal = deal  # one card label per player, or None before the deal
        self._bets = bets  # 'p'/'b' per action so far

    def _first_bet(self) -> int:
        return self._bets.find("b")

    def is_terminal(self) -> bool:
        n = self._game.num_players
        first_bet = self._first_bet()
        if first_bet < 0:
            return len(self._bets) == n
        return len(self._bets) == first_bet + n

    def is_chance(self) -> bool:
        return self._deal is None

    def current_player(self) -> int:
        return len(self._bets) % self._game.num_players

    def actions(self) -> tuple[str, str]:
        return (PASS, BET)

    def chance_outcomes(self) -> tuple[tuple[str, float], ...]:
        return self._game._deal_outcomes

    def child(self, action: str) -> History:
        if self._deal is None:
            return _KuhnHistory(self._game, action, "")
        return _KuhnHistory(self._game, self._deal, self._bets + ("b" if action == BET else "p"))

    def infoset_key(self) -> str:
        return self._deal[self.current_player()] + self._bets

    def utilities(self) -> tuple[float, ...]:
        n = self._game.num_players
        first_bet = self._first_bet()
        stake = [1.0] * n  # the antes
        if first_bet < 0:
            contenders = list(range(n))
        else:
            contenders = []
            for position in range(first_bet, first_bet + n):
                if self._bets[position] == "b":
                    player = position % n
                    contenders.append(player)
                    stake[player] += 1.0
        return _showdown(self._deal, self._game.cards.index, contenders, stake)

    def __repr__(self) -> str:
        return f"Kuhn(deal={self._deal!r}, bets={self._bets!r})"


class _RaiseHistory(History):
    """The two-player game with bets and raises (``max_bets >= 2``)."""

    __slots__ = ("_game", "_deal", "_bets")

    def __init__(self, game: KuhnPoker, deal: str | None, bets: str) -> None:
        self._game = game
        self._deal = deal  # player 0's card, player 1's card; None before the deal
        self._bets = bets  # 'c' (check/call), 'r' (bet/raise), 'f' (fold, last only)

    def is_terminal(self) -> bool:
        # a fold, check-check, or a call of a bet
        return self._bets.endswith("f") or (len(self._bets) >= 2 and self._bets.endswith("c"))

    def is_chance(self) -> bool:
        return self._deal is None

    def current_player(self) -> int:
        return len(self._bets) % 2

    def actions(self) -> tuple[str, ...]:
        if not self._bets.endswith("r"):
            return (CHECK, BET)
        if self._bets.count("r") < self._game.max_bets:
            return (FOLD, CALL, RAISE)
        return (FOLD, CALL)

    def chance_outcomes(self) -> tuple[tuple[str, float], ...]:
        return self._game._deal_outcomes

    def child(self, action: str) -> History:
        if self._deal is None:
            return _RaiseHistory(self._game, action, "")
        return _RaiseHistory(self._game, self._deal, self._bets + _LETTER[action])

    def infoset_key(self) -> str:
        return self._deal[self.current_player()] + self._bets

    def utilities(self) -> tuple[float, float]:
        stake = [1.0, 1.0]  # the antes
        for position, letter in enumerate(self._bets):
            player = position % 2
            if letter == "c":  # a check adds nothing; a call matches
                stake[player] = max(stake)
            elif letter == "r":  # match, then 1 more
                stake[player] = max(stake) + 1.0
        if self._bets.endswith("f"):
            folder = (len(self._bets) - 1) % 2
            return tuple(stake[folder] if p != folder else -stake[p] for p in (0, 1))
        return _showdown(self._deal, self._game.cards.index, [0, 1], stake)

    def __repr__(self) -> str:
        return f"Kuhn(deal={self._deal!r}, bets={self._bets!r})"
