"""Rock-Paper-Scissors and Rock-Paper-Scissors-Lizard-Spock: win +1, loss -1, tie 0."""

from __future__ import annotations

import numpy as np

from .matrix import MatrixGame

__all__ = ["RPSLS", "RockPaperScissors"]


def _win_matrix(actions: tuple[str, ...], beats: dict[str, tuple[str, ...]]) -> np.ndarray:
    """``+1`` where the row action beats the column action, ``-1`` where it loses."""
    payoff = np.zeros((len(actions), len(actions)))
    for i, a in enumerate(actions):
        for j, b in enumerate(actions):
            payoff[i, j] = (b in beats[a]) - (a in beats[b])
    return payoff


class RockPaperScissors(MatrixGame):
    """Rock-Paper-Scissors; the unique equilibrium plays each action with probability 1/3."""

    def __init__(self) -> None:
        actions = ("rock", "paper", "scissors")
        beats = {"rock": ("scissors",), "paper": ("rock",), "scissors": ("paper",)}
        super().__init__("rock_paper_scissors", actions, _win_matrix(actions, beats))


class RPSLS(MatrixGame):
    """Rock-Paper-Scissors-Lizard-Spock; the unique equilibrium is uniform (1/5 each).

    Rock beats scissors and lizard, paper beats rock and Spock, scissors beat paper and lizard,
    lizard beats paper and Spock, Spock beats rock and scissors.
    """

    def __init__(self) -> None:
        actions = ("rock", "paper", "scissors", "lizard", "spock")
        beats = {
            "rock": ("scissors", "lizard"),
            "paper": ("rock", "spock"),
            "scissors": ("paper", "lizard"),
            "lizard": ("paper", "spock"),
            "spock": ("rock", "scissors"),
        }
        super().__init__("rpsls", actions, _win_matrix(actions, beats))
