"""GC's `copies` cue: duplicated structure (the same object or patch repeated within one image), found as classic
copy-move forgery detection finds it (docs/metrics/gc.md).

Every textured block of the lightly blurred thumbnail is reduced to its residual after the best-fitting plane
(so that gradients and flat areas, which match anything, drop out) and normalised; blocks whose gradients all
run one way (edges, lines: they match along themselves) are dropped too. Each block is matched to its nearest
neighbours at least one block away; a match counts when it is near-perfect and clearly better than the best
match at any other offset (periodic textures match equally well at several). A copied region moves as a whole:
its matches share one offset and sit side by side, so the cue keeps the largest connected group of matches at
the most common offset. Value = the share of the image covered by that group's blocks (both ends), 0 when the
group has fewer than `min_pairs` matches.
"""
from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.spatial import cKDTree

NEIGHBOURS = 8      # nearest blocks examined per block (in the reduced space below)
DIMS = 8            # principal components the nearest-neighbour search runs in; matches are checked on whole blocks
QUERY_STRIDE = 2    # blocks matched from every 2nd row and column; every block can be a match
OFFSET_TOL = 1      # px: a copy resampled to the thumbnail lands on the grid within a pixel of one offset


def copy_move(image: np.ndarray, block: int, blur: float, min_residual: float, max_coherence: float,
              min_corr: float, margin: float, min_pairs: int) -> tuple[float, dict[str, Any]]:
    """Share of IMAGE (RGB thumbnail) covered by its largest copied region, with its offset (dy, dx) in pixels
    and the number of block matches that support it."""
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    if blur > 0:
        gray = np.asarray(cv2.GaussianBlur(gray, (0, 0), blur), np.float32)
    none: dict[str, Any] = {"matches": 0, "offset": [0, 0]}
    if min(gray.shape) < 2 * block:
        return 0.0, none
    residuals, ys, xs = _textured_blocks(gray, block, min_residual, max_coherence)
    if len(residuals) <= NEIGHBOURS:
        return 0.0, none
    i, j, dy, dx = _unique_matches(residuals, ys, xs, block, min_corr, margin)
    if len(i) == 0:
        return 0.0, none
    i, j, (oy, ox) = _largest_consistent_group(i, j, dy, dx, ys, xs, gray.shape)
    details = {"matches": int(len(i)), "offset": [oy, ox]}
    if len(i) < min_pairs:
        return 0.0, details
    covered = np.zeros(gray.shape, np.uint8)
    for y, x in zip(ys[np.concatenate([i, j])], xs[np.concatenate([i, j])]):
        covered[y:y + block, x:x + block] = 1
    return float(covered.mean()), details


def _textured_blocks(gray: np.ndarray, block: int, min_residual: float,
                     max_coherence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit residuals (block minus its best plane) of the blocks that are textured in two directions, with their
    top-left corners."""
    h, w = gray.shape
    ny, nx = h - block + 1, w - block + 1
    gx, gy = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    jxx, jyy, jxy = (cv2.boxFilter(a, -1, (block, block), anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)[:ny, :nx]
                     for a in (gx * gx, gy * gy, gx * gy))
    coherence = np.sqrt((jxx - jyy) ** 2 + 4 * jxy ** 2) / (jxx + jyy + 1e-6)
    ys, xs = np.nonzero(coherence < max_coherence)
    blocks = sliding_window_view(gray, (block, block))[ys, xs].reshape(len(ys), block * block).astype(np.float64)
    c = np.arange(block, dtype=np.float64) - (block - 1) / 2
    plane = np.stack([np.full(block * block, 1.0 / block), np.repeat(c, block), np.tile(c, block)])
    plane[1:] /= np.linalg.norm(plane[1:], axis=1, keepdims=True)
    residuals = blocks - (blocks @ plane.T) @ plane
    norm = np.linalg.norm(residuals, axis=1)
    keep = norm / block > min_residual      # RMS grey levels left after the plane
    return residuals[keep] / norm[keep, None], ys[keep], xs[keep]


def _unique_matches(residuals: np.ndarray, ys: np.ndarray, xs: np.ndarray, block: int, min_corr: float,
                    margin: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(query, match, dy, dx) for every query block whose best distant match correlates at least MIN_CORR and whose
    best match at any other offset leaves at least MARGIN times as much unexplained (1 - correlation)."""
    n = len(residuals)
    sample = residuals[np.linspace(0, n - 1, min(n, 2000)).astype(int)]
    _, _, vt = np.linalg.svd(sample - sample.mean(0), full_matrices=False)
    reduced = residuals @ vt[:DIMS].T
    q = np.flatnonzero((ys % QUERY_STRIDE == 0) & (xs % QUERY_STRIDE == 0))
    _, near = cKDTree(reduced).query(reduced[q], k=NEIGHBOURS)
    dy, dx = ys[near] - ys[q, None], xs[near] - xs[q, None]
    distant = (np.abs(dy) >= block) | (np.abs(dx) >= block)
    corr = np.where(distant, np.einsum("qkd,qd->qk", residuals[near], residuals[q]), -1.0)
    rows, best = np.arange(len(q)), corr.argmax(1)
    c1, bdy, bdx = corr[rows, best], dy[rows, best], dx[rows, best]
    elsewhere = distant & ((np.abs(dy - bdy[:, None]) > 2) | (np.abs(dx - bdx[:, None]) > 2))
    c2 = np.where(elsewhere, corr, -1.0).max(1)
    good = (c1 >= min_corr) & (1 - c2 >= margin * (1 - c1))
    return q[good], near[rows, best][good], bdy[good], bdx[good]


def _largest_consistent_group(i: np.ndarray, j: np.ndarray, dy: np.ndarray, dx: np.ndarray, ys: np.ndarray,
                              xs: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """The matches at the most common offset (within OFFSET_TOL), of those the largest group of neighbouring
    query blocks, and the offset."""
    h, w = shape
    flip = (dy < 0) | ((dy == 0) & (dx < 0))        # a pair found from either end counts at one offset
    i, j = np.where(flip, j, i), np.where(flip, i, j)
    dy, dx = np.abs(dy), np.where(flip, -dx, dx)
    votes = np.zeros((h + 1, 2 * w + 1), np.float32)
    np.add.at(votes, (dy, dx + w), 1)
    span = 2 * OFFSET_TOL + 1
    smoothed = cv2.boxFilter(votes, -1, (span, span), normalize=False, borderType=cv2.BORDER_CONSTANT)
    oy, ox = np.unravel_index(int(smoothed.argmax()), smoothed.shape)
    at = (np.abs(dy - oy) <= OFFSET_TOL) & (np.abs(dx + w - ox) <= OFFSET_TOL)
    i, j = i[at], j[at]
    seeds = np.zeros((h, w), np.uint8)
    seeds[ys[i], xs[i]] = 1
    grown = cv2.dilate(seeds, np.ones((2 * QUERY_STRIDE + 1,) * 2, np.uint8))
    _, labels = cv2.connectedComponents(grown, connectivity=8)
    group = labels[ys[i], xs[i]]
    largest = group == np.bincount(group).argmax()
    offset = np.median(dy[at][largest]), np.median(dx[at][largest])   # the vote window's centre can be a pixel off
    return i[largest], j[largest], (int(round(offset[0])), int(round(offset[1])))
