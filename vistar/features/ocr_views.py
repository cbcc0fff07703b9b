"""What the OCR detector's later looks see (`ocr_batched.read`): the image in grey, its thin strokes alone, or the
image less its stripes. The last two put the text on a plain page; each is None where the image is not the kind
the view is for (docs/metrics/tr_reading.md, Text over stripes); `striped` is the stripes view's test made cheaply,
for images whose first look was sure (A sure look over stripes)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

# The strokes look's image (`stroke_view`): its disc is `features.ocr.second_look_strokes` pixels wide
# at this long side; a pixel this many grey levels above its closing (or below its opening) is a stroke
STROKE_SIDE = 576
STROKE_LEVEL = 16
# `stripe_view`: edges within this many degrees of the stripes' direction count as the stripes'; the background
# colour is the median of runs this share of the image's long side along the stripes (longer than a text block
# is wide across them, so the text is never half a run)
STRIPE_BAND = 4
# ... and the direction is refined over the edges within this many degrees of it (thin stripes' edges are
# staircases: each step's edge leans up to 20 degrees off the stripe, their mean does not)
STRIPE_REFINE = 20
STRIPE_RUN = 1 / 3
# ... and a pixel this far (in its most different channel) from its stripe's colour is wholly text; nearer, it
# fades into the plain page
STRIPE_INK = 48.0
# `striped`: the long side the one-way edge share is measured at when the stripes look is not otherwise run
STRIPE_TEST_SIDE = 320


def view(img: np.ndarray, look: str, settings: Any) -> np.ndarray | None:
    """IMG's (BGR) view for LOOK ("grey", "strokes" or "stripes"), with `features.ocr` SETTINGS."""
    if look == "grey":
        return grey_view(img)
    if look == "strokes":
        return stroke_view(img, settings.second_look_strokes, settings.second_look_max_ink)
    if look == "stripes":
        return stripe_view(img, settings.second_look_stripes)
    raise ValueError(f"unknown look {look!r}")


def grey_view(img: np.ndarray) -> np.ndarray:
    """IMG (BGR) in grey, as three channels: colour stripes of similar brightness vanish."""
    import cv2

    return cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


def stroke_view(img: np.ndarray, strokes: int, max_ink: float) -> np.ndarray | None:
    """IMG's (BGR) thin strokes alone, dark on white (three channels), or None where the image is not flat
    between thin strokes.

    Over diagonal stripes the detector's map is patchy: words are cut and lines lost. A stripe is wider than a
    letter's stroke, so a grey closing and opening with a disc `strokes` pixels wide (at a STROKE_SIDE long side,
    scaled with the image) leave the stripes and remove the strokes: the black-hat (dark strokes) and top-hat
    (light strokes, outlines) together are the text alone. Over a photo or a fine texture they keep its detail
    too (coins become rings read "0"): where more than `max_ink` of the pixels are strokes (at least STROKE_LEVEL
    grey levels), or `strokes` is 0, None."""
    import cv2

    if strokes <= 0:
        return None
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    side = max(3, round(strokes * max(grey.shape) / STROKE_SIDE) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side))
    ink = np.maximum(cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, disc), cv2.morphologyEx(grey, cv2.MORPH_TOPHAT, disc))
    if not ink.max() > 0 or (ink >= STROKE_LEVEL).mean() > max_ink:
        return None
    return cv2.cvtColor(255 - cv2.normalize(ink, None, 0, 255, cv2.NORM_MINMAX), cv2.COLOR_GRAY2BGR)


def striped(img: np.ndarray, min_share: float) -> bool:
    """Whether at least `min_share` (> 0) of IMG's edge strength runs one way, seen at STRIPE_TEST_SIDE: the
    test `stripe_view` makes, cheaply, for images the stripes look is not otherwise run on."""
    import cv2

    if min_share <= 0:
        return False
    height, width = img.shape[:2]
    scale = min(1.0, STRIPE_TEST_SIDE / max(height, width))
    size = (max(1, round(width * scale)), max(1, round(height * scale)))   # a 2000x3 strip keeps a row
    small = cv2.resize(img, size, interpolation=cv2.INTER_AREA) if scale < 1 else img
    return _edge_share(*_edges(small))[2] >= min_share


def _edges(img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """IMG's x and y gradients, per pixel those of the channel with the strongest edge."""
    import cv2

    f = cv2.GaussianBlur(img.astype(np.float32), (0, 0), 1.0)   # a 3x3 Sobel alone leans a step edge by up to 10°
    gx, gy = cv2.Sobel(f, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(f, cv2.CV_32F, 0, 1, ksize=3)
    strongest = (gx * gx + gy * gy).argmax(axis=2)[..., None]   # per pixel, the channel with the strongest edge
    return np.take_along_axis(gx, strongest, 2)[..., 0], np.take_along_axis(gy, strongest, 2)[..., 0]


def _edge_share(gx: np.ndarray, gy: np.ndarray) -> tuple[np.ndarray, int, float]:
    """(each pixel's edge normal in degrees [0, 180); the commonest, in whole degrees; the share of edge strength
    within STRIPE_BAND of it)."""
    strength = np.hypot(gx, gy)
    normal = np.degrees(np.arctan2(gy, gx)) % 180
    hist = np.bincount(np.round(normal).astype(int).ravel() % 180, weights=strength.ravel(), minlength=180)
    around = np.convolve(np.concatenate([hist[-STRIPE_BAND:], hist, hist[:STRIPE_BAND]]), np.ones(2 * STRIPE_BAND + 1), "valid")
    mode = int(around.argmax())
    return normal, mode, float(around[mode] / max(strength.sum(), 1e-9))


def stripe_direction(img: np.ndarray) -> tuple[float, float]:
    """(the direction most of IMG's (BGR) edges run along, in degrees in [0, 180) clockwise from the x axis; the
    share of all edge strength within STRIPE_BAND degrees of it). Stripes give one direction and a share of
    0.6-0.96 with text over them; photos and textures 0.05-0.35 (tuning posters)."""
    gx, gy = _edges(img)
    normal, mode, share = _edge_share(gx, gy)
    # nearer: the structure tensor of the edges around the histogram's mode (to about a degree)
    near = np.abs((normal - mode + 90) % 180 - 90) <= STRIPE_REFINE
    jxx, jyy, jxy = (gx[near] ** 2).sum(), (gy[near] ** 2).sum(), (gx[near] * gy[near]).sum()
    along = (np.degrees(0.5 * np.arctan2(2 * jxy, jxx - jyy)) + 90) % 180
    return _sharpest_profile(img, float(along)) % 180, share


def _sharpest_profile(img: np.ndarray, along: float) -> float:
    """The direction within 1.5 degrees of ALONG at which IMG's mean colour across it varies most: lines along the
    true stripes each hold one colour, lines a little off mix them. A degree off, a run of STRIPE_RUN drifts by
    several pixels, more than a thin stripe is wide; this finds it to about 0.15 degree (tests/test_tr_reading.py)."""
    colours = img[::2, ::2].reshape(-1, img.shape[2]).astype(np.float64)   # every other pixel: as sharp, 4x faster
    ys, xs = np.mgrid[:img.shape[0]:2, :img.shape[1]:2]
    xs, ys, mean = xs.ravel(), ys.ravel(), colours.mean(axis=0)[:, None]
    span = 1.5
    for step in (0.25, 0.025):
        candidates = along + np.arange(-span, span + step / 2, step)
        spread = []
        for angle in np.radians(candidates):
            across = -xs * np.sin(angle) + ys * np.cos(angle)
            line = np.floor(across - across.min()).astype(np.int64)
            count = np.bincount(line)
            seen = count > 0
            means = np.stack([np.bincount(line, weights=c)[seen] for c in colours.T]) / count[seen]
            spread.append(float((((means - mean) ** 2) * count[seen]).sum()))
        along, span = float(candidates[int(np.argmax(spread))]), step
    return along


OUTSIDE = 1e6   # a colour no pixel is near: the page's colour where a run lies wholly outside the image
# a larger image's stripes view is made at this long side and scaled back: the detector sees the view at 1.5 x its
# 512 px side anyway, and the work grows with the pixels (0.4 s at 576 px, 5 s at RapidOCR's 2000 px)
STRIPE_SIDE = 1024


def stripe_view(img: np.ndarray, min_share: float) -> np.ndarray | None:
    """IMG (BGR) with its stripes replaced by one plain colour and its text as drawn, or None where the image
    is not striped (less than `min_share` of its edge strength along one direction, `stripe_direction`; 0: never).

    Stripes as thin as a letter's strokes defeat `stroke_view`, but along its direction a stripe keeps its colour
    while text does not. The image is turned so the stripes run along its rows; each row's background is the
    median colour of runs STRIPE_RUN of the image long (text is a short part of such a run), and a pixel's ink
    is its distance to the nearest background of its row and the rows beside it (a stripe's edge is a pixel off
    after the turn). Text keeps its own colours (an outlined letter keeps its outline and fill apart, which an ink
    map drawn dark on white merges), on the stripes' median colour. Over STRIPE_SIDE, at that side and scaled back."""
    import cv2

    if min_share <= 0:
        return None
    height, width = img.shape[:2]
    if max(height, width) > STRIPE_SIDE:
        scale = STRIPE_SIDE / max(height, width)
        # nearest keeps the stripes' edges hard: an averaged edge is a blend of two colours no run's median holds
        small = cv2.resize(img, (max(1, round(width * scale)), max(1, round(height * scale))), interpolation=cv2.INTER_NEAREST)
        view = stripe_view(small, min_share)
        return None if view is None else cv2.resize(view, (width, height), interpolation=cv2.INTER_LINEAR)
    along, share = stripe_direction(img)
    if share < min_share:
        return None
    side = int(np.ceil(np.hypot(height, width))) + 2
    turn = cv2.getRotationMatrix2D((width / 2, height / 2), along, 1.0)
    turn[:, 2] += (side / 2 - width / 2, side / 2 - height / 2)
    turned = cv2.warpAffine(img, turn, (side, side), flags=cv2.INTER_NEAREST).astype(np.float32)
    inside = cv2.warpAffine(np.ones((height, width), np.uint8), turn, (side, side), flags=cv2.INTER_NEAREST) > 0
    run = max(16, round(STRIPE_RUN * max(height, width)))
    runs = -(-side // run)
    colours = np.pad(np.where(inside[..., None], turned, np.nan), ((0, 0), (0, runs * run - side), (0, 0)),
                     constant_values=np.nan).reshape(side, runs, run, 3)
    with warnings.catch_warnings():   # runs wholly outside the image have no colour: no ink there
        warnings.simplefilter("ignore", RuntimeWarning)
        page = np.repeat(np.nanmedian(colours, axis=2), run, axis=1)[:, :side]
    far = np.nan_to_num(page, nan=OUTSIDE)
    ink = np.full((side, side), OUTSIDE, np.float32)
    for shift in (-1, 0, 1):
        apart = np.abs(turned - np.roll(far, shift, axis=0))
        ink = np.minimum(ink, np.maximum(np.maximum(apart[..., 0], apart[..., 1]), apart[..., 2]))
    ink[~inside | (ink >= OUTSIDE / 2)] = 0
    ink = cv2.warpAffine(ink, turn, (width, height), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    ink = np.clip(ink, 0, 255).astype(np.uint8)
    if not ink.max() > 0:
        return None
    plain = np.nanmedian(np.where(inside[..., None], page, np.nan).reshape(-1, 3), axis=0)
    text = np.clip(ink.astype(np.float32) / STRIPE_INK, 0, 1)[..., None]
    return (text * img + (1 - text) * plain).astype(np.uint8)

