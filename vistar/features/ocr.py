"""OCR feature stage: recognised text lines with boxes and confidences, behind an interface (`ocr_steps.OcrBackend`).

The default backend is RapidOCR (PP-OCRv6 det/rec ONNX models ship inside its wheel, so it runs offline).
The stage keeps every line the recogniser returns (RapidOCR's own confidence cut is disabled): which
lines count is the TR metric's decision (`min_confidence`), so it can be tuned without re-running OCR.
Where the detector is unsure (text over stripes, lines run together) it looks a second time, at the grey image
and a finer scale, then at the text's strokes alone where the image is flat between them (stripes), then at the
image less its stripes where its edges run one way (ocr_views), and the readings are merged line by line
(ocr_batched.read, docs/metrics/tr_reading.md); a striped image gets that last look even where the detector was
sure, adding only lines it missed;
every line is read again, its crop trimmed and stretched, for the marks the first reading loses (ocr_second_reading);
a lone glyph is read again upright (ocr_glyphs); a lone plain bar, which no look boxes or the recogniser reads `1`, is
read from its shape (ocr_bars); RapidOCR's steps, called one by one, are in ocr_steps.
Speed/accuracy knobs come from the ontology's `features.ocr` section; docs/performance.md measures them.
"""
from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..api import FeatureStage, OcrLine, OcrResult, StageContext, StageInput
from ..models.provenance import record_loaded
from ..runtime.device import onnxruntime_provider, ran_on
from . import ocr_steps
from .ocr_batched import ocr_batch, read
from .ocr_openvino import OpenVinoSession, use_openvino
from .ocr_steps import Reading

# A class is kept as a character's alternative when its posterior reaches this share of the read class's (the
# lowest `metrics.TR.params.alt_prob` can then choose from; docs/metrics/tr.md, Recogniser doubt), at most 3 of them
ALT_FLOOR = 0.05
MAX_ALTERNATIVES = 3


@dataclass(frozen=True)
class OcrSettings:
    """`features.ocr`: what trades OCR speed for accuracy. Defaults: see `features.ocr` in the ontology."""

    threads: int = 1                 # onnxruntime intra-op threads per session
    det_limit_side: int = 512        # detector input size: the image is resized so that ...
    det_limit_type: Literal["max", "min"] = "max"   # ... its "max" side is at most / its "min" side at least det_limit_side
    use_cls: bool = False            # 180° text-orientation classifier (upside-down text only)
    rec_batch_size: int = 6          # text lines per recogniser call (lines are padded to the widest)
    # onnxruntime's CUDA provider on a --device cuda run when installed (else CPU, noted in run.json); "cpu": always
    # the CPU; "cuda": as auto, noted on a CPU run too
    provider: Literal["auto", "cpu", "cuda"] = "auto"
    space_prob: float = 0.1          # a word gap the greedy CTC decode left blank gets a space when p(space) reaches this
    runtime: Literal["onnxruntime", "openvino"] = "onnxruntime"   # "openvino": OpenVINO on the CPU (needed for bf16)
    precision: Literal["fp32", "bf16"] = "fp32"   # "bf16": OpenVINO bf16 inference (native on AVX512-BF16/AMX CPUs)
    second_look: float = 0.2         # detector-map uncertainty above which the detector looks again (grey, 1.5x); .inf: never
    second_look_strokes: int = 7     # ... then at the strokes alone (disc this wide at a 576 px side; 0: no strokes look) ...
    second_look_max_ink: float = 0.1   # ... when at most this share of the pixels are strokes (else no strokes look)
    second_look_stripes: float = 0.4   # ... then less its stripes, where this share of edge strength runs one way (0: never)
    stripes_when_sure: bool = True     # the stripes look also runs where the first look was sure (a striped image only)
    second_reading: bool = True        # every line read again trimmed and stretched; its marked letters become alternatives
    plain_bars: bool = True            # a lone plain bar (`I`) read from its shape: no look boxes it, the recogniser reads `1`

    def __post_init__(self) -> None:
        """What the field types cannot say; `vistar.api.parse` turns the ValueError into the run's refusal."""
        if self.threads < 1 or self.det_limit_side < 32 or self.rec_batch_size < 1:
            raise ValueError(f"threads and rec_batch_size must be >= 1, det_limit_side >= 32 ({self})")
        if not self.second_look >= 0.0:
            raise ValueError(f"second_look must be >= 0 (.inf: never), got {self.second_look!r}")
        if self.second_look_strokes < 0 or not 0.0 <= self.second_look_max_ink <= 1.0:
            raise ValueError(f"second_look_strokes must be >= 0 and second_look_max_ink in [0, 1] ({self})")
        if not 0.0 <= self.second_look_stripes <= 1.0:
            raise ValueError(f"second_look_stripes must be in [0, 1] (0: no stripes look), got {self.second_look_stripes!r}")
        if not 0.0 < self.space_prob <= 1.0:
            raise ValueError(f"space_prob must be in (0, 1], got {self.space_prob!r}")
        if self.runtime == "onnxruntime" and self.precision != "fp32":
            raise ValueError("precision: bf16 needs runtime: openvino (onnxruntime runs the OCR in fp32)")
        if self.runtime == "openvino" and self.provider == "cuda":
            raise ValueError("runtime: openvino runs on the CPU; use provider: cpu (or auto) with it")


class RapidOcrBackend:
    """RapidOCR on onnxruntime (or OpenVINO), pinned to `settings.threads` threads so latency is reproducible."""

    name = "rapidocr"

    def __init__(self, settings: OcrSettings = OcrSettings(), device: str = "cpu"):
        from rapidocr import RapidOCR

        self.settings = settings
        # OpenVINO replaces the sessions below with CPU ones: onnxruntime's provider choice is moot there
        self.provider, note = onnxruntime_provider("cpu" if settings.runtime == "openvino" else settings.provider, device)
        self.engine = RapidOCR(params={
            "Global.log_level": "error",
            "Global.text_score": 0.0,  # keep every line; the metric filters (and reports what it dropped)
            "Global.use_cls": settings.use_cls,
            "Det.limit_side_len": settings.det_limit_side,
            "Det.limit_type": settings.det_limit_type,
            "Rec.rec_batch_num": settings.rec_batch_size,
            "Cls.cls_batch_num": settings.rec_batch_size,
            "EngineConfig.onnxruntime.intra_op_num_threads": settings.threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            "EngineConfig.onnxruntime.use_cuda": self.provider == "CUDAExecutionProvider",
            # cuDNN's exhaustive search (RapidOCR's default) may pick other kernels on another run: not reproducible
            "EngineConfig.onnxruntime.cuda_ep_cfg.cudnn_conv_algo_search": "DEFAULT",
        })
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)  # "no text found" is a result here, not a warning
        recogniser = self.engine._load_rec_model()  # RapidOCR loads it lazily; load now to wrap its CTC decoder
        recogniser.postprocess_op = SpaceRestoringDecode(recogniser.postprocess_op, settings.space_prob)
        if settings.runtime == "openvino":
            use_openvino(self.engine, settings.threads, settings.precision)
        self.alphabet = frozenset(self.engine._load_rec_model().postprocess_op.character)
        parts = [self.engine._load_det_model(), self.engine._load_rec_model()]
        if settings.use_cls:
            parts.append(self.engine._load_cls_model())
        ran = set()
        for part in parts:  # what each session reports it runs on, not what was asked for
            session = part.session
            if isinstance(session, OpenVinoSession):
                onnx, runs_on, why = session.model_path, f"OpenVINO CPU {session.precision_used}", session.note
                extra = {"ops_by_precision": session.ops_by_precision}
                ran.add("CPUExecutionProvider")
            else:
                onnx, runs_on, extra = Path(session.session._model_path), session.session.get_providers()[0], {}
                why = note or (f"{self.provider} asked for; onnxruntime runs {runs_on}" if runs_on != self.provider else None)
                ran.add(runs_on)
            record_loaded(f"rapidocr/{onnx.stem}", onnx, provider=runs_on, **extra, **({"note": why} if why else {}))
        self.device = device if ran == {"CUDAExecutionProvider"} else "cpu"

    def __call__(self, image: np.ndarray) -> list[OcrLine]:
        [result] = read(self, [image])
        if isinstance(result, Exception):
            raise result.__cause__ or result
        return list(result.lines)


class SpaceRestoringDecode:
    """RapidOCR's greedy CTC decode, plus the word spaces it drops on busy backgrounds and the doubt it throws away.

    Greedy (best-path) decoding takes the arg-max class of every frame. Between two words the recogniser often
    splits its belief over the gap's frames — e.g. p(space) 0.50 and 0.48 on two frames, p(blank) the rest — so
    every frame's arg-max is blank and the space vanishes ("NIGHTMARKET"), although a space is the likelier
    reading of the gap. A gap between two emitted characters whose frames reach p(space) ≥ `space_prob` (0.1)
    gets its space back: on text over photos and textures the renders whose only error is a space fall from
    15.5 % to 3.5 % (docs/metrics/tr.md, benchmarks/bench_tr_validity.py). Text, confidence and everything else
    are RapidOCR's; only spaces are inserted. Each line's text comes back as a `Reading`, which also carries the
    classes the recogniser nearly read instead of each character (`alternatives`; TR, Recogniser doubt).
    """

    def __init__(self, inner, space_prob: float):
        self.inner, self.space_prob = inner, space_prob
        self.character = inner.character
        self.space = inner.dict.get(" ")

    def __call__(self, preds: np.ndarray, return_word_box: bool = False, **kwargs):
        lines, words = self.inner(preds, return_word_box, **kwargs)
        preds = np.asarray(preds)
        if return_word_box:  # word boxes index RapidOCR's own text: leave it untouched
            return lines, words
        return [(restore_spaces(preds[b], text, self.space, self.space_prob, self.character), conf)
                for b, (text, conf) in enumerate(lines)], words


def restore_spaces(probs: np.ndarray, text: str, space: int | None, space_prob: float, character,
                   alt_floor: float = ALT_FLOOR) -> str:
    """`text` (the greedy decode of `probs`, T×C softmax with blank = class 0) with a space inserted between two
    consecutive non-space characters wherever a frame between them has p(space) ≥ space_prob, as a `Reading`
    whose alternatives (`alternatives_of`) index the returned text; a decode not its own is returned as it is."""
    best = probs.argmax(1)
    keep = best != 0
    keep[1:] &= best[1:] != best[:-1]
    frames = np.flatnonzero(keep)
    chars = [character[i] for i in best[frames]]
    if "".join(chars) != text:  # not the decode we expected (another RapidOCR version): change nothing
        return text
    out, alternatives, rivals = [], [], alternatives_of(probs, frames, best, character, alt_floor)
    for k, (frame, char) in enumerate(zip(frames, chars)):
        if (space is not None and k and char != " " and chars[k - 1] != " " and not (_wide(char) or _wide(chars[k - 1]))
                and probs[frames[k - 1] + 1:frame, space].max(initial=0.0) >= space_prob):
            out.append(" ")
        alternatives += [(len(out), alt, share) for alt, share in rivals[k]]
        out.append(char)
    reading = Reading("".join(out))
    reading.alternatives = tuple(alternatives)
    return reading


def alternatives_of(probs: np.ndarray, frames: np.ndarray, best: np.ndarray, character,
                    alt_floor: float) -> list[list[tuple[str, float]]]:
    """For each character emitted at `frames`: the classes other than the one read (not blank, not a space) whose
    posterior, at its highest on the frames that emitted it (its run of frames with the same arg-max), reaches
    `alt_floor` of the read class's highest there: (class, share rounded to 3 places), surest first, at most
    `MAX_ALTERNATIVES`. A share is relative so that a character read unsurely still names its rivals."""
    if not len(frames):
        return []
    changes = np.append(np.flatnonzero(np.diff(best)) + 1, len(best))
    ends = changes[np.searchsorted(changes, frames, side="right")]
    peaks = np.stack([probs[start:end].max(0) for start, end in zip(frames, ends)])
    rows, read = np.arange(len(frames)), best[frames]
    top = np.maximum(peaks[rows, read], 1e-9)
    near = peaks >= alt_floor * top[:, None]
    near[:, 0] = near[rows, read] = False
    out = []
    for k in rows:
        found = [(character[c], round(float(peaks[k, c] / top[k]), 3)) for c in np.flatnonzero(near[k]) if character[c] != " "]
        out.append(sorted(found, key=lambda pair: -pair[1])[:MAX_ALTERNATIVES])
    return out


def _wide(char: str) -> bool:
    """CJK ideographs, kana, Hangul, full-width forms: scripts written without spaces between words, so a gap
    next to them is never a dropped word space."""
    return unicodedata.east_asian_width(char) in ("W", "F")


def _compute(batch: list[StageInput], ctx: StageContext) -> list[OcrResult | Exception]:
    settings = ctx.params("ocr", OcrSettings)
    backend = ctx.model(f"ocr:{settings}:{ctx.device}", lambda: RapidOcrBackend(settings, ctx.device))
    ran_on(ctx, "ocr", getattr(backend, "device", "cpu"))
    if getattr(backend, "device", "cpu") != "cpu" and len(batch) > 1:   # the GPU: few, large session calls
        return ocr_batch(backend, [item.image for item in batch])
    return [ocr_steps.read_one(backend, item.image) for item in batch]


def _key_params(params: dict[str, Any], device: str) -> dict[str, Any]:
    """`provider` as it resolves on DEVICE (row keys): `auto` on a CPU run hashes as the `cpu` it runs, as keys did
    before `auto` existed; OCR on onnxruntime's CUDA provider as `cuda` (its lines agree with the CPU's only within
    a tolerance, docs/performance.md)."""
    runtime = params.get("runtime", "onnxruntime")
    provider, _ = onnxruntime_provider("cpu" if runtime == "openvino" else str(params.get("provider", "auto")), device)
    ran = "cuda" if provider == "CUDAExecutionProvider" else "cpu"
    return {**params, "provider": ran} if "provider" in params or ran != "cpu" else params


STAGE = FeatureStage(name="ocr", version="rapidocr-3.10/15", compute=_compute, models=("rapidocr",),
                     params=OcrSettings, key_params=_key_params)
