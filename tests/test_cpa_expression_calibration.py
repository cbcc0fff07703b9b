"""Neutral faces read as neutral: the CPA metric's neutral prior (`neutral_weight`) on hand-made probabilities and
on the real FER2013 network with faces from ultralytics' zidane.jpg (a calm coach beside a shouting one)."""
import numpy as np
import pytest

from tests.support.fetched_weights import fetched_expression_weights
from vistar.api import Face
from vistar.features.expression import LABELS, ExpressionClassifier
from vistar.features.faces import MediaPipeFaceDetector, face_crop
from vistar.metrics.cpa import calibrated, expression_similarity
from vistar.ontology import Ontology
from vistar.validity.cpa import PHOTOS, load

WEIGHT = Ontology.load().metric_params("CPA")["neutral_weight"]


def probs(**given):
    return {label: given.get(label, 0.0) for label in LABELS}


def test_prior_turns_a_calm_face_read_as_angry_into_neutral():
    calm = probs(angry=0.45, sad=0.36, neutral=0.14, fear=0.05)
    assert max(calm, key=calm.get) == "angry"
    out = calibrated(calm, 5.0)
    assert out["neutral"] == pytest.approx(0.70 / 1.56) and out["angry"] == pytest.approx(0.45 / 1.56)
    assert expression_similarity("neutral", Face((0, 0, 1, 1), 1.0, (), calm), 5.0) == 1.0
    assert expression_similarity("neutral", Face((0, 0, 1, 1), 1.0, (), calm), 1.0) == pytest.approx(0.14 / 0.45)


def test_prior_keeps_a_clear_expression():
    shouting = probs(angry=0.69, neutral=0.10, sad=0.09, fear=0.12)
    assert max(calibrated(shouting, WEIGHT).items(), key=lambda kv: kv[1])[0] == "angry"
    assert sum(calibrated(shouting, WEIGHT).values()) == pytest.approx(1.0)


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    return ExpressionClassifier.from_path(fetched_expression_weights(tmp_path_factory))


@pytest.mark.slow
def test_real_calm_face_is_neutral_after_calibration(classifier):
    photo = next(p for p in PHOTOS if p.name == "zidane")
    try:
        image = load(photo)
    except OSError as exc:
        pytest.skip(f"zidane photo unavailable ({exc})")
    zidane, ancelotti = photo.people
    faces = sorted(MediaPipeFaceDetector()(image), key=lambda f: f.box[0])
    assert len(faces) == 2
    rows = classifier(np.stack([face_crop(image, f.box) for f in faces]))
    shouting, calm = ({label: float(p) for label, p in zip(LABELS, row)} for row in rows)
    assert max(calm, key=calm.get) != "neutral"                       # the raw network: sad
    assert max(calibrated(calm, WEIGHT).items(), key=lambda kv: kv[1])[0] == "neutral"
    assert max(calibrated(shouting, WEIGHT).items(), key=lambda kv: kv[1])[0] == "angry"
