"""What a solid rests on, seen from above: PSC's reading of a contact in view on a top face.

Seen from above, a ball resting on a horizontal face touches it out of sight, beneath itself; a ball sunk into the
face meets it along an intersection curve in view. Both contacts are continuous in depth. How far the ball stands
above the face's plane says which, but that height, read as inverse depth, grows with the camera's elevation for
both (version 4 read it raw). So the elevation is read from the face object's vertical face against its top (where
it shows none, from the top's foreshortening checked against the ball's own depth bulge: a long top's is no
square's), the ball's circle from its upper outline (which no contact touches), and each of its pixels, measured
against the top's plane in rows of that plane (scale and shift of relative depth cancel), gives how high its centre
stands: elevation-free.
Masks and depth are both unsure at the boundary (a depth network blurs it, a mask is off by a pixel or two): the
plane fit leaves out the face within MARGIN of the solid, and the ball is read more than MARGIN inside.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import ndimage

_SQUARE = np.ones((3, 3), bool)
MIN_SHARE = 0.5   # the solid sits on the face: at least this share of its columns has the face just beneath
TOP_SHARE = 0.25  # ... and this share the face's top (a round solid before its front face is no ball on the top)
MAX_LIFT = 2.0    # a ball whose centre reads this many radii above the face does not sit on it (a wrong plane)
MAX_SPREAD = 0.1   # ... or whose pixels disagree on it by this many radii (quartiles; tuning balls: 99 % under 0.05)
ROUNDNESS = 0.085  # a ball's pixel outline keeps its circle's centre within this many radii (median; tuning: under 0.08)
PRIOR_ELEVATION = np.radians(30.0)   # the bulge fit's elevation is pulled toward this one ...
PRIOR_WEIGHT = 0.001                 # ... this hard (per pixel, in the fit's units of radii squared)
AGREE = np.radians(16.0)             # the face's elevation is kept when within this of the bulge's, ...
FACE_BAND = np.radians((18.0, 42.0))  # ... clipped into this band (tuning, square and long tops)
TOP_SPAN = 0.25   # the top's ring fixes its own plane only where its pixels spread this far across rows (px, std)
MAX_BULGE = np.radians(80.0)   # a bulge that needs a camera this high is no ball on this plane (tuning balls: < 74°)


def face_plane(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int, width: int) -> np.ndarray | None:
    """(a, b, c) of depth ≈ a·column + b·row + c over FACE pixels MARGIN+1 to MARGIN+WIDTH pixels from SOLID
    (Chebyshev), refitted without the pixels off the fit by more than 3× the median (another face of the same
    object). None with fewer than 6 such pixels."""
    return _plane(_ring(solid, face, margin, width), depth)


def _ring(solid: np.ndarray, face: np.ndarray, margin: int, width: int) -> np.ndarray:
    """FACE pixels MARGIN+1 to MARGIN+WIDTH pixels from SOLID (Chebyshev)."""
    near = ndimage.binary_dilation(solid, _SQUARE, iterations=margin)
    ring: np.ndarray = ndimage.binary_dilation(near, _SQUARE, iterations=width) & ~near & face
    return ring


def _placed(part: np.ndarray, window: tuple[slice, slice], shape: tuple[int, ...]) -> np.ndarray:
    """PART, computed in WINDOW, back in an image of SHAPE (False elsewhere): the fits read the whole image's
    depth in its coordinates."""
    whole = np.zeros(shape, bool)
    whole[window] = part
    return whole


def _plane(pixels: np.ndarray, depth: np.ndarray, min_span: float = 0.0) -> np.ndarray | None:
    """(a, b, c) of depth ≈ a·column + b·row + c over PIXELS, fitted three times, each refit without the pixels off the
    previous fit by more than 3× the median (another face). Fitted about the pixels' mean: where they leave a slope barely
    determined (one or two rows), least squares' answer about the image's origin moved with a crop. None with
    fewer than 6 pixels, or when the last fit's pixels spread less than MIN_SPAN px (standard deviation across
    their narrowest direction)."""
    if pixels.sum() < 6:
        return None
    rows, cols = np.nonzero(pixels)
    centre = np.array([cols.mean(), rows.mean()])
    spots = np.stack([cols, rows], 1) - centre
    design = np.column_stack([spots, np.ones(len(rows))])
    values = depth[rows, cols]
    keep = np.ones(len(values), bool)
    for _ in range(3):
        fitted = keep
        coef = np.linalg.lstsq(design[fitted], values[fitted], rcond=None)[0]
        off = np.abs(design @ coef - values)
        keep = off <= max(3 * float(np.median(off)), 1e-12)
    if min_span > 0 and _span(spots[fitted]) < min_span:
        return None
    return np.array([coef[0], coef[1], coef[2] - coef[:2] @ centre], np.float64)


def _span(spots: np.ndarray) -> float:
    """The standard deviation of points SPOTS (n x 2) across their narrowest direction (0 for one line)."""
    return float(np.sqrt(max(0.0, np.linalg.eigvalsh(np.cov(spots.T, bias=True))[0]))) if len(spots) > 1 else 0.0


def face_parts(face: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FACE's object split into its top (inverse depth growing toward the image bottom: seen from above) and its
    sides (falling: a vertical face seen from above), by the sign of the row derivative between two face pixels,
    each eroded by a pixel (a blurred crease between them). A low block seen from above shows little top and much
    front: a ring around the solid reaches the front, and a plane fitted across both is neither."""
    rows, cols = np.nonzero(face)
    if rows.size == 0:
        return face.copy(), face.copy()
    window = (slice(max(0, rows.min() - 2), rows.max() + 3), slice(max(0, cols.min() - 2), cols.max() + 3))
    box, values = face[window], depth[window]   # the face's box: cheap on large images, the same parts
    slope = np.zeros(values.shape)
    both = box[1:-1] & box[:-2] & box[2:]
    slope[1:-1][both] = (values[2:] - values[:-2])[both]
    top, sides = (_placed(ndimage.binary_erosion(part, _SQUARE), window, face.shape) for part in (slope > 0, slope < 0))
    return top, sides


def sides_elevation(sides: np.ndarray, depth: np.ndarray, top: np.ndarray) -> float | None:
    """The camera's elevation e (radians) from a vertical face of the object beside the TOP plane (a, b, c): one row
    down the top, inverse depth rises by b ∝ cot e·k; one row down a vertical face it falls by ∝ tan e·k (k the
    scale of relative depth, the same for both; any yaw of the face), so tan² e = −(side's b) / (top's b). None
    with fewer than 6 SIDES pixels or no fall."""
    plane = _plane(sides, depth)
    ratio = None if plane is None else -plane[1] / top[1]
    return None if ratio is None or ratio <= 0 else float(np.arctan(np.sqrt(ratio)))


def _beneath(solid: np.ndarray, face: np.ndarray, reach: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SOLID's columns, the lowest row in each, and which of the REACH rows below it lie on FACE (reach x columns)."""
    cols = np.flatnonzero(solid.any(0))
    height = solid.shape[0]
    lowest = height - 1 - np.argmax(solid[::-1, cols], axis=0)
    window = lowest[None, :] + np.arange(1, reach + 1)[:, None]
    inside = window < height
    below = np.zeros(window.shape, bool)
    below[inside] = face[window[inside], np.broadcast_to(cols, window.shape)[inside]]
    return cols, lowest, below


def _around(solid: np.ndarray, margin: int) -> tuple[slice, slice]:
    """The window the readings near SOLID need: its box grown by 3·MARGIN + 4 (cheap on large images)."""
    rows, cols = np.nonzero(solid)
    pad = 3 * margin + 4
    return (slice(max(0, rows.min() - pad), rows.max() + pad + 1), slice(max(0, cols.min() - pad), cols.max() + pad + 1))


class Seat(NamedTuple):
    """What every reading of a SOLID on a FACE (a ball's sink, a cube's, a rim's height) starts from, fitted once per
    pair (`seat`): SOLID's outline circle (outline_circle), the box around it the readings work in (`window`),
    FACE's plane near it fitted in that box's coordinates (sits_on), and the plane of FACE's top with its sides
    (top_plane; only for a SOLID at least 3 columns wide, which the readings that use it need)."""

    circle: tuple[float, float, float] | None
    window: tuple[slice, slice]
    plane: np.ndarray | None
    top: tuple[np.ndarray, np.ndarray] | None


def seat(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int) -> Seat | None:
    """The fits SOLID's readings on FACE share; None for an empty SOLID (nothing to read)."""
    if not solid.any():
        return None
    window = _around(solid, margin)
    plane = sits_on(solid[window], face[window], depth[window], margin)
    wide = np.count_nonzero(solid.any(0)) >= 3
    return Seat(outline_circle(solid), window, plane, top_plane(solid, face, depth, margin, window, plane) if wide else None)


def sits_on(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int) -> np.ndarray | None:
    """FACE's plane (face_plane, ring MARGIN + 1 wide) when SOLID sits on FACE seen from above, else None: FACE
    lies within 2·MARGIN + 1 rows beneath at least MIN_SHARE of SOLID's columns, there is enough face to fit, and
    its inverse depth grows toward the image bottom (a wall's does not: nothing rests on it)."""
    cols, _, below = _beneath(solid, face, 2 * margin + 1)
    if below.any(0).sum() < max(1, MIN_SHARE * cols.size):
        return None
    plane = face_plane(solid, face, depth, margin, margin + 1)
    return None if plane is None or plane[1] <= 0 else plane


def rim_height(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int, fitted: Seat) -> float | None:
    """Median inverse depth of SOLID's lower rim above FACE's plane under it (> 0: nearer than the face), read
    MARGIN to 2·MARGIN rows above the boundary in the central half of the columns where FACE lies just below
    SOLID (version 4's reading, kept for solids that are not balls). None when SOLID does not sit on FACE
    (FITTED's plane: sits_on)."""
    plane = fitted.plane
    if plane is None:
        return None
    solid, face, depth = solid[fitted.window], face[fitted.window], depth[fitted.window]
    cols, lowest, below = _beneath(solid, face, 2 * margin + 1)
    on_face = np.flatnonzero(below.any(0))
    quarter = on_face.size // 4
    on_face = on_face[quarter:on_face.size - quarter]
    boundary = lowest[on_face] + 0.5 * (1 + np.argmax(below[:, on_face], axis=0))   # between the two masks' edges
    heights = []
    for col, edge in zip(cols[on_face], boundary):
        rows = np.arange(int(np.ceil(edge - 2 * margin)), int(np.floor(edge - margin)) + 1)
        rows = rows[(rows >= 0) & solid[np.clip(rows, 0, solid.shape[0] - 1), col]]
        heights.append(depth[rows, col] - (plane[0] * col + plane[1] * rows + plane[2]))
    values = np.concatenate(heights) if heights else np.zeros(0)
    return float(np.median(values)) if values.size else None


def outline_circle(solid: np.ndarray) -> tuple[float, float, float] | None:
    """(column, row, radius) of the circle SOLID's upper outline draws: radius half its width (a ball sunk into a
    face seen from above keeps its widest row above the face), centre below its top outline by the circle's chord.
    A mask grown or shrunk evenly keeps the centre. None under 3 columns wide, or when the upper outline is not a
    circle's: the centre it gives, column by column over 90 % of the width, departs from the median by more than
    ROUNDNESS radii (median): a box or a cylinder, not a ball."""
    cols = np.flatnonzero(solid.any(0))
    if cols.size < 3:
        return None
    radius = (cols[-1] - cols[0] + 1) / 2
    centre_col = (cols[0] + cols[-1]) / 2
    upper = cols[np.abs(cols - centre_col) <= 0.9 * radius]
    if upper.size == 0:   # no column near the middle (parts at both ends): no outline to read
        return None
    centres = np.argmax(solid[:, upper], axis=0) - 0.5 + np.sqrt(radius ** 2 - (upper - centre_col) ** 2)
    centre_row = float(np.median(centres))
    if np.median(np.abs(centres - centre_row)) > ROUNDNESS * radius:
        return None
    return float(centre_col), centre_row, float(radius)


def face_elevation(face: np.ndarray, depth: np.ndarray, plane: np.ndarray, tolerance: float) -> float | None:
    """The camera's elevation above FACE (radians), from its foreshortening: a square top seen from elevation e is
    sin e as tall as it is wide in the image. The top is FACE's pixels within TOLERANCE of PLANE (its other faces
    are not). None with fewer than 6 such pixels."""
    rows, cols = np.nonzero(face)
    on = np.abs(depth[rows, cols] - (plane[0] * cols + plane[1] * rows + plane[2])) <= tolerance
    if on.sum() < 6:
        return None
    tall, wide = np.ptp(rows[on]) + 1, np.ptp(cols[on]) + 1
    return float(np.arcsin(min(1.0, tall / wide)))


def bulge_elevation(raised: np.ndarray, bulge: np.ndarray) -> float:
    """The camera's elevation from a ball's own depth: a pixel's height above the face in rows of the plane's
    slope, plus its row offset from the centre (RAISED, radii), is h/cos e + tan e·BULGE (BULGE = √(1 − x² − t²)),
    linear in h/cos e and tan e. Least squares fits both, tan e pulled toward tan PRIOR_ELEVATION with weight
    PRIOR_WEIGHT per pixel: alone the fit is exact on exact depth but a blurred outline flattens the bulge."""
    spread = bulge - bulge.mean()
    slope = (float(np.mean(spread * (raised - raised.mean()))) + PRIOR_WEIGHT * np.tan(PRIOR_ELEVATION))
    return float(np.arctan(slope / (float(np.mean(spread ** 2)) + PRIOR_WEIGHT)))


def checked_elevation(face: float, bulge: float) -> float:
    """The elevation a ball is read with: the FACE's (taken as a square's), clipped into FACE_BAND, where it
    lies within AGREE of the ball's BULGE fit, else the bulge's. A long top's foreshortening, read as a
    square's, can be 20-40 deg off; the bulge is noisier but not fooled by the top's shape."""
    kept = float(np.clip(face, *FACE_BAND))
    return kept if abs(kept - bulge) <= AGREE else bulge


def top_plane(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int, window: tuple[slice, slice],
              plane: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """(the plane of FACE's top near SOLID, FACE's sides more than 2·MARGIN from SOLID) when SOLID sits on FACE
    (PLANE, sits_on's fit in WINDOW around SOLID: the plane is fitted near the solid, the face's extent read whole)
    with the face's top (face_parts) beneath at least TOP_SHARE of its columns, else None. The plane is refitted on
    the ring's top pixels where they spread TOP_SPAN across rows, else sits_on's is kept."""
    if plane is None:
        return None
    top, left = window[0].start, window[1].start
    plane = np.array([plane[0], plane[1], plane[2] - plane[0] * left - plane[1] * top])
    upper, sides = face_parts(face, depth)
    cols, _, below = _beneath(solid, upper, 2 * margin + 1)
    if below.any(0).sum() < max(1, TOP_SHARE * cols.size):   # on the top, not before the object's front
        return None
    ring = _ring(solid[window], upper[window], margin, margin + 1)   # the ring's pixels on the top only
    own = _plane(_placed(ring, window, solid.shape), depth, TOP_SPAN)   # too thin a ring: version 6's plane
    plane = own if own is not None and own[1] > 0 else plane
    near = _placed(ndimage.binary_dilation(solid[window], _SQUARE, iterations=2 * margin), window, solid.shape)
    return plane, sides & ~near


def sink_depth(solid: np.ndarray, face: np.ndarray, depth: np.ndarray, margin: int, tolerance: float,
               fitted: Seat) -> float | None:
    """How deep SOLID, read as a ball, is sunk into FACE seen from above, in units of its radius: 0 resting on it,
    0.5 sunk to half its radius. None when SOLID does not sit on FACE (sits_on), the circle or the elevation
    cannot be read, the centre reads more than MAX_LIFT radii above the face or the ball's bulge asks for a camera
    above MAX_BULGE (floating: the plane is another face's, as for a ball at a block's front face whose top face
    lies in the ring), or the pixels' readings of it spread over more than MAX_SPREAD radii between their
    quartiles (no sphere: a cylinder's round top outline), or the face's top (face_parts) lies beneath under a
    quarter of its columns (TOP_SHARE: a round solid before the object's front face). The plane is refitted on the
    ring's top pixels; the elevation e is read from the object's vertical faces (sides_elevation), or where it
    shows none from the top's foreshortening checked against the ball's own bulge (checked_elevation).

    A ball of radius R px centred (c, r) at h·radius above the face, seen from elevation e: its pixel at (c, r) +
    R·(x, t) lies (h − t·cos e + √(1 − x² − t²)·sin e)·radius above the face, and (orthographic) its inverse depth
    exceeds the face plane's there by R·(h − t·cos e + …)/cos e rows of the plane's slope (the plane's inverse depth
    that many rows further down: scale and shift of relative depth cancel). So each pixel gives h; the median over the solid's pixels more than
    MARGIN inside its outline (a depth network blurs the outline) is kept, and 1 − h returned. The circle and the
    top's plane are FITTED's."""
    if fitted.circle is None or fitted.top is None:
        return None
    plane, sides = fitted.top
    col, row, radius = fitted.circle
    window = fitted.window   # the solid lies 3·margin + 4 inside it (or at the image's edge): same erosion
    rows, cols = np.nonzero(_placed(ndimage.binary_erosion(solid[window], _SQUARE, iterations=margin), window, solid.shape))
    x, t = (cols - col) / radius, (rows - row) / radius
    front = 1.0 - x ** 2 - t ** 2
    if not (front > 0).any():
        return None
    rows, cols, t, front = rows[front > 0], cols[front > 0], t[front > 0], front[front > 0]
    above = (depth[rows, cols] - (plane[0] * cols + plane[1] * rows + plane[2])) / plane[1] / radius
    bulge = bulge_elevation(above + t, np.sqrt(front))
    if bulge > MAX_BULGE:
        return None
    elevation = sides_elevation(sides, depth, plane)
    if elevation is None:   # no vertical face in view: the top's foreshortening, checked against the bulge
        seen = face_elevation(face, depth, plane, tolerance)
        if seen is None:
            return None
        elevation = checked_elevation(seen, bulge)
    cos, sin = np.cos(elevation), np.sin(elevation)
    lifts = above * cos + t * cos - np.sqrt(front) * sin
    spread = np.subtract(*np.percentile(lifts, [75, 25]))
    lift = float(np.median(lifts))
    return None if lift > MAX_LIFT or spread > MAX_SPREAD else 1.0 - lift
