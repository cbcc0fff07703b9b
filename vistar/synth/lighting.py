"""Ray-cast scenes of boxes, cylinders and spheres on a ground plane under one directional light, with exact
cast shadows, instance masks and the light vector as ground truth (the validity check of LI).

World frame = the LI camera frame (docs/metrics/li.md): x to the image right, y up, z horizontal towards the
camera. The camera has no yaw or roll and looks down at the origin with a seeded pitch, so a light vector
from the ontology's anchor table is used as-is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..api import Instances, mask_box

_EPS = 1e-6
_AMBIENT, _SUN = 0.3, 0.9


@dataclass(frozen=True)
class Solid:
    kind: str                  # box | cylinder | sphere
    centre: tuple[float, float]  # (x, z) on the ground
    size: tuple[float, ...]    # box (half_w, half_d, height, yaw); cylinder (radius, height); sphere (radius,)
    colour: tuple[float, float, float]


@dataclass(frozen=True)
class LightScene:
    image: np.ndarray          # HxWx3 uint8 sRGB
    instances: Instances       # exact visible masks of the solids
    shadow: np.ndarray         # HxW bool: ground pixels hidden from the light (exact cast shadow)
    light: np.ndarray          # (3,) unit vector towards the light
    pitch_deg: float
    solids: tuple[Solid, ...]


def _hit_box(o, d, s: Solid):
    """Slab test in the box's own frame (yawed about y); returns t and outward normal."""
    hw, hd, h, yaw = s.size
    c, si = np.cos(yaw), np.sin(yaw)
    rot = np.array([[c, 0, -si], [0, 1, 0], [si, 0, c]])      # world -> local
    lo = (o - np.array([s.centre[0], 0.0, s.centre[1]])) @ rot.T
    ld = d @ rot.T
    lo_b, hi_b = np.array([-hw, 0.0, -hd]), np.array([hw, h, hd])
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo_b - lo) / ld, (hi_b - lo) / ld
    tmin, tmax = np.minimum(t1, t2), np.maximum(t1, t2)
    tmin = np.where(np.isnan(tmin), -np.inf, tmin)
    tmax = np.where(np.isnan(tmax), np.inf, tmax)
    t_near, t_far = tmin.max(-1), tmax.min(-1)
    hit = (t_near <= t_far) & (t_near > _EPS)
    axis = tmin.argmax(-1)
    sign = -np.sign(np.take_along_axis(ld, axis[..., None], -1)[..., 0])
    local_n = np.zeros_like(ld)
    np.put_along_axis(local_n, axis[..., None], sign[..., None], -1)
    return np.where(hit, t_near, np.inf), local_n @ rot


def _hit_cylinder(o, d, s: Solid):
    r, h = s.size
    ox, oz = o[..., 0] - s.centre[0], o[..., 2] - s.centre[1]
    dx, dz = d[..., 0], d[..., 2]
    a = dx * dx + dz * dz
    b = 2 * (ox * dx + oz * dz)
    c = ox * ox + oz * oz - r * r
    disc = b * b - 4 * a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        t_side = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
    y_side = o[..., 1] + t_side * d[..., 1]
    side_ok = (disc >= 0) & (a > _EPS) & (t_side > _EPS) & (y_side >= 0) & (y_side <= h)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_cap = (h - o[..., 1]) / d[..., 1]
    cx, cz = ox + t_cap * dx, oz + t_cap * dz
    cap_ok = (t_cap > _EPS) & (cx * cx + cz * cz <= r * r)
    t = np.where(side_ok, t_side, np.inf)
    t = np.where(cap_ok & (t_cap < t), t_cap, t)
    p = o + np.where(np.isfinite(t), t, 0)[..., None] * d
    n = np.stack([p[..., 0] - s.centre[0], np.zeros_like(t), p[..., 2] - s.centre[1]], -1) / r
    n = np.where((cap_ok & (t == t_cap))[..., None], np.array([0.0, 1.0, 0.0]), n)
    return t, n


def _hit_sphere(o, d, s: Solid):
    (r,) = s.size
    centre = np.array([s.centre[0], r, s.centre[1]])
    oc = o - centre
    b = (oc * d).sum(-1)
    c = (oc * oc).sum(-1) - r * r
    disc = b * b - c
    t = -b - np.sqrt(np.maximum(disc, 0))
    t = np.where((disc >= 0) & (t > _EPS), t, np.inf)
    p = o + np.where(np.isfinite(t), t, 0)[..., None] * d
    return t, (p - centre) / r


_KINDS = ("box", "cylinder", "sphere")
_HIT = {"box": _hit_box, "cylinder": _hit_cylinder, "sphere": _hit_sphere}


def _random_size(rng: np.random.Generator, kind: str) -> tuple[tuple[float, ...], float]:
    """(size, footprint radius) of one solid of KIND, drawn so typical shadows stay in frame."""
    if kind == "box":
        size = (rng.uniform(0.2, 0.35), rng.uniform(0.2, 0.35), rng.uniform(0.7, 1.2), rng.uniform(0, np.pi / 2))
        return size, float(np.hypot(size[0], size[1]))
    if kind == "cylinder":
        size = (rng.uniform(0.2, 0.35), rng.uniform(0.7, 1.2))
        return size, size[0]
    size = (rng.uniform(0.3, 0.45),)
    return size, size[0]


def _height(solid: Solid) -> float:
    return solid.size[2] if solid.kind == "box" else solid.size[1] if solid.kind == "cylinder" else 2 * solid.size[0]


def _footprint(solid: Solid) -> float:
    return float(np.hypot(solid.size[0], solid.size[1])) if solid.kind == "box" else solid.size[0]


def random_solids(rng: np.random.Generator, n: int) -> tuple[Solid, ...]:
    """n non-overlapping solids near the origin, sizes drawn so typical shadows stay in frame."""
    solids: list[Solid] = []
    while len(solids) < n:
        kind = _KINDS[int(rng.integers(3))]
        x, z = rng.uniform(-1.6, 1.6), rng.uniform(-1.0, 1.0)
        size, radius = _random_size(rng, kind)
        if all(np.hypot(x - s.centre[0], z - s.centre[1]) > radius + 0.9 for s in solids):
            colour = tuple(rng.uniform(0.25, 0.9, 3))
            solids.append(Solid(kind, (x, z), size, colour))
    return tuple(solids)


def _shades(caster: Solid, other: Solid, light: np.ndarray) -> bool:
    """OTHER's footprint centre lies in CASTER's cast shadow: its ray towards the light hits CASTER."""
    foot = np.array([[other.centre[0], 0.02, other.centre[1]]])
    return bool(np.isfinite(_HIT[caster.kind](foot, light[None], caster)[0][0]))


def crowded_solids(rng: np.random.Generator, n: int, light, tries: int = 400) -> tuple[Solid, ...]:
    """n non-overlapping solids, each after the first standing in the cast shadow of one placed before it or
    casting its shadow on one (under LIGHT, footprint centres tested by shadow rays): crowded scenes, where
    shadows fall on other objects and are cut by them. A solid that finds no such place in TRIES draws is
    placed anywhere free, so n is always reached."""
    light = np.asarray(light, float) / np.linalg.norm(light)
    away = -np.array([light[0], light[2]])
    away = away / np.linalg.norm(away) if np.linalg.norm(away) > 1e-6 else np.array([0.0, -1.0])
    across = np.array([-away[1], away[0]])
    cot = np.hypot(light[0], light[2]) / max(light[1], 1e-3)
    solids: list[Solid] = []

    def free(x: float, z: float, radius: float) -> bool:
        return abs(x) <= 1.6 and abs(z) <= 1.0 and all(
            np.hypot(x - s.centre[0], z - s.centre[1]) > radius + _footprint(s) + 0.08 for s in solids)

    while len(solids) < n:
        colour = tuple(rng.uniform(0.25, 0.9, 3))
        if not solids:
            kind = _KINDS[int(rng.integers(3))]
            solids.append(Solid(kind, (rng.uniform(-0.8, 0.8), rng.uniform(-0.5, 0.5)), _random_size(rng, kind)[0], colour))
            continue
        placed = None
        for _ in range(tries):                           # kind and size redrawn: two balls under a high sun cannot
            kind = _KINDS[int(rng.integers(3))]          # reach each other's footprint with their shadows
            size, radius = _random_size(rng, kind)
            anchor = solids[int(rng.integers(len(solids)))]
            downstream = bool(rng.integers(2))          # in the anchor's shadow, or casting one on it
            caster_height = _height(anchor) if downstream else _height(Solid(kind, (0, 0), size, colour))
            gap = _footprint(anchor) + radius + 0.08
            d = rng.uniform(gap, gap + caster_height * cot)
            side = rng.uniform(-0.5, 0.5) * min(_footprint(anchor), radius)
            x, z = np.array(anchor.centre) + (d if downstream else -d) * away + side * across
            candidate = Solid(kind, (float(x), float(z)), size, colour)
            if free(candidate.centre[0], candidate.centre[1], radius) and (
                    _shades(anchor, candidate, light) if downstream else _shades(candidate, anchor, light)):
                placed = candidate
                break
        while placed is None:
            x, z = rng.uniform(-1.6, 1.6), rng.uniform(-1.0, 1.0)
            placed = Solid(kind, (float(x), float(z)), size, colour) if free(x, z, radius) else None
        solids.append(placed)
    return tuple(solids)


def render(solids: tuple[Solid, ...], light, pitch_deg: float = 35.0, size: tuple[int, int] = (240, 320),
           distance: float = 6.5, fov_deg: float = 50.0, seed: int = 0) -> LightScene:
    """Ray-cast the solids on the plane y=0; shading = albedo · (ambient + sun · max(0, n·L) · visible)."""
    height, width = size
    light = np.asarray(light, float) / np.linalg.norm(light)
    phi = np.radians(pitch_deg)
    eye = np.array([0.0, distance * np.sin(phi), distance * np.cos(phi)])
    fwd = -eye / np.linalg.norm(eye)
    right, up = np.array([1.0, 0.0, 0.0]), np.array([0.0, np.cos(phi), -np.sin(phi)])
    half = np.tan(np.radians(fov_deg) / 2)
    u = ((np.arange(width) + 0.5) / width - 0.5) * 2 * half * width / height
    v = ((np.arange(height) + 0.5) / height - 0.5) * 2 * half
    d = fwd + u[None, :, None] * right - v[:, None, None] * up
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    o = np.broadcast_to(eye, d.shape)

    with np.errstate(divide="ignore", invalid="ignore"):
        t_ground = np.where(d[..., 1] < 0, -eye[1] / d[..., 1], np.inf)
    ts, normals = zip(*(_HIT[s.kind](o, d, s) for s in solids)) if solids else ((), ())
    t_all = np.stack([t_ground, *ts])
    owner = t_all.argmin(0)                       # 0 = ground, i = solid i-1
    t_hit = t_all.min(0)
    p = o + np.where(np.isfinite(t_hit), t_hit, 0)[..., None] * d
    normal = np.broadcast_to(np.array([0.0, 1.0, 0.0]), d.shape).copy()
    for i, n in enumerate(normals):
        normal[owner == i + 1] = n[owner == i + 1]

    shadow_o = p + normal * 1e-4
    shadow_d = np.broadcast_to(light, d.shape)
    blocked = np.zeros(owner.shape, bool)
    for s in solids:
        blocked |= np.isfinite(_HIT[s.kind](shadow_o, shadow_d, s)[0])
    lit = np.clip((normal * light).sum(-1), 0, None) * ~blocked

    rng = np.random.default_rng(seed)
    ground = np.array([0.62, 0.58, 0.52]) * (1 + 0.04 * rng.standard_normal((height, width, 1)))
    albedo = ground.copy()
    for i, s in enumerate(solids):
        albedo[owner == i + 1] = s.colour
    sky = np.isinf(t_hit)
    linear = albedo * (_AMBIENT + _SUN * lit)[..., None]
    linear[sky] = (0.55, 0.7, 0.9)
    image = (np.clip(linear, 0, 1) ** (1 / 2.2) * 255 + 0.5).astype(np.uint8)

    masks = np.stack([owner == i + 1 for i in range(len(solids))]) if solids else np.zeros((0, height, width), bool)
    boxes = np.array([mask_box(m) for m in masks], float).reshape(-1, 4)
    instances = Instances(masks, np.zeros(len(solids), int), tuple(s.kind for s in solids),
                          np.ones(len(solids)), boxes)
    return LightScene(image, instances, (owner == 0) & blocked & ~sky, light, pitch_deg, solids)


def sample_scene(light, seed: int, size: tuple[int, int] = (240, 320)) -> LightScene:
    """One seeded scene: 1–3 solids, camera pitch drawn from 25°–45° (LI assumes 35° by default)."""
    rng = np.random.default_rng(seed)
    solids = random_solids(rng, int(rng.integers(1, 4)))
    return render(solids, light, pitch_deg=float(rng.uniform(25, 45)), size=size, seed=seed)
