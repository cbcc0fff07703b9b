"""Real photos (one person each): the faces and pose stages find one person with a face and a plausible
posture, and CPA counts them (people from pose+faces: the `instances` and person detectors' weights are left out;
tests/test_cpa_persons.py covers the person detector)."""
import numpy as np
import pytest
from matplotlib import cbook
from PIL import Image
from skimage import data

from vistar.api import StageContext, StageInput
from vistar.engine.params import metric_params
from vistar.features import faces, pose
from vistar.metrics.cpa import METRIC
from vistar.ontology import Ontology

ONTO = Ontology.load()
PHOTOS = {
    "grace_hopper": lambda: np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB")),
    "astronaut": data.astronaut,
    "camera": lambda: np.stack([data.camera()] * 3, -1),
}


@pytest.fixture(scope="module")
def features():
    # no expression weights needed here: prompts without expression= still get faces
    ctx = StageContext(features=ONTO.data["features"], model_paths={"fer-mini-xception": "/dev/null/absent",
                                                                  "ssd-mobilenet-v2-coco": "/dev/null/absent"})
    inputs = [StageInput(load(), None, {"count": 1}, {}) for load in PHOTOS.values()]
    found = faces.STAGE.compute(inputs, ctx)
    for item, f in zip(inputs, found):
        item.deps["faces"] = f
    poses = pose.STAGE.compute(inputs, ctx)
    return {name: {"faces": f, "pose": p} for name, f, p in zip(PHOTOS, found, poses)}


def _missing_weight(result):
    return result.expression_note is not None and "fer-mini-xception" in result.expression_note


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PHOTOS))
def test_one_person_with_a_face(features, name):
    feats = features[name]
    assert len(feats["faces"].faces) == 1 and feats["faces"].faces[0].score > 0.7
    assert _missing_weight(feats["faces"])
    assert len(feats["pose"].people) == 1
    res = METRIC.fn(feats, {"count": 1}, metric_params(ONTO, "CPA"), None)
    assert res.status == "ok" and res.details["s_count"] == 1.0 and res.details["person_source"] == "pose+faces"


def test_plausible_postures(features):
    from vistar.metrics.posture import classify

    labels = {name: classify(f["pose"].people[0].landmarks).labels for name, f in features.items()}
    assert labels["camera"][0] == "standing"            # the cameraman stands behind his tripod
    assert labels["grace_hopper"] == ("upright",)        # head-and-shoulders portraits: trunk upright, legs unseen
    assert labels["astronaut"] == ("upright",)


def test_face_lies_on_the_pose_head(features):
    for f in features.values():
        x0, y0, x1, y1 = f["faces"].faces[0].box
        nx, ny = f["pose"].people[0].landmarks[0, :2]
        assert x0 <= nx <= x1 and y0 <= ny <= y1


def test_person_detector_switched_off_counts_from_faces():
    features = {**ONTO.data["features"], "pose": {**ONTO.data["features"]["pose"], "person_model": None}}
    ctx = StageContext(features=features, model_paths={"fer-mini-xception": "/dev/null/absent"})
    item = StageInput(data.astronaut(), None, {"count": 1}, {})
    item.deps["faces"] = faces.STAGE.compute([item], ctx)[0]
    found = pose.STAGE.compute([item], ctx)[0]
    assert found.source == "faces" and found.note is None and len(found.people) == 1
