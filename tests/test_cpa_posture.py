"""Posture rules on hand-made landmark sets (image pixels, y down), and parsing of `posture=` text."""
import pytest

from tests.support.posed_people import STAND, body
from vistar.metrics.posture import ARM_LABELS, BODY_LABELS, COMPATIBLE, classify, label_credit, parse_posture, posture_similarity
from vistar.ontology import Ontology

SYNONYMS = Ontology.load().metric_params("CPA")["posture_synonyms"]


def test_standing_with_arms_down():
    p = classify(body(**STAND))
    assert p.body == "standing" and p.arms == "arms_down"


def test_walking_and_running_by_stride():
    walk = body(**{**STAND, "la": (150, 375), "ra": (95, 378)})
    assert classify(walk).body == "walking"     # stride 55 px = 0.55 torso
    run = body(**{**STAND, "lk": (130, 285), "la": (175, 340), "ra": (60, 370)})
    assert classify(run).body == "running"      # stride 115 px = 1.15 torso


def test_sitting_thighs_horizontal():
    sit = body(**{**STAND, "lk": (200, 205), "rk": (170, 205), "la": (200, 295), "ra": (170, 295)})
    assert classify(sit).body == "sitting"


def test_sitting_facing_the_camera_foreshortened_thighs():
    sit = body(**{**STAND, "lk": (117, 230), "rk": (83, 230), "la": (117, 320), "ra": (83, 320)})
    assert classify(sit).body == "sitting"      # thighs 30 px = 0.3 torso: pointing at the camera


def test_kneeling_shins_on_the_ground():
    kneel = body(**{**STAND, "lk": (116, 290), "rk": (84, 290), "la": (30, 300), "ra": (0, 300)})
    assert classify(kneel).body == "kneeling"


def test_crouching_deep_knee_flexion():
    crouch = body(**{**STAND, "lh": (115, 250), "rh": (85, 250), "ls": (125, 155), "rs": (85, 155),
                     "lk": (160, 230), "rk": (130, 230), "la": (118, 300), "ra": (88, 300)})
    assert classify(crouch).body == "crouching"


def test_lying_trunk_horizontal():
    lie = body(nose=(40, 100), ls=(80, 95), rs=(80, 110), lh=(180, 95), rh=(180, 110),
               lk=(270, 95), rk=(270, 110), la=(360, 95), ra=(360, 110))
    assert classify(lie).body == "lying"


def test_arm_states():
    up = body(**{**STAND, "le": (125, 60), "re": (75, 60), "lw": (127, 10), "rw": (73, 10)})
    assert classify(up).arms == "arms_raised"
    wave = body(**{**STAND, "le": (135, 60), "lw": (140, 20)})
    assert classify(wave).arms == "one_arm_raised"
    t_pose = body(**{**STAND, "le": (170, 100), "re": (30, 100), "lw": (220, 102), "rw": (-20, 102)})
    assert classify(t_pose).arms == "arms_outstretched"
    bent = body(**{**STAND, "lw": (100, 130), "rw": (90, 128)})   # hands at the chest: no arm label
    assert classify(bent).arms is None


def test_portrait_without_hips_is_upright_and_unseen_shoulders_give_nothing():
    bust = body(nose=(100, 60), ls=(140, 110), rs=(60, 112))
    p = classify(bust)
    assert p.body == "upright" and p.arms is None
    assert classify(body(nose=(100, 60))).labels == ()


def test_low_visibility_landmarks_are_unseen():
    lm = body(**STAND)
    lm[[25, 26, 27, 28], 3] = 0.2            # legs out of frame
    assert classify(lm).body == "upright"


def test_credit_exact_compatible_and_wrong():
    assert label_credit("standing", ("standing",), 0.5) == 1.0
    assert label_credit("standing", ("walking",), 0.5) == 0.5
    assert label_credit("standing", ("upright",), 0.5) == 0.5
    assert label_credit("standing", ("lying",), 0.5) == 0.0
    assert posture_similarity(("standing", "arms_raised"), classify(body(**STAND)), 0.5) == 0.5


def test_parse_posture_text():
    assert parse_posture("Standing with arms raised", SYNONYMS) == ("standing", "arms_raised")
    assert parse_posture("seated, waving", SYNONYMS) == ("sitting", "one_arm_raised")
    assert parse_posture("one arm raised", SYNONYMS) == ("one_arm_raised",)
    with pytest.raises(ValueError, match="no known posture"):
        parse_posture("contemplative", SYNONYMS)


def test_synonyms_and_compatible_pairs_name_only_rule_labels():
    """A misspelt label in the ontology or in COMPATIBLE would never match a classified posture, silently."""
    labels = set(BODY_LABELS) | set(ARM_LABELS)
    assert set(SYNONYMS) == labels
    assert all(pair <= labels for pair in COMPATIBLE)
