"""Trainers: thin Python objects that own the state arrays and call one kernel per ``iterate``."""

from .base import Trainer
from .pruned import PrunedCFR
from .sampled import ChanceSampledCFR
from .vanilla import VanillaCFR

__all__ = ["ChanceSampledCFR", "PrunedCFR", "Trainer", "VanillaCFR"]
