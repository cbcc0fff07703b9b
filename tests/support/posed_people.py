"""People as pose and face features built by hand (image pixels, y down), for the CPA metric and posture tests."""
import numpy as np

from vistar.api import Face, FaceResult, PosePerson, PoseResult
from vistar.engine.params import metric_params
from vistar.metrics.cpa import METRIC
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt


def body(**points):
    """33 landmarks, all unseen except the named ones (x, y), which are fully visible."""
    idx = dict(nose=0, ls=11, rs=12, le=13, re=14, lw=15, rw=16, lh=23, rh=24, lk=25, rk=26, la=27, ra=28)
    lm = np.zeros((33, 4))
    for name, (x, y) in points.items():
        lm[idx[name]] = (x, y, 0.0, 1.0)
    return lm


# a standing person facing the camera: torso 100 px, legs straight down, arms hanging
STAND = dict(nose=(100, 60), ls=(120, 100), rs=(80, 100), le=(125, 150), re=(75, 150), lw=(127, 195), rw=(73, 195),
             lh=(115, 200), rh=(85, 200), lk=(116, 290), rk=(84, 290), la=(117, 380), ra=(83, 380))


PARAMS = metric_params(Ontology.load(), "CPA")


def shifted(points: dict, dx: float) -> np.ndarray:
    lm = body(**points)
    lm[:, 0] += dx
    return lm


SIT = {**STAND, "lk": (200, 205), "rk": (170, 205), "la": (200, 295), "ra": (170, 295)}


def face(x, label):
    probs = {k: 0.02 for k in ("angry", "disgust", "fear", "happy", "sad", "surprise", "neutral")}
    probs[label] = 0.88
    return Face((x + 80, 40, x + 120, 80), 0.9, (), probs)


def two_people():
    """Left: standing and happy; right (x + 400): sitting and sad."""
    poses = PoseResult((PosePerson(shifted(STAND, 0), 0), PosePerson(shifted(SIT, 400), 1)))
    return {"pose": poses, "faces": FaceResult((face(0, "happy"), face(400, "sad")))}


def score(features, controls, role="SA"):
    prompt = parse_prompt(f"[{role}|CPA] people")
    return METRIC.fn(features, controls, PARAMS, prompt)
