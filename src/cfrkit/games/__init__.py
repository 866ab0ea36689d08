"""Built-in games, one rules file each."""

from .kuhn import KuhnPoker
from .leduc import LeducPoker
from .matrix import MatrixGame
from .rps import RPSLS, RockPaperScissors

__all__ = ["KuhnPoker", "LeducPoker", "MatrixGame", "RPSLS", "RockPaperScissors"]
