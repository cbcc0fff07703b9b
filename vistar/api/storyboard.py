"""What the storyboard stages give CSE: the panel layout, the subject in each panel, and their embeddings."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PanelLayout:
    """Panels of one image in reading order (row by row, left to right)."""

    boxes: np.ndarray          # (N, 4) int: x0, y0, x1, y1, end-exclusive pixels
    rows: int
    cols: int
    row_method: str            # "detected" | "grid"
    col_method: str

    @property
    def method(self) -> str:
        """"detected" when both axes came from the image, "grid" when neither did, else "partial"."""
        methods = {self.row_method, self.col_method}
        return methods.pop() if len(methods) == 1 else "partial"

    def __len__(self) -> int:
        return len(self.boxes)

    def crops(self, image: np.ndarray) -> list[np.ndarray]:
        return [image[y0:y1, x0:x1] for x0, y0, x1, y1 in self.boxes]


@dataclass(frozen=True)
class SubjectMasks:
    """The subject in each of the N panels of one image (reading order)."""

    found: np.ndarray             # (N,) bool
    boxes: np.ndarray             # (N, 4) float x0, y0, x1, y1 image pixels, clipped to the panel; NaN if not found
    scores: np.ndarray            # (N,) detection score, 0 if not found
    masks: np.ndarray             # (N, H, W) bool at image resolution, inside the panel only
    mask_source: tuple[str, ...]  # per panel: "sam", "box" (SAM mask empty) or "" (not found)


@dataclass(frozen=True)
class ClipEmbeddings:
    panel_vectors: np.ndarray   # (N, D) float32, projected image embeddings, panels in reading order
    text_vectors: np.ndarray    # (M, D) float32, projected text embeddings of the sub-prompts
    texts: tuple[str, ...]      # the M sub-prompts


@dataclass(frozen=True)
class SubjectEmbeddings:
    vectors: np.ndarray   # (N, D) float32; rows of panels without the subject are zero
    found: np.ndarray     # (N,) bool, panels where the subject was found (and has a non-empty mask)
