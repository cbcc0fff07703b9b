"""Calibration of metrics against human pairwise preferences (PPA, acc23, τ-b, McNemar, Krippendorff's α,
Bradley–Terry) and fitting of tunable parameters; every statistic is a pure function usable from Python."""
from .agreement import Interval, McNemar, PairStats, acc23, bootstrap_ci, kendall_tau_b, mcnemar, pair_stats, ppa, units_of
from .bradley_terry import BTFit, bradley_terry, fit_bradley_terry, win_matrix
from .calibrate import CalibrationResult, DuplicateScores, NothingUsable, calibrate, write_outputs
from .fit import FitResult, TooFewPairs, fit_metric, fit_role
from .krippendorff import krippendorff_alpha
from .pairs import PairsError, read_pairs
from .rescore import RESCORERS, Rescorer

__all__ = ["BTFit", "CalibrationResult", "DuplicateScores", "FitResult", "Interval", "McNemar", "NothingUsable", "PairStats",
           "PairsError", "RESCORERS", "Rescorer", "TooFewPairs", "acc23", "bootstrap_ci", "bradley_terry", "calibrate",
           "fit_bradley_terry", "fit_metric", "fit_role", "kendall_tau_b", "krippendorff_alpha", "mcnemar", "pair_stats",
           "ppa", "read_pairs", "units_of", "win_matrix", "write_outputs"]
