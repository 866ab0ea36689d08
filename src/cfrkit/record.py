"""The convergence record a :meth:`~cfrkit.Trainer.solve` run returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._frozen import frozen_copy

__all__ = ["SolveRecord"]


@dataclass(frozen=True, eq=False)
class SolveRecord:
    """How a run converged: one entry per check of the average policy (read-only arrays).

    Attributes
    ----------
    trainer : str
        The trainer's class name (``"CFRPlus"``, ...), the label plots use.
    game : str
        The game's ``repr``.
    iterations : numpy.ndarray
        int64: the trainer's iteration count at each check (the last entry is the final state).
    seconds : numpy.ndarray
        float64: wall-clock seconds since the run started, at each check (training and
        evaluation; the time a user waited).
    training_seconds : numpy.ndarray
        float64: the training part of ``seconds`` alone (evaluation not counted).
    nash_conv : numpy.ndarray
        float64: NashConv of the average policy at each check.
    exploitability : numpy.ndarray or None
        ``nash_conv / 2`` in two-player zero-sum games, else ``None``.
    stopped : str
        Why the run ended: ``"target"``, ``"max_iterations"``, ``"time_limit"`` or
        ``"callback"``; ``"running"`` in the records a ``callback`` sees before the last check.
    evaluation_seconds : float
        Seconds spent evaluating (the rest of ``seconds[-1]`` is training).
    """

    trainer: str
    game: str
    iterations: np.ndarray
    seconds: np.ndarray
    training_seconds: np.ndarray
    nash_conv: np.ndarray
    exploitability: np.ndarray | None
    stopped: str
    evaluation_seconds: float

    def __post_init__(self) -> None:
        # a record says what a run measured: its arrays are read-only copies
        for name, dtype in (("iterations", np.int64), ("seconds", np.float64),
                            ("training_seconds", np.float64), ("nash_conv", np.float64),
                            ("exploitability", np.float64)):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, frozen_copy(value, dtype))

    @property
    def final_nash_conv(self) -> float:
        """NashConv of the final average policy."""
        return float(self.nash_conv[-1])

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values, ready for ``json.dump``."""
        return {
            "trainer": self.trainer,
            "game": self.game,
            "iterations": self.iterations.tolist(),
            "seconds": self.seconds.tolist(),
            "training_seconds": self.training_seconds.tolist(),
            "nash_conv": self.nash_conv.tolist(),
            "exploitability": None if self.exploitability is None else self.exploitability.tolist(),
            "stopped": self.stopped,
            "evaluation_seconds": self.evaluation_seconds,
        }

    def __repr__(self) -> str:
        last = f"NashConv {self.final_nash_conv:.3g} at iteration {int(self.iterations[-1])}"
        return f"SolveRecord({self.trainer} on {self.game}: {last}, stopped by {self.stopped})"
