"""RapidOCR's steps called one by one (shared by the two looks of `ocr_batched` and the glyph re-read of
`ocr_glyphs`), and the one-image path every backend takes (`read_one`)."""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..api import OcrLine, OcrResult


class OcrBackend(Protocol):
    """What the stage calls to read one image (RapidOcrBackend, or a stand-in in tests)."""

    name: str

    def __call__(self, image: np.ndarray) -> list[OcrLine]: ...


class RapidBackend(Protocol):
    """A backend whose RapidOCR engine the batched path drives step by step (features.ocr.RapidOcrBackend)."""

    name: str
    engine: Any
    settings: Any                      # features.ocr.OcrSettings
    alphabet: frozenset[str] | None


class Reading(str):
    """A line's decoded text with `alternatives` (OcrLine.alternatives): a str, so RapidOCR's own steps carry it."""

    alternatives: tuple[tuple[int, str, float], ...] = ()


def read_one(backend: OcrBackend, image: np.ndarray) -> OcrResult | Exception:
    """One image; a backend failure (e.g. RapidOCR cannot resize a 3000×20 strip) fails this image only."""
    height, width = image.shape[:2]
    try:
        return OcrResult(tuple(backend(image)), width, height, getattr(backend, "alphabet", None))
    except Exception as exc:
        return failure(backend.name, image, exc)


def failure(backend_name: str, image: np.ndarray, exc: Exception) -> Exception:
    """The error an image gets when OCR fails on it; its cause is kept for the single-image path to re-raise."""
    height, width = image.shape[:2]
    error = RuntimeError(f"OCR ({backend_name}) failed on this {width}×{height} image: {type(exc).__name__}: {exc}".rstrip(": "))
    error.__cause__ = exc   # the single-image path re-raises the cause, so its message is not wrapped twice
    return error


def stage_image(engine, image: np.ndarray):
    """(BGR original, detector-ready image, RapidOCR's op record), as `RapidOCR.__call__` prepares them."""
    import cv2
    from rapidocr.utils.process_img import apply_vertical_padding

    try:
        ori = engine.load_img(cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
        img, record = engine.preprocess_img(ori)
        if engine.cfg.Global.use_vertical_padding:
            img, record = apply_vertical_padding(img, record, engine.width_height_ratio, engine.min_height)
        else:
            record["padding_1"] = {"top": 0, "left": 0}
        return ori, img, record
    except Exception as exc:
        return exc


def upright(engine, crops: list[np.ndarray]) -> list[np.ndarray]:
    """CROPS as the recogniser is to read them: turned by 180° where the orientation classifier (`use_cls`) says so."""
    if engine.use_cls and crops:
        crops, _ = engine.cls_and_rotate(crops)
    return crops


def recognise(engine, crops: list[np.ndarray], turned: bool = False) -> tuple[list, list, list]:
    """Texts, confidences and word results of every text line of the batch, in input order; TURNED: the crops
    have been through `upright` already."""
    from rapidocr.ch_ppocr_rec import TextRecInput

    if not crops:
        return [], [], []
    if not turned:
        crops = upright(engine, crops)
    result = engine._load_rec_model()(TextRecInput(img=crops, return_word_box=engine.return_word_box))
    return list(result.txts), list(result.scores), list(result.word_results)


def no_cls() -> Any:
    from rapidocr.ch_ppocr_cls import TextClsOutput

    return TextClsOutput()


def lines_of(result: Any) -> list[OcrLine]:
    if getattr(result, "txts", None) is None or getattr(result, "boxes", None) is None:
        return []
    return [OcrLine(str(t), float(s), tuple((float(x), float(y)) for x, y in np.asarray(b).tolist()),
                    getattr(t, "alternatives", ()))
            for t, s, b in zip(result.txts, result.scores, result.boxes)]
