"""What a metric is and what it returns.

One rule for outcomes (docs/engine.md, "Metric outcomes"):
- `ok`: a score in [0, 1].
- `skipped`: the metric does not apply to this image or this run cannot measure it, and nothing is wrong with
  the prompt or the image (a weight is not installed, the OCR alphabet lacks the text's letters, the angle's
  optional check is absent by design).
- `error`: the prompt's ground truth is missing or unusable (e.g. TR without the text, LI without a light
  direction), a required feature failed, or the metric could not compute a finite score. The row is counted
  as an error so the prompt file or the pipeline gets fixed; a metric never raises for these, it returns
  `MetricResult.error(...)` (the engine still turns an unexpected exception into an error row).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, overload


class _BuildsError(Protocol):
    def __call__(self, reason: str, /, **details: Any) -> MetricResult: ...


class _ErrorOrReason:
    """`MetricResult.error(reason, **details)` builds an error row; `result.error` reads a row's reason (for error
    and skipped rows; None for ok ones). One name for both, as metrics and the engine have always spelled them."""

    @overload
    def __get__(self, row: None, owner: type[MetricResult]) -> _BuildsError: ...
    @overload
    def __get__(self, row: MetricResult, owner: type[MetricResult]) -> str | None: ...

    def __get__(self, row: MetricResult | None, owner: type[MetricResult]) -> _BuildsError | str | None:
        if row is not None:
            return row.reason

        def build(reason: str, /, **details: Any) -> MetricResult:
            """An error row (see the module docstring for when); the reason names the missing or bad input."""
            return owner(None, "error", reason, details)

        return build


@dataclass
class MetricResult:
    score: float | None
    status: str = "ok"            # ok | error | skipped
    reason: str | None = None     # why, for error and skipped rows (read as `result.error`)
    details: dict[str, Any] = field(default_factory=dict)
    error = _ErrorOrReason()      # not a field: MetricResult.error(...) builds a row, result.error is its reason

    @classmethod
    def ok(cls, score: float, **details: Any) -> MetricResult:
        """Clamped to [0, 1]; a NaN/inf score becomes an error (a clamp would turn NaN into a silent 0)."""
        score = float(score)
        if not math.isfinite(score):
            return cls(None, "error", f"metric produced a non-finite score ({score})", details)
        return cls(min(1.0, max(0.0, score)), "ok", None, details)

    @classmethod
    def skipped(cls, reason: str, **details: Any) -> MetricResult:
        return cls(None, "skipped", reason, details)


@dataclass(frozen=True)
class Combine:
    """A metric's formula from the sub-scores it stores in `details` and its tunable parameters to its score,
    vectorised over rows: calibration re-scores stored rows with it instead of re-running the pipeline, so the
    metric's own scoring path must compute the same formula (a parity test per metric checks it)."""

    params: tuple[str, ...]      # ontology parameters calibration may vary
    subscores: tuple[str, ...]   # `details` keys read, in the column order `fn` receives
    fn: Callable[[Any, Any, Any], Any]  # ((n, k) sub-scores, NaN = absent; the metric's params; (n,) roles) -> (n,) scores
    per_role: bool = False       # honours per-role overrides of these parameters (`role_weights`)


@dataclass(frozen=True)
class Metric:
    """A metric of one angle (or of one judge protocol: `angle` is then the protocol's name).

    `angle` routes it: every prompt of that angle is scored by every metric declaring it. `combine`, when declared,
    is its score formula over stored sub-scores (calibration's re-scoring reads it). `params` is the frozen
    dataclass its ontology block `metrics.<name>.params` is parsed into (vistar.api.params); `fn` receives that
    instance (None when the metric declares none).
    """

    name: str
    angle: str
    version: str
    features: tuple[str, ...]
    fn: Callable[[dict[str, Any], dict[str, Any], Any, Any], MetricResult]  # (features, controls, params, prompt) -> result
    # Features used when they can be computed; a missing weight or failure there leaves them out of the
    # dict the metric receives instead of skipping it (e.g. CPA counts people from `instances` when YOLO exists).
    optional: tuple[str, ...] = ()
    combine: Combine | None = None
    params: type[Any] | None = None

    @property
    def all_features(self) -> tuple[str, ...]:
        return self.features + self.optional

    def inputs(self, feats: dict[str, Any]) -> dict[str, Any]:
        """What the metric function receives: its required features and the optional ones that succeeded."""
        given = {n: feats[n] for n in self.features}
        given.update({n: feats[n] for n in self.optional if n in feats and not isinstance(feats[n], BaseException)})
        return given
