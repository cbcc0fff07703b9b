"""Precision chosen by measurement (benchmarks/bench_precision.py): each torch stage at fp32, tf32, bf16 and fp16,
its speed and its effect on the scores, and the rule that picks the CUDA default (runtime/precision.py).

For a stage S at precision P: the stages before S and their outputs come from the all-fp32 run; S runs at P and is
timed as `vistar bench` times a stage (its images/s at the batch, its model's forward calls replayed alone); the
stages after S run at fp32 on its outputs; then the metrics. Against the all-fp32 scores, per angle: the largest
|Δscore| and Kendall's τ over the images of that angle, and how many images it lost (scored at fp32, not at P). The
rule (`choose`): per stage, the fastest setting whose every angle stays inside TOLERANCE and loses no image; fp32
when none is faster.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api import ModelScale, RunOptions, StageContext, StageInput
from ..ontology import Ontology
from ..prompts_dsl import resolved_controls
from ..runtime.precision import Ran
from . import registry
from .batch import Features, failed_dependency
from .bench import StageReport, _wanted, bench_stage
from .bench_inputs import Item
from .params import metric_params

PRECISIONS: tuple[Ran, ...] = ("fp32", "tf32", "bf16", "fp16")
Scores = dict[tuple[int, str], float | None]   # (item index, metric) -> score (None: not scored)
# a precision may become a CUDA default when no angle's score moves more than this, nor its ranking of images
TOLERANCE = {"max_abs_delta": 0.01, "min_kendall_tau": 0.98}


@dataclass
class PrecisionRow:
    stage: str
    precision: str
    images_per_s: float | None
    model_images_per_s: float | None
    effect: dict[str, dict[str, Any]] = field(default_factory=dict)   # angle -> {"n", "lost", "max_abs_delta", "kendall_tau"}
    error: str | None = None   # why this setting was not measured (it raised, or the stage gave no output)

    def inside(self) -> bool:
        """No angle loses an image (else one that leaves every image unscored compares nothing and would pass)
        and none moves its scores or ranking past TOLERANCE."""
        return all(e["lost"] == 0
                   and (e["max_abs_delta"] is None or e["max_abs_delta"] <= TOLERANCE["max_abs_delta"])
                   and (e["kendall_tau"] is None or e["kendall_tau"] >= TOLERANCE["min_kendall_tau"])
                   for e in self.effect.values())


def _features(ontology: Ontology, stages: list[str], precision: dict[str, Ran]) -> dict[str, Any]:
    features = {name: dict(params or {}) for name, params in (ontology.data.get("features") or {}).items()}
    for name in stages:
        if registry.feature_stage(name).model_modules is not None:
            features.setdefault(name, {})["precision"] = precision.get(name, "fp32")
    return features


def _downstream(stage: str, stages: list[str]) -> list[str]:
    """STAGE and the stages that need it, directly or not, in run order."""
    out = [stage]
    for name in stages:
        if name not in out and set(registry.feature_stage(name).requires) & set(out):
            out.append(name)
    return out


def _compute(names: list[str], items: list[Item], feats: list[Features], ctx: StageContext, ontology: Ontology,
             timed: str | None, batch: int) -> StageReport | None:
    """Run NAMES in order on the items that need each (filling FEATS); TIMED is benched, its report returned."""
    report = None
    for name in names:
        idx = [i for i, it in enumerate(items) if name in _wanted(it)]
        subset, mine = [items[i] for i in idx], [feats[i] for i in idx]
        if name == timed:
            report = bench_stage(name, subset, mine, ctx, ontology, [batch], 1)
            continue
        stage = registry.feature_stage(name)
        ready = []
        for it, f in zip(subset, mine):
            failed = failed_dependency(stage, f)
            if failed is None:
                ready.append((it, f))
            else:   # as the engine does: a failed or skipped dependency ends the chain
                f[name] = failed
        inputs = [StageInput(it.image, it.prompt, resolved_controls(it.prompt, ontology), {d: f[d] for d in stage.requires})
                  for it, f in ready]
        for (_, f), out in zip(ready, stage.compute(inputs, ctx) if inputs else []):
            f[name] = out
    return report


def _scores(items: list[Item], feats: list[Features], ontology: Ontology) -> Scores:
    out: Scores = {}
    for i, (it, f) in enumerate(zip(items, feats)):
        for name in registry.metrics_for_prompt(it.prompt):
            metric = registry.metric(name)
            if any(isinstance(f.get(d), BaseException) or d not in f for d in metric.features):
                out[(i, name)] = None
                continue
            out[(i, name)] = metric.fn(metric.inputs(f), resolved_controls(it.prompt, ontology),
                                       metric_params(ontology, metric), it.prompt).score
    return out


def effect(items: list[Item], base: Scores, other: Scores, angles: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per angle of ANGLES: images compared (both scored), images lost (scored in BASE, not in OTHER), the largest
    |Δscore| and Kendall's τ (1 when the two lists are the same; None when fewer than two images or a list without
    variation makes τ undefined)."""
    from scipy.stats import kendalltau

    out: dict[str, dict[str, Any]] = {}
    for angle in sorted(angles):
        scored = [k for k in base if items[k[0]].prompt.angle == angle and base[k] is not None]
        keys = [k for k in scored if other.get(k) is not None]
        a, b = np.array([base[k] for k in keys], float), np.array([other[k] for k in keys], float)
        tau = None if len(keys) < 2 else 1.0 if np.array_equal(a, b) else float(kendalltau(a, b).statistic)
        out[angle] = {"n": len(keys), "lost": len(scored) - len(keys),
                      "max_abs_delta": float(np.abs(a - b).max()) if keys else None,
                      "kendall_tau": None if tau is not None and np.isnan(tau) else tau}
    return out


def measure(items: list[Item], *, device: str, precisions: Sequence[Ran] = PRECISIONS, batch: int = 8,
            model_scale: ModelScale = "full") -> list[PrecisionRow]:
    ontology = Ontology.load(None)
    needed = {f for it in items for m in registry.metrics_for_prompt(it.prompt) for f in registry.metric(m).all_features}
    stages = registry.stage_order(needed)
    options = RunOptions(random_init=True, model_scale=model_scale)
    base_ctx = StageContext(device=device, features=_features(ontology, stages, {}), options=options)
    base_feats: list[Features] = [dict() for _ in items]
    _compute(stages, items, base_feats, base_ctx, ontology, None, batch)
    base = _scores(items, base_feats, ontology)
    rows = []
    for stage in [s for s in stages if registry.feature_stage(s).model_modules is not None]:
        again = _downstream(stage, stages)
        for p in precisions:
            ctx = StageContext(device=device, features=_features(ontology, stages, {stage: p}), options=options,
                               cache=base_ctx.cache)   # the same loaded models; precision is per call
            feats = [{k: v for k, v in f.items() if k not in again} for f in base_feats]
            try:
                rep = _compute(again, items, feats, ctx, ontology, stage, batch)
            except Exception as exc:  # noqa: BLE001 - a dtype the device has no kernel for: that row says so, the rest is measured
                rows.append(PrecisionRow(stage, p, None, None, error=f"{type(exc).__name__}: {exc}"))
                continue
            assert rep is not None   # STAGE is among AGAIN, so it was benched
            angles = {it.prompt.angle for it in items if stage in _wanted(it)}
            rows.append(PrecisionRow(stage, p, rep.images_per_s, rep.model_images_per_s,
                                     effect(items, base, _scores(items, feats, ontology), angles),
                                     None if rep.status == "ok" else f"{rep.status}: {rep.note}"))
    return rows


def choose(rows: list[PrecisionRow]) -> dict[str, str]:
    """Per stage, the fastest precision inside TOLERANCE, where it is not fp32: `CUDA_DEFAULTS` for a CUDA run."""
    out: dict[str, str] = {}
    for stage in dict.fromkeys(r.stage for r in rows):
        fine = [r for r in rows if r.stage == stage and r.images_per_s and r.inside()]
        best = max(fine, key=lambda r: r.images_per_s or 0.0, default=None)
        if best is not None and best.precision != "fp32":
            out[stage] = best.precision
    return out
