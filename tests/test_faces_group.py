"""People counting beyond single portraits: real photos side by side (group shots of 3:1 to 6:1), a small
person in a large frame, and face-free photos. Ground truth = the number of portraits placed."""
import numpy as np
import pytest
from matplotlib import cbook
from PIL import Image
from skimage import data

from vistar.api import StageContext, StageInput
from vistar.engine.params import metric_params
from vistar.features import faces, pose
from vistar.features.faces import MediaPipeFaceDetector, cut_by_inner_edge, square_windows
from vistar.metrics.cpa import METRIC
from vistar.ontology import Ontology

ONTO = Ontology.load()
PARAMS = metric_params(ONTO, "CPA")


def fit(image: np.ndarray, height: int) -> np.ndarray:
    return np.asarray(Image.fromarray(np.ascontiguousarray(image)).resize((round(image.shape[1] * height / image.shape[0]), height)))


def row(images, height: int) -> np.ndarray:
    return np.ascontiguousarray(np.concatenate([fit(i, height) for i in images], 1))


def portraits() -> list[np.ndarray]:
    hopper = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB"))
    people = [data.astronaut(), hopper, np.stack([data.camera()] * 3, -1)]
    return people + [p[:, ::-1] for p in people]


def small_in_frame() -> np.ndarray:
    canvas = np.full((1024, 1024, 3), 200, np.uint8)
    small = fit(portraits()[1], 256)
    canvas[384:640, 400:400 + small.shape[1]] = small
    return canvas


@pytest.fixture(scope="module")
def scenes():
    people = portraits()
    images = {"three, 512 high": (row(people[:3], 512), 3), "six, 256 high": (row(people, 256), 6),
              "small in 1024²": (small_in_frame(), 1),
              "face-free": (row([data.coffee(), data.chelsea(), data.rocket(), np.stack([data.brick()] * 3, -1),
                                 data.hubble_deep_field()], 384), 0)}
    ctx = StageContext(features=ONTO.data["features"], model_paths={"fer-mini-xception": "/dev/null/absent",
                                                                  "ssd-mobilenet-v2-coco": "/dev/null/absent"})
    inputs = [StageInput(image, None, {}, {}) for image, _ in images.values()]
    found = faces.STAGE.compute(inputs, ctx)
    for item, f in zip(inputs, found):
        item.deps["faces"] = f
    poses = pose.STAGE.compute(inputs, ctx)
    return {name: ({"faces": f, "pose": p}, n) for (name, (_, n)), f, p in zip(images.items(), found, poses)}


def test_square_windows_cover_the_long_side_with_half_overlap():
    assert square_windows(1461, 512) == [0, 256, 512, 768, 949]
    assert square_windows(512, 512) == [0]


def test_only_window_edges_inside_the_image_cut_a_face():
    left, right, middle = (0.5, 100, 80, 200), (430, 100, 511.5, 200), (100, 100, 200, 200)
    assert cut_by_inner_edge(left, 256, 0, 512, 1461, 512)         # the window's left edge is inside the image
    assert not cut_by_inner_edge(left, 0, 0, 512, 1461, 512)       # the image's own left edge
    assert cut_by_inner_edge(right, 768, 0, 512, 1461, 512)        # 768 + 512 < 1461
    assert not cut_by_inner_edge(right, 949, 0, 512, 1461, 512)    # flush with the image's right edge
    assert not cut_by_inner_edge(middle, 256, 0, 512, 1461, 512)
    assert cut_by_inner_edge((100, 0.5, 200, 80), 0, 256, 512, 512, 1461)   # a tall image: the top edge


def test_wide_group_shots_count_every_face():
    # a 2.9:1 row of three portraits: the whole image alone finds 1 of the 3 faces (letterboxed to a square)
    image = row(portraits()[:3], 512)
    detector = MediaPipeFaceDetector()
    assert len(detector._detect(image)) < 3
    assert len(detector(image)) == 3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["three, 512 high", "six, 256 high"])
def test_count_follows_the_people_in_a_group_shot(scenes, name):
    feats, n = scenes[name]
    assert len(feats["faces"].faces) == n and len(feats["pose"].people) == n
    score = {c: METRIC.fn(feats, {"count": c}, PARAMS, None).score for c in (n - 1, n, n + 1)}
    assert score[n] == 1.0 and score[n - 1] < 1.0 and score[n + 1] < 1.0


@pytest.mark.slow
def test_small_person_gets_a_pose_from_a_crop_around_the_face(scenes):
    # the whole-image pose pass misses a 256 px portrait in a 1024² frame; its face's body crop finds it
    feats, _ = scenes["small in 1024²"]
    assert len(feats["faces"].faces) == 1 and len(feats["pose"].people) == 1
    assert METRIC.fn(feats, {"count": 1, "posture": "upright"}, PARAMS, None).score == 1.0


@pytest.mark.slow
def test_face_free_photos_side_by_side_have_no_faces(scenes):
    feats, _ = scenes["face-free"]
    assert feats["faces"].faces == ()
