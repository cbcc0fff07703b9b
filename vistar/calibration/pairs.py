"""Human pairwise preferences: read `image_a,image_b,preferred[,angle,rater,role]` and attach the run's scores.

Images are named by their path relative to the run's IMAGES folder (the `image` column of the scores), by an
absolute path inside that folder, or by the image file's sha256. A bad line or an unknown image is reported
with its line number and left out; the other pairs are used.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pandas as pd

LABELS = {"a": 1, "b": -1, "tie": 0}
REQUIRED = ("image_a", "image_b", "preferred")
OPTIONAL = ("angle", "rater", "role")


class PairsError(ValueError):
    pass


@dataclass
class Pairs:
    frame: pd.DataFrame          # line, image_a, image_b, h (+1/−1/0), angle, rater, role
    problems: list[str] = field(default_factory=list)
    source: str = ""


def read_pairs(path: str | Path) -> Pairs:
    path = Path(path)
    try:
        data = path.read_bytes()
        text = data.decode("utf-8-sig")
    except OSError as exc:
        raise PairsError(f"{path}: cannot read pairs file: {exc}") from None
    except UnicodeDecodeError as exc:  # e.g. a spreadsheet's cp1252 export
        line = data.count(b"\n", 0, exc.start) + 1
        raise PairsError(f"{path}:{line}: byte 0x{data[exc.start]:02X} is not UTF-8 text; save the file as UTF-8") from None
    with io.StringIO(text, newline="") as fh:
        reader = csv.DictReader(fh)
        reader.fieldnames = [(f or "").strip().lower() for f in reader.fieldnames or []]  # `Image_A ` works too
        missing = [c for c in REQUIRED if c not in reader.fieldnames]
        if missing:
            raise PairsError(f"{path}: pairs CSV lacks column(s) {', '.join(missing)} (needs image_a,image_b,preferred; "
                             f"found: {', '.join(reader.fieldnames) or 'no header'})")
        rows, problems = [], []
        for raw in reader:
            line = reader.line_num  # the file's line, also after blank lines or quoted line breaks
            rec = {k: (v or "").strip() for k, v in raw.items() if k is not None}
            label = rec.get("preferred", "").lower()
            if label not in LABELS:
                problems.append(f"{path}:{line}: preferred must be a, b or tie, not '{rec.get('preferred', '')}'")
                continue
            if not rec.get("image_a") or not rec.get("image_b"):
                problems.append(f"{path}:{line}: image_a and image_b are required")
                continue
            if rec["image_a"] == rec["image_b"]:
                problems.append(f"{path}:{line}: an image compared with itself")
                continue
            rows.append({"line": line, "image_a": rec["image_a"], "image_b": rec["image_b"], "h": LABELS[label],
                         **{c: rec.get(c) or None for c in OPTIONAL}})
    frame = pd.DataFrame(rows, columns=["line", "image_a", "image_b", "h", *OPTIONAL])
    return Pairs(frame, problems, str(path))


def image_resolver(scores: pd.DataFrame, run_dir: str | Path):
    """A function mapping a pair's image reference to the run's `image` key (None when unknown).

    An absolute path is read relative to the run's image folder; a run merged from machines that mounted the
    folder at different paths lists each root (`vistar merge`), and each is tried."""
    known = set(scores["image"])
    by_sha = dict(zip(scores["image_sha256"], scores["image"]))
    roots = _image_roots(Path(run_dir) / "run.json")

    def resolve(ref: str) -> str | None:
        if ref in known:
            return ref
        if ref.lower() in by_sha:
            return by_sha[ref.lower()]
        posix = PurePosixPath(ref.replace("\\", "/"))
        candidates = [posix]
        if posix.is_absolute():
            candidates = [posix.relative_to(root) for root in roots if posix.is_relative_to(root)] + [posix]
        for candidate in candidates:
            norm = str(PurePosixPath(*[p for p in candidate.parts if p != "."])) if candidate.parts else ""
            if norm in known:
                return norm
        return None

    return resolve


def _image_roots(meta: Path) -> list[PurePosixPath]:
    try:
        images = json.loads(meta.read_text()).get("images")
    except (OSError, ValueError, AttributeError):
        return []
    images = images if isinstance(images, list) else [images]
    return [PurePosixPath(Path(root).as_posix()) for root in images if isinstance(root, str) and root]


def attach_images(pairs: Pairs, scores: pd.DataFrame, run_dir: str | Path, model_of: dict[str, str]) -> pd.DataFrame:
    """Pairs with image references replaced by run image keys, plus the model of each image (`model_of`, from
    the rows calibration uses, so it cannot come from a row that was set aside)."""
    resolve = image_resolver(scores, run_dir)
    frame = pairs.frame.copy()
    frame["image_a"] = [resolve(r) or f"?{r}" for r in frame["image_a"]]
    frame["image_b"] = [resolve(r) or f"?{r}" for r in frame["image_b"]]
    unknown = frame["image_a"].str.startswith("?") | frame["image_b"].str.startswith("?")
    for rec in frame[unknown].itertuples():
        refs = [r[1:] for r in (rec.image_a, rec.image_b) if r.startswith("?")]
        pairs.problems.append(f"{pairs.source}:{rec.line}: image(s) not in this run: {', '.join(refs)}")
    same = ~unknown & (frame["image_a"] == frame["image_b"])
    for rec in frame[same].itertuples():
        pairs.problems.append(f"{pairs.source}:{rec.line}: both sides name the same image ({rec.image_a})")
    frame = frame[~unknown & ~same].reset_index(drop=True)
    frame["model_a"] = frame["image_a"].map(model_of)
    frame["model_b"] = frame["image_b"].map(model_of)
    return frame
