"""Light directions: the anchor vocabulary, parsing a `light=` value, and the direction implied by one
object and its cast shadow in the image.

Frame (docs/metrics/li.md): x to the image right, y up (gravity), z horizontal from the scene towards the
camera; a light vector points from the scene towards the light.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import parse
from .li_params import LightAnchor, LIParams


@dataclass(frozen=True)
class Anchor:
    phrase: str
    vector: np.ndarray      # (3,) unit
    aliases: tuple[str, ...] = ()


def normalize_phrase(text: str) -> str:
    """Lower case, hyphens/punctuation to spaces, articles dropped, so "Upper-left front" == "upper left front"."""
    words = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    return " ".join(w for w in words if w not in ("the", "a", "an"))


def anchors_from_params(anchors: tuple[LightAnchor, ...]) -> list[Anchor]:
    """The `anchors` parameter with unit vectors."""
    out = []
    for item in anchors:
        v = np.asarray(item.vector, float)
        out.append(Anchor(item.phrase, v / np.linalg.norm(v), item.aliases))
    return out


def _names(anchor: Anchor) -> list[str]:
    return [normalize_phrase(n) for n in (anchor.phrase, *anchor.aliases)]


def find_anchor(text: str, anchors: list[Anchor]) -> Anchor | None:
    """The anchor whose phrase (or alias) occurs in TEXT as whole words; the longest wins (most specific)."""
    padded = f" {normalize_phrase(text)} "
    best, best_len = None, 0
    for anchor in anchors:
        for name in _names(anchor):
            if f" {name} " in padded and len(name) > best_len:
                best, best_len = anchor, len(name)
    return best


def parse_light(value: object, anchors: list[Anchor]) -> tuple[np.ndarray, str]:
    """A `light=` value -> (unit vector, canonical label). Accepts an anchor phrase/alias (optionally without
    the "light from" prefix) or three numbers "x, y, z"; raises ValueError naming the anchors otherwise."""
    if isinstance(value, (list, tuple)) and len(value) == 3:
        numbers = [float(v) for v in value]
    else:
        text = str(value)
        found = re.findall(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", text)
        if len(found) == 3 and not re.search(r"[a-df-zA-DF-Z]", text):
            numbers = [float(v) for v in found]
        else:
            wanted = normalize_phrase(text)
            for anchor in anchors:
                if any(wanted == n or f"light from {wanted}" == n for n in _names(anchor)):
                    return anchor.vector, anchor.phrase
            found_anchor = find_anchor(text, anchors)
            if found_anchor is None:
                known = "; ".join(a.phrase for a in anchors)
                raise ValueError(f"light={value!r} is neither an anchor phrase nor 'x, y, z' (anchors: {known})")
            return found_anchor.vector, found_anchor.phrase
    v = np.asarray(numbers, float)
    if not np.isfinite(v).all() or np.linalg.norm(v) == 0:
        raise ValueError(f"light={value!r}: vector must be finite and non-zero")
    return v / np.linalg.norm(v), "vector"


def angle_between(a: np.ndarray, b: np.ndarray) -> float:
    """Angle in radians between two directions."""
    cos = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    return float(np.arccos(np.clip(cos, -1.0, 1.0)))


def li_score(estimate: np.ndarray, expected: np.ndarray) -> float:
    """1 − angle/(π/2), clipped to [0, 1]: 0 at 90° or more off."""
    return float(np.clip(1.0 - angle_between(estimate, expected) / (np.pi / 2), 0.0, 1.0))


@dataclass(frozen=True)
class PairGeometry:
    base: tuple[float, float]     # estimated footprint centre (upright) or contact point (round) in the image (x, y), pixels
    tip: tuple[float, float]      # shadow tip in the image
    height: float                 # object height on the ground-plane scale, pixels
    length: float                 # shadow length on the ground-plane scale, pixels: from the footprint edge
                                  # (upright) or from the contact point (round)
    vector: np.ndarray            # implied light direction (unit)
    shape: str = "upright"        # which solid model explained the silhouette: "upright" or "round"


def silhouette_fits(object_mask: np.ndarray, pitch_deg: float) -> tuple[float, float]:
    """How well the silhouette's per-row widths match (a) a disc as wide as the mask — the outline of a ball
    under the locally orthographic camera, from any viewpoint — and (b) an upright solid with vertical sides
    as wide as the mask: full width between two elliptical caps of half-height width·sin φ / 2 (the outlines
    of its footprint and top). Each is an IoU of the row widths in [0, 1]; the mask must be non-empty."""
    ys, xs = np.nonzero(object_mask)
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    width, height = float(x1 - x0), float(y1 - y0)
    rows = np.bincount(ys - y0, minlength=y1 - y0).astype(float)
    v = np.arange(y1 - y0) + 0.5
    disc = 2 * np.sqrt(np.clip((width / 2) ** 2 - (v - height / 2) ** 2, 0, None))
    cap = min(width * np.sin(np.radians(pitch_deg)) / 2, height / 2)
    into_cap = np.maximum(np.clip((cap - v) / cap, 0, 1), np.clip((v - (height - cap)) / cap, 0, 1)) if cap > 0 else 0 * v
    upright = width * np.sqrt(1 - into_cap ** 2)

    def iou(model: np.ndarray) -> float:
        return float(np.minimum(rows, model).sum() / np.maximum(rows, model).sum())

    return iou(disc), iou(upright)


def _tip(sx: np.ndarray, sy: np.ndarray, base: tuple[float, float], sin_p: float,
         quantile: float) -> tuple[tuple[float, float], np.ndarray]:
    """(tip in the image, tip on the ground relative to BASE): the mean of the shadow pixels whose ground
    distance from BASE is at or above QUANTILE (robust to a stray pixel)."""
    gx = sx + 0.5 - base[0]
    gz = (sy + 0.5 - base[1]) / sin_p
    dist = np.hypot(gx, gz)
    far = dist >= np.quantile(dist, quantile)
    return (float(sx[far].mean()) + 0.5, float(sy[far].mean()) + 0.5), np.array([gx[far].mean(), gz[far].mean()])


@dataclass(frozen=True)
class SolidModel:
    """One object as the fit sees it: where it stands, how tall and wide, which solid explains its outline."""

    base: tuple[float, float]     # footprint centre (upright) or contact point (round) in the image (x, y)
    radius: float                 # footprint (upright) or ball radius, ground-plane pixels
    height: float                 # upright height, ground-plane pixels (unused for a ball)
    sin_pitch: float              # sin of the local camera pitch: ground depth → image rows
    round: bool


def solid_model(object_mask: np.ndarray, pitch_deg: float) -> SolidModel | None:
    """The solid that explains OBJECT_MASK at PITCH_DEG (pair_direction below: which solid, its base, radius
    and height); None for an empty mask. The joint fit (light_fit) predicts shadows from the same models."""
    ys, xs = np.nonzero(object_mask)
    if len(xs) == 0:
        return None
    phi = np.radians(pitch_deg)
    sin_p, cos_p = float(np.sin(phi)), float(np.cos(phi))
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    width = float(x1 - x0)
    disc_fit, upright_fit = silhouette_fits(object_mask, pitch_deg)
    if disc_fit > upright_fit:
        r = 0.5 * width
        return SolidModel((0.5 * float(x0 + x1), 0.5 * float(y0 + y1) + r * cos_p), r, 2 * r, sin_p, True)
    bottom = ys >= y1 - max(1.0, 0.05 * (y1 - y0))
    base = (float(xs[bottom].mean()) + 0.5, float(y1) - 0.5 * width * sin_p)
    height = max((float(y1 - y0) - width * sin_p) / cos_p, 1.0)
    return SolidModel(base, 0.5 * width, height, sin_p, False)


def _light(horizontal: np.ndarray, elevation: float) -> np.ndarray:
    return np.array([np.cos(elevation) * horizontal[0], np.sin(elevation), np.cos(elevation) * horizontal[1]])


def pair_direction(model: SolidModel | None, shadow_mask: np.ndarray, tip_quantile: float = 0.98) -> PairGeometry | None:
    """Light direction implied by one object (MODEL: solid_model at its local pitch φ; None gives None) and its
    cast shadow, seen by a level camera pitched down by φ at a horizontal ground (locally orthographic): a ground displacement (dx, dz) appears as
    (dx, dz·sin φ) pixels (z towards the camera is down the image), a vertical height h as h·cos φ.

    The tip is the mean of the shadow pixels whose ground distance from the base is at or above the
    TIP_QUANTILE quantile; the azimuth is opposite to base→tip on the ground. The base and the elevation
    depend on the solid, chosen by which outline fits the silhouette better (silhouette_fits, in solid_model):

    - upright (vertical sides on a flat footprint: boxes, posts, people): base = footprint centre = the
      bottom-centre of the mask raised by half the footprint's apparent depth (width · sin φ / 2);
      elevation = atan(height / length), height = (silhouette height − width · sin φ) / cos φ, length =
      ground distance to the tip − width / 2 (the tip is cast by the top edge on the shadow side);
    - round (a ball of radius r = width / 2 touching the ground at one point): base = contact point, r·cos φ
      below the disc's centre in the image; the tip is cast by the point where the light ray grazes the
      ball, at ground distance D = r(1 + cos e)/sin e = r·cot(e/2) from the contact, so e = 2·atan(r / D).
    """
    sy, sx = np.nonzero(shadow_mask)
    if model is None or len(sx) == 0:
        return None
    tip, tip_g = _tip(sx, sy, model.base, model.sin_pitch, tip_quantile)
    reach = float(np.hypot(*tip_g))
    if reach <= 0:
        return None
    if model.round:
        vector = _light(-tip_g / reach, 2 * np.arctan2(model.radius, reach))
        return PairGeometry(model.base, tip, 2 * model.radius, reach, vector, "round")
    length = max(reach - model.radius, 1.0)
    vector = _light(-tip_g / reach, np.arctan2(model.height, length))
    return PairGeometry(model.base, tip, model.height, length, vector)


def derive_light(prompt: Any, ontology: Any = None) -> dict[str, Any]:
    """LI deriver: an anchor phrase (or alias) in the core becomes `light=` when the prompt gives none."""
    if ontology is None:
        from ..ontology import Ontology

        ontology = Ontology.load()
    params = parse(LIParams, ontology.metric_params("LI"), "metrics.LI.params")
    anchor = find_anchor(prompt.core, anchors_from_params(params.anchors))
    return {"light": anchor.phrase} if anchor else {}
