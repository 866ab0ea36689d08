"""cfrkit: counterfactual regret minimisation on numba-compiled game trees.

Describe a game with :class:`Game` / :class:`History`, train with a trainer such as
:class:`VanillaCFR`, and measure the result with :func:`evaluate`.
"""

# first, before any kernel is decorated: lets numba cache the kernels in a temporary directory
# where it finds no writable cache directory (a read-only install)
from . import _numba_cache  # noqa: F401
from .checkpoint import CheckpointError, load_trainer
from .evaluation import (
    BestResponse,
    Evaluation,
    best_response,
    evaluate,
    expected_values,
    exploitability,
    nash_conv,
)
from .fictitious_play import FictitiousPlay
from .game import FixedAttributes, Game, GameError, History, InfoSet
from .policy import Policy, load_policy
from .record import SolveRecord
from .result_table import ResultTableLearner
from .rules import RegretRule
from .sweeps import load_sweep, sweep
from .trainers import (
    CFR,
    CFRPlus,
    ChanceSampledCFR,
    DCFRPlus,
    DiscountedCFR,
    ExternalSamplingCFR,
    LinearCFR,
    OutcomeSamplingCFR,
    PDCFRPlus,
    PredictiveCFRPlus,
    PrunedCFR,
    Trainer,
    VanillaCFR,
)
from .tree import CompiledGame, GameTree, compile_game, load_compiled
from .tree.store import CompiledFileError

__version__ = "0.1.0"


def __getattr__(name: str):
    # cfrkit.plot needs matplotlib (an optional extra): imported on first use, not with cfrkit
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'cfrkit' has no attribute {name!r}")


__all__ = [
    "BestResponse",
    "CFR",
    "CFRPlus",
    "ChanceSampledCFR",
    "CheckpointError",
    "CompiledFileError",
    "CompiledGame",
    "DCFRPlus",
    "DiscountedCFR",
    "Evaluation",
    "ExternalSamplingCFR",
    "FictitiousPlay",
    "FixedAttributes",
    "Game",
    "GameError",
    "GameTree",
    "History",
    "InfoSet",
    "LinearCFR",
    "OutcomeSamplingCFR",
    "PDCFRPlus",
    "Policy",
    "PredictiveCFRPlus",
    "PrunedCFR",
    "RegretRule",
    "ResultTableLearner",
    "SolveRecord",
    "Trainer",
    "VanillaCFR",
    "best_response",
    "compile_game",
    "evaluate",
    "expected_values",
    "exploitability",
    "load_compiled",
    "load_policy",
    "load_sweep",
    "load_trainer",
    "nash_conv",
    "sweep",
]
