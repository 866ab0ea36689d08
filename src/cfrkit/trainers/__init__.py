"""Trainers: one traversal each (full, pruned, chance-sampled), any regret rule, thin Python
objects that own the state arrays and call one kernel per block of iterations."""

from .base import Trainer
from .full import CFR, VanillaCFR
from .presets import CFRPlus, DCFRPlus, DiscountedCFR, LinearCFR, PDCFRPlus, PredictiveCFRPlus
from .pruned import PrunedCFR
from .sampled import ChanceSampledCFR

__all__ = [
    "CFR",
    "CFRPlus",
    "ChanceSampledCFR",
    "DCFRPlus",
    "DiscountedCFR",
    "LinearCFR",
    "PDCFRPlus",
    "PredictiveCFRPlus",
    "PrunedCFR",
    "Trainer",
    "VanillaCFR",
]
