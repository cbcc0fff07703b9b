"""CSE — compositional scene: does a multi-panel image show every sub-prompt, with one consistent subject?

CSE-Cov = mean over sub-prompts j of max over panels i of map(cos(CLIP panel i, CLIP text j)), where
map(c) = clip((c − cov_lo) / (cov_hi − cov_lo), 0, 1); the default (cov_lo 0, cov_hi 0.4) is CLIPScore's
2.5·max(c, 0) clipped to 1.
CSE-Con = map(mean pairwise cos of DINOv2 embeddings of the subject's masked crops) over the K panels
where the subject was found, with map over (con_lo, con_hi). With K < 2 there is no pair: a storyboard
of N ≥ 2 panels whose subject recurs in fewer than 2 of them scores 0; a single-panel image scores 1 when
its one panel shows the subject, else 0.
CSE = sqrt(CSE-Cov · CSE-Con). See docs/metrics/cse.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..api import Metric, MetricResult
from ..kernels.cosine import cosine_matrix, cosine_max_ref


@dataclass(frozen=True)
class CSEParams:
    """`metrics.CSE.params`: the cosine ranges mapped to [0, 1] for coverage and consistency."""

    cov_lo: float
    cov_hi: float
    con_lo: float
    con_hi: float


def linear_map(cos: ArrayLike, lo: float, hi: float) -> np.ndarray:
    """Cosine → [0, 1]: `lo` maps to 0, `hi` to 1, clipped outside."""
    if not hi > lo:
        raise ValueError(f"mapping needs hi > lo, got lo={lo}, hi={hi}")
    return np.clip((np.asarray(cos, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)


def coverage(panel_vectors: np.ndarray, shot_vectors: np.ndarray, lo: float, hi: float) -> dict[str, Any]:
    """CSE-Cov with its N×M similarity matrix and the best panel per sub-prompt / sub-prompt per panel."""
    if len(shot_vectors) == 0:
        raise ValueError("coverage needs at least one sub-prompt")
    sim, best_sim, best_panel = cosine_max_ref(panel_vectors, shot_vectors)
    mapped_best = linear_map(best_sim, lo, hi)   # the map is monotone, so max-then-map = map-then-max
    return {"score": float(mapped_best.mean()), "similarity": sim, "best_panel": best_panel,
            "best_panel_score": mapped_best, "best_shot": np.argmax(sim, axis=1)}


def consistency(subject_vectors: np.ndarray, found: np.ndarray, lo: float, hi: float) -> dict[str, Any]:
    """CSE-Con over the panels where the subject was found, with the K < 2 rule of the module docstring."""
    found = np.asarray(found, dtype=bool)
    n, k = len(found), int(found.sum())
    if k < 2:
        score = 1.0 if (n == 1 and k == 1) else 0.0
        rule = "single panel shows the subject" if score else f"subject found in {k} of {n} panels: no pair to compare"
        return {"score": score, "k": k, "mean_cosine": None, "pairwise": [], "rule": rule}
    vectors = np.asarray(subject_vectors)[found]
    sim = cosine_matrix(vectors, vectors)
    mean_cos = float(sim[np.triu_indices(k, 1)].mean())
    return {"score": float(linear_map(mean_cos, lo, hi)), "k": k, "mean_cosine": mean_cos, "pairwise": sim, "rule": None}


def cse_score(cov: float, con: float) -> float:
    return math.sqrt(max(cov, 0.0) * max(con, 0.0))


def _r(x: ArrayLike, nd: int = 4) -> Any:
    return np.round(np.asarray(x, dtype=np.float64), nd).tolist()


def _cse(features: dict[str, Any], controls: dict[str, Any], params: CSEParams, prompt: Any) -> MetricResult:
    layout, clip, subject, dino = features["panels"], features["clip_embed"], features["subject_masks"], features["dino_embed"]
    if len(clip.panel_vectors) != len(layout) or len(dino.found) != len(layout):
        raise ValueError(f"{len(layout)} panels but {len(clip.panel_vectors)} CLIP and {len(dino.found)} DINOv2 panel embeddings")
    cov = coverage(clip.panel_vectors, clip.text_vectors, float(params.cov_lo), float(params.cov_hi))
    con = consistency(dino.vectors, dino.found, float(params.con_lo), float(params.con_hi))
    shots = list(clip.texts)
    per_panel = [{"panel": i, "box": layout.boxes[i].tolist(), "best_shot": int(j), "best_shot_text": shots[j],
                  "similarity": round(float(cov["similarity"][i, j]), 4), "subject": bool(dino.found[i]),
                  "subject_score": round(float(subject.scores[i]), 4) if subject.found[i] else None,
                  "mask": subject.mask_source[i] or None}
                 for i, j in enumerate(cov["best_shot"])]
    per_shot = [{"shot": j, "text": shots[j], "best_panel": int(i), "similarity": round(float(cov["similarity"][i, j]), 4),
                 "score": round(float(s), 4)} for j, (i, s) in enumerate(zip(cov["best_panel"], cov["best_panel_score"]))]
    return MetricResult.ok(
        cse_score(cov["score"], con["score"]), cov=cov["score"], con=con["score"],
        panels=len(layout), grid=f"{layout.rows}x{layout.cols}", panel_method=layout.method,
        panel_methods={"rows": layout.row_method, "cols": layout.col_method},
        similarity=_r(cov["similarity"]), per_panel=per_panel, per_shot=per_shot,
        subject=str(controls.get("subject", "")), subject_panels=[int(i) for i in np.flatnonzero(dino.found)],
        subject_k=con["k"], con_mean_cosine=con["mean_cosine"], con_pairwise=_r(con["pairwise"]), con_rule=con["rule"])


METRIC = Metric(name="CSE", angle="CSE", version="1", features=("panels", "clip_embed", "subject_masks", "dino_embed"), fn=_cse,
                params=CSEParams)


def derive_shots(prompt: Any, ontology: Any = None) -> dict[str, Any]:
    """Sub-prompts from a core written as `lead-in: shot one; shot two; ...` (or just `a; b; c`), when
    the prompt has no `shots` list; at least two parts, else nothing is derived."""
    core = prompt.core
    body = core.split(":", 1)[1] if ":" in core else core
    parts = [p.strip().rstrip(".").strip() for p in body.split(";")]
    parts = [p for p in parts if p]
    return {"shots": parts} if len(parts) >= 2 else {}
