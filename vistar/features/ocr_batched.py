"""The OCR pipeline, for one image or a batch: RapidOCR's steps called one by one, so that the detector can look
twice (`read`) and a GPU batch runs in few session calls.

A first look runs RapidOCR's detector and recogniser. Where that look was unsure — the detector's probability
map is patchy (over diagonal stripes it sees text faintly and drops whole lines) or a box it found was not read
(two lines run together into one box) — the detector looks again at 1.5 times its size, at the grey image,
where the image is flat between thin strokes (stripes), at the strokes alone, and where its edges run one way
(stripes of any width), at the image less its stripes; the lines of the looks are merged (`merge_readings`,
the views in `ocr_views`). A striped image whose first look was sure gets the stripes look too, which may only
add lines: a sure map over stripes can hold no box for a lone glyph. Every line is read a second time, its crop
trimmed and stretched, for the marks the first reading loses (`ocr_second_reading`); a box no wider than high (a lone
glyph) is read a second time upright in a square crop (`ocr_glyphs`). Last, a lone plain bar (a closing `I`) that no
look boxed or that the recogniser read `1` is read from its shape (`ocr_bars`). The CPU path calls this per image.

Batching (`--device cuda` with `features.ocr.provider: cuda`): RapidOCR scores one image per call: one detector
run per image, then its text lines through the recogniser in small groups. On a GPU that leaves the device idle
between tiny launches. Here the detector runs once per distinct input shape of the batch (a T2I model writes one
size, so usually once per batch): images are not padded to a shared size, because padding changes what the
detector's convolutions see near the edges (boxes moved by up to 3 px in a trial), while a stack of same-shape
tensors is the single-image computation repeated. Each image's probability map is post-processed alone.
Recognition (and the optional orientation classifier) then runs once over the text lines of the whole batch,
RapidOCR's recogniser grouping them by aspect ratio across images. Everything else (resizing, vertical padding,
cropping, mapping boxes back, filtering empty lines) is RapidOCR's own code, called in its order.

A line's recogniser group, hence the width it is padded to, depends on the other lines of the batch, so results
equal the single-image path within a tolerance (tests/test_ocr_batched.py: same text on rendered posters, box
corners within 1 px, confidences within 0.02), not bit for bit. On the CPU the stage keeps the single-image path:
CPU scores do not depend on the batch size.
"""
from __future__ import annotations

import copy
import logging
import math
from dataclasses import replace
from typing import Any

import numpy as np

from ..api import OcrLine, OcrResult
from . import ocr_steps
from .ocr_bars import read_bars
from .ocr_glyphs import reread_glyphs
from .ocr_second_reading import read_again
from .ocr_steps import RapidBackend
from .ocr_views import striped, view

# A lone short line ("7" under a poster) gets a weaker detector response (box score 0.47, a lone "6" 0.24) than
# words: boxes down to FAINT_BOX_SCORE are read too (a lone glyph's upright, ocr_glyphs) and kept when the recogniser
# reads them at FAINT_MIN_CONFIDENCE or more.
FAINT_BOX_SCORE = 0.2
FAINT_MIN_CONFIDENCE = 0.9


def ocr_batch(backend: RapidBackend, images: list[np.ndarray]) -> list[OcrResult | Exception]:
    """OCR results for IMAGES (RGB), in order; an image that fails gets its exception, the others their result."""
    try:
        return read(backend, images)
    except Exception:   # a batch the runtime refuses (e.g. out of device memory): each image alone, as on the CPU
        return [ocr_steps.read_one(backend, image) for image in images]


def read(backend: RapidBackend, images: list[np.ndarray]) -> list[OcrResult | Exception]:
    """A first look at every image, then second looks (`_look` with `again`) at the images where the first was
    unsure: its detector map is patchy (`uncertainty` above `features.ocr.second_look`) or a box it found was not
    read (no text, or confidence below 0.5), or it read nothing. The detector looks again at the grey image, then, where the image is
    flat between thin strokes (`stroke_view`), at the strokes alone, then, where it is striped (`stripe_view`),
    at the image less its stripes; each reading is merged into what the looks before it read (`merge_readings`),
    so a line either look finds is kept. With `stripes_when_sure`, every other striped image (`striped`) gets the
    stripes look too, its lines merged as additions only. Then, with `plain_bars`, the plain bars none of the
    looks read (`ocr_bars.read_bars`). The single-image path is this with one image."""
    settings = backend.settings
    first = _look(backend, images)
    results = [result for result, _ in first]
    read_ok = [k for k, (result, _) in enumerate(first) if not isinstance(result, Exception)]
    redo = [k for k in read_ok if first[k][1] > settings.second_look]
    for again in [look for look, on in (("grey", True), ("strokes", settings.second_look_strokes > 0),
                                        ("stripes", settings.second_look_stripes > 0)) if on]:
        todo = redo
        if again == "stripes" and settings.stripes_when_sure:
            # over stripes the first map can be sure and still hold no box for a lone glyph (a closing `I`)
            unsure = set(redo)
            todo = sorted(unsure | {k for k in read_ok if k not in unsure and striped(images[k], settings.second_look_stripes)})
        if not todo:
            continue
        for k, (second, _) in zip(todo, _look(backend, [images[k] for k in todo], again)):
            if not isinstance(second, Exception):
                # a sure first look keeps its readings: the stripes look only adds lines it has no rival for
                merged = merge_readings(results[k].lines, second.lines, adds_only=k not in redo)
                results[k] = replace(results[k], lines=merged)
    if settings.plain_bars:   # after every look: a bar is what none of them read
        for k in read_ok:
            results[k] = replace(results[k], lines=_with_bars(images[k], results[k].lines))
    return results


def _with_bars(image: np.ndarray, lines: tuple[OcrLine, ...]) -> tuple[OcrLine, ...]:
    """`read_bars`, or LINES as read where it fails: the bars are an addition, and the image's reading stands
    without them (a failure here must not fail the image, or on the GPU path send its whole batch round again)."""
    try:
        return read_bars(image, lines)
    except Exception as exc:   # noqa: BLE001 - any error of the addition leaves the reading as it was
        logging.getLogger(__name__).warning("plain bars not read on a %s image: %s: %s", image.shape, type(exc).__name__, exc)
        return lines


def uncertainty(prob: np.ndarray) -> float:
    """How unsure the detector's text-probability map is: pixels between 0.1 and 0.6 per pixel above 0.6. Clear
    text on a plain or photographic background gives 0.10-0.2; text over stripes, where the detector sees text
    patchily and misses lines, 0.25-3 (tuning posters, docs/metrics/tr_reading.md)."""
    return float(((prob > 0.1) & (prob < 0.6)).sum() / ((prob >= 0.6).sum() + 1))


def _look(backend: RapidBackend, images: list[np.ndarray], again: str = "") -> list[tuple[OcrResult | Exception, float]]:
    """(result, how unsure the look was) per image: the detector map's `uncertainty`, or infinity when a box it
    found went unread or it read nothing. `again` ("grey", "strokes" or "stripes"): the detector sees that view of the image (`_detect`) at 1.5
    times the detector size (a second scale parts lines a coarse map ran together); the recogniser still reads
    the colour crops."""
    from rapidocr.ch_ppocr_det import TextDetOutput
    from rapidocr.ch_ppocr_rec import TextRecOutput

    engine = backend.engine
    staged = [ocr_steps.stage_image(engine, image) for image in images]
    settings = backend.settings
    detections = _detect(engine, [s for s in staged if not isinstance(s, Exception)], again, settings)
    crops = [c for d in detections.values() for c in d[1]]
    crops = ocr_steps.upright(engine, crops)   # once: both readings of a line see it the same way up
    texts, scores, words = ocr_steps.recognise(engine, crops, turned=True)
    if settings.second_reading:
        texts = read_again(engine, crops, texts)
    pictures = {id(item): item[1] for item in staged if not isinstance(item, Exception)}
    owners = [(pictures[key], box) for key, found in detections.items() if found[1] for box in found[0]]
    reread_glyphs(engine, [picture for picture, _ in owners], [box for _, box in owners], texts, scores)
    out: list[tuple[OcrResult | Exception, float]] = []
    start = 0
    for image, item in zip(images, staged):
        height, width = image.shape[:2]
        if isinstance(item, Exception):
            out.append((ocr_steps.failure(backend.name, image, item), 0.0))
            continue
        ori, img, record = item
        boxes, mine, unsure, strong = detections[id(item)]
        n = len(mine)
        txts, confs, wrds = texts[start:start + n], scores[start:start + n], words[start:start + n]
        start += n
        # a faint box counts only when read surely; a box the detector was sure of but the recogniser could not
        # read makes the look unsure, and so does reading nothing: over some stripes the detector's map is blank
        keep = [k for k in range(n) if k < strong or confs[k] >= FAINT_MIN_CONFIDENCE]
        if any(not txts[k].strip() or confs[k] < 0.5 for k in range(strong)):
            unsure = math.inf
        if not keep:
            out.append((OcrResult((), width, height, backend.alphabet), math.inf))
            continue
        rec = TextRecOutput(imgs=[mine[k] for k in keep], txts=tuple(txts[k] for k in keep),
                            scores=[confs[k] for k in keep], word_results=tuple(wrds[k] for k in keep))
        try:
            result = engine.build_final_output(ori, TextDetOutput(img, boxes[keep], [1.0] * len(keep)), ocr_steps.no_cls(), rec,
                                               [mine[k] for k in keep], record)
        except Exception as exc:   # as the single-image path: this image fails, the batch goes on
            out.append((ocr_steps.failure(backend.name, image, exc), unsure))
            continue
        out.append((OcrResult(tuple(ocr_steps.lines_of(result)), width, height, backend.alphabet), unsure))
    return out


def _detect(engine, staged: list, again: str = "", settings: Any = None) -> dict:
    """{id(staged item): (boxes, crops, uncertainty, how many boxes are sure)}: the boxes RapidOCR keeps (box score
    >= 0.5), then the faint ones (score >= FAINT_BOX_SCORE), one detector call per distinct input shape of the
    batch; `again`: the detector's input is the image's view for that look (`ocr_views.view` with `features.ocr`
    SETTINGS; no box where it has none) at 1.5 times the detector size (crops stay in colour)."""
    from rapidocr.ch_ppocr_det.utils import DetPreProcess

    detector = engine._load_det_model()
    prepare = (DetPreProcess(round(detector.limit_side_len * 1.5), detector.limit_type, detector.mean, detector.std)
               if again else detector.get_preprocess())
    views = [view(img, again, settings) if again else img for _, img, _ in staged]
    tensors = [None if seen is None else prepare(seen) for seen in views]
    faint = copy.copy(detector.postprocess_op)
    faint.box_thresh = FAINT_BOX_SCORE
    found = {id(item): (None, [], 0.0, 0) for item in staged}
    groups: dict[tuple, list] = {}
    for item, t in zip(staged, tensors):
        if t is not None:
            groups.setdefault(t.shape, []).append((item, t))
    for group in groups.values():
        preds = detector.session(np.concatenate([t for _, t in group]))
        for k, (item, _) in enumerate(group):
            img = item[1]
            # one post-process at the faint threshold: RapidOCR's filters are per box, so its own (sure) boxes are
            # the ones scoring at least its threshold
            candidates, box_scores = faint(preds[k:k + 1], img.shape[:2])
            sure = [b for b, score in zip(candidates, box_scores) if score >= detector.postprocess_op.box_thresh]
            weak = [b for b, score in zip(candidates, box_scores) if score < detector.postprocess_op.box_thresh]
            boxes = detector.sorted_boxes(np.asarray(sure)) if sure else np.zeros((0, 4, 2), np.float32)
            every = np.concatenate([boxes, np.asarray(weak, np.float32).reshape(-1, 4, 2)]).astype(np.float32)
            crops = engine.crop_text_regions(img, every) if len(every) else []
            found[id(item)] = (every, crops, uncertainty(preds[k, 0]), len(boxes))
    return found


def merge_readings(first: tuple[OcrLine, ...], second: tuple[OcrLine, ...], min_overlap: float = 0.3,
                   adds_only: bool = False) -> tuple[OcrLine, ...]:
    """The lines of two looks at one image. Lines of one look that overlap lines of the other (by `min_overlap` of
    the smaller box) are rival readings of the same text: each group of rivals keeps the look that read more,
    surely (sum of confidence × letters), the first on a tie (`adds_only`: always the first); a line only one look
    found is kept. So a line the first look missed is added, two lines it ran together are replaced by the second
    look's two, and nothing is read twice."""
    from shapely.geometry import Polygon

    lines = list(first) + list(second)
    shapes = [Polygon(line.box).buffer(0) for line in lines]
    group = list(range(len(lines)))

    def root(k: int) -> int:
        while group[k] != k:
            k = group[k]
        return k

    for i in range(len(first)):
        for j in range(len(first), len(lines)):
            smaller = min(shapes[i].area, shapes[j].area)
            if smaller > 0 and shapes[i].intersection(shapes[j]).area >= min_overlap * smaller:
                group[root(j)] = root(i)
    members: dict[int, list[int]] = {}
    for k in range(len(lines)):
        members.setdefault(root(k), []).append(k)
    keep = set()
    for ks in members.values():
        mine, theirs = [k for k in ks if k < len(first)], [k for k in ks if k >= len(first)]
        keep.update(mine if (adds_only and mine) or _read_mass(lines, mine) >= _read_mass(lines, theirs) else theirs)
    return tuple(line for k, line in enumerate(lines) if k in keep)


def _read_mass(lines: list[OcrLine], ks: list[int]) -> float:
    return sum(lines[k].confidence * len(lines[k].text.replace(" ", "")) for k in ks)
