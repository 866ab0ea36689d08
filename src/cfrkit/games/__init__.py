"""Built-in games, one rules file each."""

from .kuhn import KuhnPoker
from .matrix import MatrixGame
from .rps import RPSLS, RockPaperScissors

__all__ = ["KuhnPoker", "MatrixGame", "RPSLS", "RockPaperScissors"]
