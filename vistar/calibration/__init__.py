"""Calibration of metrics against human pairwise preferences (PPA, acc23, τ-b, McNemar, Krippendorff's α,
Bradley–Terry) and fitting of tunable parameters; every statistic is a pure function usable from Python."""
from .agreement import McNemar, PairStats, acc23, bootstrap_ci, kendall_tau_b, mcnemar, pair_stats, ppa
from .bradley_terry import bradley_terry, win_matrix
from .calibrate import CalibrationResult, calibrate, write_outputs
from .fit import FitResult, TooFewPairs, fit_metric, fit_role
from .krippendorff import krippendorff_alpha
from .pairs import PairsError, read_pairs
from .rescore import RESCORERS, Rescorer

__all__ = ["CalibrationResult", "FitResult", "McNemar", "PairStats", "PairsError", "RESCORERS", "Rescorer", "TooFewPairs",
           "acc23", "bootstrap_ci", "bradley_terry", "calibrate", "fit_metric", "fit_role", "kendall_tau_b",
           "krippendorff_alpha", "mcnemar", "pair_stats", "ppa", "read_pairs", "win_matrix", "write_outputs"]
