"""Reading the ink: a text line re-read from a clean crop (its ink dark on white, everything else white).

Text in a generated poster is mostly one colour. Over a busy backdrop — diagonal stripes of two colours — the
recogniser sees stripe edges through the letters and drops marks or word spaces. The ink is the colour that is
common inside the crop but rare on its border (the crop's border is backdrop): the crop's pixels are split into
`CLUSTERS` colour clusters (k-means in Lab, initialised deterministically), and a cluster that covers at
most `MAX_BORDER_SHARE` of the border and touches the backdrop least (an outlined letter's fill, not its outline) is
taken as ink (docs/metrics/tr_reading.md, Reading the ink).
"""
from __future__ import annotations

import numpy as np

CLUSTERS = 5
MAX_BORDER_SHARE = 0.1     # of the crop's border pixels: a cluster above this is backdrop
MIN_INK_SHARE = 0.03       # of the crop's pixels: fewer is no text (noise, a thin anti-aliased rim)
ITERATIONS = 10


def ink_mask(crop: np.ndarray, clusters: int = CLUSTERS) -> np.ndarray | None:
    """The pixels of `crop` (H×W×3, uint8, BGR as RapidOCR crops) in the ink's colour cluster, or None when no
    cluster is rare on the border and common inside (no ink colour stands out)."""
    import cv2

    height, width = crop.shape[:2]
    if height < 4 or width < 4:
        return None
    lab = cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)
    labels = _kmeans(lab, clusters).reshape(height, width)
    border = np.concatenate([labels[0], labels[-1], labels[1:-1, 0], labels[1:-1, -1]])
    border_share = np.bincount(border, minlength=clusters) / border.size
    share = np.bincount(labels.ravel(), minlength=clusters) / labels.size
    candidates = [c for c in range(clusters) if border_share[c] <= MAX_BORDER_SHARE and share[c] >= MIN_INK_SHARE]
    if not candidates:
        return None
    backdrop = np.isin(labels, [c for c in range(clusters) if c not in candidates])
    near = _touching(backdrop)
    # an outlined letter gives two candidates, its fill and its outline: the fill is the one that does not touch
    # the backdrop
    return labels == min(candidates, key=lambda c: (near[labels == c].mean(), -share[c]))


def _touching(mask: np.ndarray) -> np.ndarray:
    """The pixels with a 4-neighbour in `mask` (or in it)."""
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    out[:, 1:] |= mask[:, :-1]
    out[:, :-1] |= mask[:, 1:]
    return out


def clean_crop(crop: np.ndarray) -> np.ndarray | None:
    """`crop` redrawn as its ink (black) on white, or None when `ink_mask` finds no ink."""
    mask = ink_mask(crop)
    if mask is None:
        return None
    clean = np.full(crop.shape, 255, np.uint8)
    clean[mask] = 0
    return clean


def _kmeans(points: np.ndarray, k: int) -> np.ndarray:
    """Cluster labels of `points` (N×3): Lloyd's iterations from farthest-point centres (the first is the point
    farthest from the mean), so the same crop always gives the same clusters."""
    centres = [points[np.argmax(((points - points.mean(0)) ** 2).sum(1))]]
    for _ in range(1, k):
        nearest = np.min([((points - c) ** 2).sum(1) for c in centres], axis=0)
        centres.append(points[np.argmax(nearest)])
    centre = np.stack(centres)
    for _ in range(ITERATIONS):
        labels = ((points[:, None, :] - centre[None]) ** 2).sum(2).argmin(1)
        for c in range(k):
            members = points[labels == c]
            if len(members):
                centre[c] = members.mean(0)
    return ((points[:, None, :] - centre[None]) ** 2).sum(2).argmin(1)


def reread_ink(engine, crops: list[np.ndarray], texts: list, scores: list, words: list, below: float) -> None:
    """Each crop read below confidence `below` is read again clean (`clean_crop`); the clean reading replaces the
    first (in place) when the recogniser is surer of it. `below` 0: never."""
    from .ocr_steps import recognise

    todo = [k for k, score in enumerate(scores) if score < below]
    cleaned = [(k, clean_crop(crops[k])) for k in todo]
    cleaned = [(k, clean) for k, clean in cleaned if clean is not None]
    if not cleaned:
        return
    again = recognise(engine, [clean for _, clean in cleaned])
    for (k, _), text, score, word in zip(cleaned, *again):
        if score > scores[k] and str(text).strip():
            texts[k], scores[k], words[k] = text, score, word
