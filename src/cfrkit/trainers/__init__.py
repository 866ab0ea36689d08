"""Trainers: thin Python objects that own the state arrays and call one kernel per ``iterate``."""

from .base import Trainer
from .vanilla import VanillaCFR

__all__ = ["Trainer", "VanillaCFR"]
