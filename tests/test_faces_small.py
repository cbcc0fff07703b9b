"""Small faces: crowds of real portraits whose faces are 3-4 % of the image side (missed by the whole-image pass)
are found by the tile pass, and face-free photos stay face-free. Scenes are built here from scikit-image's
astronaut and camera and matplotlib's grace_hopper, on backgrounds and at sizes the benchmark does not use."""
import numpy as np
import pytest
from matplotlib import cbook
from PIL import Image
from skimage import data

from vistar.api import StageContext, StageInput
from vistar.engine.params import metric_params
from vistar.features import faces, pose
from vistar.features.faces import MediaPipeFaceDetector, _starts
from vistar.metrics.cpa import METRIC
from vistar.ontology import Ontology

ONTO = Ontology.load()

# face boxes (x0, y0, x1, y1) MediaPipe's full-range model finds on the full-size photos
PORTRAITS = [("astronaut", (174, 68, 278, 172)), ("hopper", (166, 128, 366, 329)), ("camera", (200, 123, 276, 199))]


def rgb(a) -> np.ndarray:
    a = np.asarray(a)
    return np.ascontiguousarray(np.stack([a] * 3, -1) if a.ndim == 2 else a[..., :3])


def photo(name: str) -> np.ndarray:
    if name == "hopper":
        return np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB"))
    return rgb(getattr(data, name)())


def resize(a: np.ndarray, width: float, height: float) -> np.ndarray:
    return np.asarray(Image.fromarray(a).resize((round(width), round(height)), Image.LANCZOS))


def crowd(side: int, fraction: float, per_side: int, background: np.ndarray):
    """PER_SIDE x PER_SIDE portraits, mirrored every other one, each face FRACTION of SIDE wide; image, face boxes."""
    canvas, boxes = background.copy(), []
    pitch = side // per_side
    for k in range(per_side * per_side):
        name, (x0, y0, x1, y1) = PORTRAITS[k % len(PORTRAITS)]
        image = photo(name)
        if k % 2:
            image, (x0, x1) = np.ascontiguousarray(image[:, ::-1]), (image.shape[1] - x1, image.shape[1] - x0)
        s = fraction * side / (x1 - x0)
        small = resize(image, image.shape[1] * s, image.shape[0] * s)
        x, y = (k % per_side) * pitch + (k * 37) % max(1, pitch - small.shape[1]), (k // per_side) * pitch
        canvas[y:y + small.shape[0], x:x + small.shape[1]] = small
        boxes.append((x0 * s + x, y0 * s + y, x1 * s + x, y1 * s + y))
    return canvas, boxes


def found(detections, boxes) -> int:
    """Face boxes with a detection centred inside them whose own box holds the face's centre (one each)."""
    hits, used = 0, set()
    for t in boxes:
        for j, d in enumerate(detections):
            cx, cy, tx, ty = (d[0] + d[2]) / 2, (d[1] + d[3]) / 2, (t[0] + t[2]) / 2, (t[1] + t[3]) / 2
            if j not in used and t[0] <= cx <= t[2] and t[1] <= cy <= t[3] and d[0] <= tx <= d[2] and d[1] <= ty <= d[3]:
                used.add(j)
                hits += 1
                break
    return hits


@pytest.fixture(scope="module")
def detectors():
    params = ONTO.data["features"]["faces"]
    return MediaPipeFaceDetector(tiles=0), MediaPipeFaceDetector(
        1, params["min_detection_confidence"], params["tiles"], params["tile_overlap"], params["tile_min_side"],
        params["max_tiles"], params["verify_context"], params["verify_score"])


SCENES = {
    "3x3 at 3 % of 900 px on brick": (900, 0.03, 3, lambda s: resize(rgb(data.brick()), s, s)),
    "3x3 at 4 % of 640 px on a blurred rocket": (640, 0.04, 3, lambda s: resize(resize(data.rocket(), 80, 80), s, s)),
}


@pytest.mark.parametrize("name", SCENES)
def test_crowd_faces_missed_by_the_whole_image_are_found_by_tiles(detectors, name):
    side, fraction, per_side, background = SCENES[name]
    image, boxes = crowd(side, fraction, per_side, background(side))
    before, after = detectors
    assert found([f.box for f in before(image)], boxes) <= 1             # the whole-image pass misses them
    detections = [f.box for f in after(image)]
    assert found(detections, boxes) >= len(boxes) - 1
    assert len(detections) == found(detections, boxes)                  # nothing found that is not a face


FACE_FREE = ["hubble_deep_field", "page", "brick", "grass", "gravel", "rocket", "coffee", "chelsea"]


@pytest.mark.parametrize("name", FACE_FREE)
def test_face_free_photos_stay_face_free_with_the_tile_pass(detectors, name):
    image = rgb(getattr(data, name)())
    scale = 1024 / max(image.shape[:2])
    image = resize(image, image.shape[1] * scale, image.shape[0] * scale)
    assert detectors[1](image) == []


def test_the_close_up_check_is_what_rejects_texture_faces(detectors, monkeypatch):
    # tiles of the Hubble deep field hold blobs the detector scores like small faces; both models' close-ups reject them
    image = rgb(data.hubble_deep_field())
    detector = detectors[1]
    assert detector(image) == []
    monkeypatch.setattr(detector, "_confirmed", lambda image, box: True)
    assert len(detector(image)) >= 1


def test_tiles_cover_the_image_and_small_images_skip_the_pass(detectors, monkeypatch):
    assert _starts(1024, 320, 240) == [0, 240, 480, 704]
    assert _starts(300, 320, 240) == [0]
    detector = detectors[1]
    calls = []
    original = detector._detect

    def counted(image, model=None):
        calls.append(image.shape[:2])
        return original(image, model)

    monkeypatch.setattr(detector, "_detect", counted)
    # the whole image and each window are searched by both face models (two calls), each tile by one
    detector(np.full((180, 180, 3), 128, np.uint8))          # tiles of 57 px < tile_min_side: whole image only
    assert calls == [(180, 180)] * 2
    calls.clear()
    detector(np.full((512, 512, 3), 128, np.uint8))          # 4 x 4 tiles of 160 px
    assert calls[:2] == [(512, 512)] * 2 and calls[2:] == [(160, 160)] * 16
    calls.clear()
    detector(np.full((512, 1536, 3), 128, np.uint8))         # 3:1: whole image, 5 windows, tiles grown to <= 40
    tiles = calls[12:]
    assert calls[2:12] == [(512, 512)] * 10 and 16 < len(tiles) <= ONTO.data["features"]["faces"]["max_tiles"]
    assert len(set(tiles)) == 1 and 160 < tiles[0][0] < 512


def test_stage_counts_a_crowd_of_small_faces():
    image, _ = crowd(900, 0.03, 3, resize(rgb(data.brick()), 900, 900))
    ctx = StageContext(features=ONTO.data["features"], model_paths={"fer-mini-xception": "/dev/null/absent",
                                                                  "ssd-mobilenet-v2-coco": "/dev/null/absent"})
    item = StageInput(image, None, {}, {})
    (result,) = faces.STAGE.compute([item], ctx)
    item.deps["faces"] = result
    (people,) = pose.STAGE.compute([item], ctx)
    details = METRIC.fn({"faces": result, "pose": people}, {"count": 9}, metric_params(ONTO, "CPA"), None).details
    assert len(result.faces) >= 8 and details["n_detected"] >= 8 and details["s_count"] >= 8 / 9
