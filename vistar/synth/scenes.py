"""Ray-cast scenes of two solids on a ground plane, with exact depth and visible-instance masks: ground truth for PSC.

Each seed gives a pair of scenes built from the same two solids: one where they interpenetrate with the
intersection curve facing the camera, and one where they do not (touching with the contact hidden behind the
nearer solid, or occluding with a gap). World frame: x right, y up, camera on the −z side looking at the origin from above.
A penetration hidden from the camera (intersection curve on the far side) is invisible in a single depth map,
so the generator keeps penetration offsets within ±20° of the image plane. Contacts whose contact line is in
view (a box resting flat on another, two solids side by side touching at their silhouettes) have continuous
depth like a penetration and are not generated as "clean" scenes (docs/metrics/psc.md, limitations).
`at_block_face` builds the PSC validity sets: a ball or cube sunk into, resting against, or floating before a block's face.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..api import Instances, mask_box

_MISS = np.inf


@dataclass(frozen=True)
class Sphere:
    centre: tuple[float, float, float]
    radius: float


@dataclass(frozen=True)
class Box:
    lo: tuple[float, float, float]
    hi: tuple[float, float, float]


@dataclass(frozen=True)
class Cylinder:
    """Vertical cylinder: axis through (x, z), from y0 to y1."""

    x: float
    z: float
    radius: float
    y0: float
    y1: float


@dataclass(frozen=True)
class Scene:
    image: np.ndarray          # HxWx3 uint8, Lambert-shaded
    depth: np.ndarray          # HxW float32 z-depth along the optical axis; inf where a ray hits nothing
    inverse_depth: np.ndarray  # HxW float32 1/depth (0 for sky): the `depth` feature's convention, larger = nearer
    labels: np.ndarray         # HxW int: index of the visible solid, −1 ground, −2 sky
    instances: Instances       # visible masks of the solids, confidence 1
    kind: str                  # penetrating | touching | occluding


def _camera_rays(height: int, width: int, elevation_deg: float, distance: float, fov_deg: float = 50.0):
    pitch = np.radians(elevation_deg)
    origin = np.array([0.0, distance * np.sin(pitch), -distance * np.cos(pitch)]) + np.array([0.0, 0.5, 0.0])
    forward = np.array([0.0, 0.5, 0.0]) - origin
    forward /= np.linalg.norm(forward)
    right = np.cross(np.array([0.0, 1.0, 0.0]), forward)
    right /= np.linalg.norm(right)
    up = np.cross(forward, right)
    focal = 0.5 * width / np.tan(np.radians(fov_deg) / 2)
    v, u = np.mgrid[0:height, 0:width].astype(np.float64)
    dirs = (forward[None, None] * focal + right[None, None] * (u - (width - 1) / 2)[..., None]
            - up[None, None] * (v - (height - 1) / 2)[..., None])
    dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
    return origin, dirs, forward


def _hit_sphere(o, d, s: Sphere):
    oc = o - np.asarray(s.centre)
    b = d @ oc
    disc = b * b - (oc @ oc - s.radius ** 2)
    t = -b - np.sqrt(np.maximum(disc, 0.0))
    t = np.where((disc > 0) & (t > 1e-9), t, _MISS)
    n = o + np.where(np.isfinite(t), t, 0.0)[..., None] * d - np.asarray(s.centre)
    return t, n / s.radius


def _hit_box(o, d, b: Box):
    lo, hi = np.asarray(b.lo), np.asarray(b.hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo - o) / d, (hi - o) / d
    tmin_axes, tmax_axes = np.minimum(t1, t2), np.maximum(t1, t2)
    tnear, tfar = tmin_axes.max(-1), tmax_axes.min(-1)
    t = np.where((tfar >= tnear) & (tnear > 1e-9), tnear, _MISS)
    axis = tmin_axes.argmax(-1)
    sign = -np.sign(np.take_along_axis(d, axis[..., None], -1)[..., 0])
    n = np.zeros(d.shape)
    np.put_along_axis(n, axis[..., None], sign[..., None], -1)
    return t, n


def _hit_cylinder(o, d, c: Cylinder):
    ox, oz = o[0] - c.x, o[2] - c.z
    a = d[..., 0] ** 2 + d[..., 2] ** 2
    b = ox * d[..., 0] + oz * d[..., 2]
    disc = b * b - a * (ox * ox + oz * oz - c.radius ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_side = (-b - np.sqrt(np.maximum(disc, 0.0))) / a
        y_side = o[1] + t_side * d[..., 1]
        t_side = np.where((disc > 0) & (t_side > 1e-9) & (y_side >= c.y0) & (y_side <= c.y1), t_side, _MISS)
        t_cap = (c.y1 - o[1]) / d[..., 1]
    p = o + t_cap[..., None] * d
    inside = (p[..., 0] - c.x) ** 2 + (p[..., 2] - c.z) ** 2 <= c.radius ** 2
    t_cap = np.where(inside & (t_cap > 1e-9), t_cap, _MISS)
    t = np.minimum(t_side, t_cap)
    hit = o + np.where(np.isfinite(t), t, 0.0)[..., None] * d
    n_side = np.stack([hit[..., 0] - c.x, np.zeros(t.shape), hit[..., 2] - c.z], -1) / c.radius
    n = np.where((t_cap <= t_side)[..., None], np.array([0.0, 1.0, 0.0]), n_side)
    return t, n


_HIT = {Sphere: _hit_sphere, Box: _hit_box, Cylinder: _hit_cylinder}


def render(solids: list, kind: str, height: int = 96, width: int = 128, elevation_deg: float = 25.0,
           distance: float = 6.0) -> Scene:
    """Nearest-surface ray cast of the solids' union over a ground plane y = 0."""
    origin, dirs, forward = _camera_rays(height, width, elevation_deg, distance)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ground = np.where(dirs[..., 1] < 0, -origin[1] / dirs[..., 1], _MISS)
    ts, normals = [t_ground], [np.broadcast_to(np.array([0.0, 1.0, 0.0]), dirs.shape)]
    for solid in solids:
        t, n = _HIT[type(solid)](origin, dirs, solid)
        ts.append(t)
        normals.append(n)
    t_all = np.stack(ts)
    nearest = t_all.argmin(0)
    t = np.take_along_axis(t_all, nearest[None], 0)[0]
    labels = np.where(np.isfinite(t), nearest - 1, -2)
    depth = (t * (dirs @ forward)).astype(np.float32)
    inverse = np.where(np.isfinite(depth), 1.0 / depth, 0.0).astype(np.float32)
    normal = np.take_along_axis(np.stack(normals), nearest[None, ..., None], 0)[0]
    light = np.array([-0.4, 0.8, -0.45]) / np.linalg.norm([-0.4, 0.8, -0.45])
    shade = 0.25 + 0.75 * np.clip(normal @ light, 0, 1)
    palette = np.array([[0.55, 0.6, 0.5], [0.85, 0.3, 0.25], [0.25, 0.45, 0.85], [0.9, 0.8, 0.3]])
    rgb = palette[np.clip(labels + 1, 0, 3)] * shade[..., None]
    rgb[labels == -2] = (0.7, 0.8, 0.95)
    masks = np.stack([labels == i for i in range(len(solids))]) if solids else np.zeros((0, height, width), bool)
    instances = Instances(masks, np.arange(len(solids)), tuple(type(s).__name__.lower() for s in solids),
                          np.ones(len(solids)), np.array([mask_box(m) for m in masks]).reshape(-1, 4))
    return Scene((rgb * 255).round().astype(np.uint8), depth, inverse, labels, instances, kind)


def _lateral(rng: np.random.Generator, distance: float) -> np.ndarray:
    """An xz offset of length DISTANCE within ±20° of the image plane (so the contact faces the camera)."""
    angle = np.radians(rng.uniform(-20, 20)) + (np.pi if rng.random() < 0.5 else 0.0)
    return distance * np.array([np.cos(angle), np.sin(angle)])


def _sphere_and_box(rng):
    half, height = rng.uniform(0.7, 1.0), rng.uniform(0.5, 1.0)
    box = Box((-half, 0.0, -half), (half, height, half))
    r = rng.uniform(0.35, 0.55)
    x, z = rng.uniform(-0.3, 0.3, size=2) * half
    sunk = Sphere((x, height + r - rng.uniform(0.7, 1.2) * r, z), r)
    touching = Sphere((x, r, -half - r), r)   # on the ground, touching the box's front face (contact hidden)
    return [box, sunk], [box, touching], "touching"


def _two_spheres(rng):
    ra, rb = rng.uniform(0.5, 0.8), rng.uniform(0.4, 0.7)
    a = Sphere((0.0, ra, 0.0), ra)
    dx, dz = _lateral(rng, rng.uniform(0.45, 0.75) * (ra + rb))
    through = Sphere((dx, rb, dz), rb)
    gap = rng.uniform(0.2, 0.8)
    side = rng.uniform(0.3, 0.7) * ra * (1 if rng.random() < 0.5 else -1)
    behind = Sphere((side, rb, np.sqrt((ra + rb + gap) ** 2 - side ** 2)), rb)
    return [a, through], [a, behind], "occluding"


def _cylinder_and_box(rng):
    r, h = rng.uniform(0.35, 0.55), rng.uniform(1.2, 1.8)
    cyl = Cylinder(0.0, 0.0, r, 0.0, h)
    half, bh = rng.uniform(0.35, 0.5), rng.uniform(0.5, 0.9)
    dx, dz = _lateral(rng, r + half * rng.uniform(0.0, 0.6))
    through = Box((dx - half, 0.0, dz - half), (dx + half, bh, dz + half))
    x = rng.uniform(-0.5, 0.5) * r
    front = -r   # the box (which spans x = 0) has its back face on the plane tangent to the cylinder's front
    in_front = Box((x - half, 0.0, front - 2 * half), (x + half, bh, front))
    return [cyl, through], [cyl, in_front], "touching"


def _two_boxes(rng):
    ha, hb = rng.uniform(0.5, 0.8), rng.uniform(0.35, 0.6)
    ya, yb = rng.uniform(0.6, 1.2), rng.uniform(0.4, 1.0)
    a = Box((-ha, 0.0, -ha), (ha, ya, ha))
    dx = (ha + hb) * rng.uniform(0.5, 0.8) * (1 if rng.random() < 0.5 else -1)
    front = -ha + rng.uniform(-0.05, 0.05)      # front faces nearly flush: box faces hide any deeper offset
    through = Box((dx - hb, 0.0, front), (dx + hb, yb, front + 2 * hb))
    x, z = rng.uniform(0.4, 0.9) * ha * (1 if rng.random() < 0.5 else -1), ha + hb + rng.uniform(0.2, 0.8)
    behind = Box((x - hb, 0.0, z - hb), (x + hb, ya + rng.uniform(0.2, 0.6), z + hb))
    return [a, through], [a, behind], "occluding"


_BUILDERS = (_sphere_and_box, _two_spheres, _cylinder_and_box, _two_boxes)

PLACEMENTS = ("sunk", "resting", "floating")


def solid(shape: str, centre: tuple[float, float, float], r: float) -> Sphere | Box:
    """A ball of radius R or a cube of half-size R at CENTRE: the solid the block scenes set against a block."""
    x, y, z = centre
    if shape == "ball":
        return Sphere((x, y, z), r)
    if shape == "cube":
        return Box((x - r, y - r, z - r), (x + r, y + r, z + r))
    raise ValueError(f"unknown shape '{shape}' (ball, cube)")


def at_block_face(rng: np.random.Generator, placement: str, shape: str = "ball") -> list:
    """A block and a ball (or cube) of half-size r at its front face (the face towards the camera): "sunk"
    puts the solid's centre within −0.2r…0.5r of the face plane (into the block by at least half its size),
    "resting" sets it on the ground touching the face, "floating" holds it in the air 0.1–0.5 in front."""
    half, height = rng.uniform(0.6, 1.0), rng.uniform(0.9, 1.4)
    box = Box((-half, 0.0, -half), (half, height, half))
    r = rng.uniform(0.25, 0.45) if shape == "ball" else rng.uniform(0.2, 0.35)
    x = rng.uniform(-0.5, 0.5) * (half - r)
    if placement == "sunk":
        y, z = rng.uniform(r, height - r), -half - rng.uniform(-0.2, 0.5) * r
    elif placement == "resting":
        y, z = r, -half - r
    elif placement == "floating":
        y, z = rng.uniform(r + 0.1, height), -half - r - rng.uniform(0.1, 0.5)
    else:
        raise ValueError(f"unknown placement '{placement}' ({', '.join(PLACEMENTS)})")
    return [box, solid(shape, (x, y, z), r)]


def scene_pair(seed: int, height: int = 96, width: int = 128, elevation_deg: float | None = None) -> tuple[Scene, Scene]:
    """(penetrating scene, non-penetrating scene) of the same two solids; the layout family cycles with the seed.
    The camera looks down at a seeded 18°–32°, or at `elevation_deg` (same solids): from higher up, the
    clean scenes' contacts come into view and look like penetrations (docs/metrics/psc.md)."""
    rng = np.random.default_rng(seed)
    penetrating, clean, kind = _BUILDERS[seed % len(_BUILDERS)](rng)
    elevation = rng.uniform(18, 32)
    elevation = elevation if elevation_deg is None else elevation_deg
    return (render(penetrating, "penetrating", height, width, elevation),
            render(clean, kind, height, width, elevation))


def imperfect_features(scene: Scene, rng: np.random.Generator, blur_px: float = 1.5,
                       mask_px: int = 1) -> tuple[Instances, np.ndarray]:
    """The scene's ground truth made to look like model output: inverse depth blurred (Gaussian sigma BLUR_PX,
    as a depth network smooths steps) and each mask grown or shrunk by MASK_PX at random (boundary error)."""
    from scipy import ndimage

    depth = ndimage.gaussian_filter(scene.inverse_depth, blur_px) if blur_px > 0 else scene.inverse_depth
    grow = rng.random(len(scene.instances)) < 0.5
    masks = np.stack([(ndimage.binary_dilation if g else ndimage.binary_erosion)(m, iterations=mask_px) if mask_px else m
                      for m, g in zip(scene.instances.masks, grow)]).reshape(scene.instances.masks.shape)
    inst = scene.instances
    return Instances(masks, inst.class_ids, inst.class_names, inst.confidences,
                     np.array([mask_box(m) for m in masks]).reshape(-1, 4)), depth.astype(np.float32)
