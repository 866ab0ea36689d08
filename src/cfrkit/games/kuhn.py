"""Kuhn poker for n players (Kuhn 1950; the n-player form of Szafron, Gibson and Sturtevant 2013).

``n`` players, ``n + 1`` cards (J < Q < K for two players, J < Q < K < A for three). Each
player antes 1 and gets one card. Players act in turn with *pass* or *bet* (bet 1). Once
someone has bet, every later player in turn (wrapping around to the players before the bettor)
may *bet* (call 1) or *pass* (fold). When everyone has acted, the highest card among the
players still in wins the pot.
"""

from __future__ import annotations

from itertools import permutations

from ..game import Game, History

__all__ = ["KuhnPoker"]

PASS, BET = "pass", "bet"


class KuhnPoker(Game):
    """n-player Kuhn poker.

    Parameters
    ----------
    players : int, optional
        Number of players, at least 2 (default 2).

    Notes
    -----
    One chance node deals all cards at once (each ordered deal equally likely). A player's
    infoset key is its card followed by the betting so far, one letter per action (``p``/``b``):
    ``"Q"``, ``"Kpb"``. Two-player equilibria form a one-parameter family with game value
    -1/18 for player 0 (Kuhn 1950); three-player equilibria are described by Szafron, Gibson
    and Sturtevant (2013, "A Parameterized Family of Equilibrium Profiles for Three-Player Kuhn
    Poker").
    """

    def __init__(self, players: int = 2) -> None:
        if isinstance(players, bool) or not isinstance(players, int) or players < 2:
            raise ValueError(f"players must be an int >= 2, got {players!r}")
        self.num_players = players
        self.name = "kuhn_poker" if players == 2 else f"kuhn_poker_{players}p"
        self.cards = tuple("JQKA") if players < 4 else tuple(str(r) for r in range(players + 1))
        deals = list(permutations(range(players + 1), players))
        self._deal_outcomes = tuple(
            ("".join(self.cards[c] for c in deal), 1.0 / len(deals)) for deal in deals
        )

    def root(self) -> History:
        return _KuhnHistory(self, None, "")

    def __repr__(self) -> str:
        return f"KuhnPoker(players={self.num_players})"


class _KuhnHistory(History):
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
        rank = self._game.cards.index
        winner = max(contenders, key=lambda p: rank(self._deal[p]))
        pot = sum(stake)
        return tuple((pot if p == winner else 0.0) - stake[p] for p in range(n))

    def __repr__(self) -> str:
        return f"Kuhn(deal={self._deal!r}, bets={self._bets!r})"
