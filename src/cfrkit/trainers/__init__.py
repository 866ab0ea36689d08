"""Trainers: one traversal each (full, pruned, chance-, external- and outcome-sampled), any
regret rule; thin Python objects that own the state arrays and call one kernel per block of
iterations."""

from .base import Trainer
from .full import CFR, VanillaCFR
from .mccfr import ExternalSamplingCFR, OutcomeSamplingCFR
from .presets import CFRPlus, DCFRPlus, DiscountedCFR, LinearCFR, PDCFRPlus, PredictiveCFRPlus
from .pruned import PrunedCFR
from .sampled import ChanceSampledCFR

__all__ = [
    "CFR",
    "CFRPlus",
    "ChanceSampledCFR",
    "DCFRPlus",
    "DiscountedCFR",
    "ExternalSamplingCFR",
    "LinearCFR",
    "OutcomeSamplingCFR",
    "PDCFRPlus",
    "PredictiveCFRPlus",
    "PrunedCFR",
    "Trainer",
    "VanillaCFR",
]
