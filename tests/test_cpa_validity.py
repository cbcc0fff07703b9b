"""A small slice of CPA's validity sets (vistar.validity.cpa), and the crop ground truth they rest on."""
import numpy as np
import pytest

from tests.support.fetched_weights import fetched_person_weights
from vistar.features.persons import inside_share
from vistar.validity import ValidityRow
from vistar.validity.cpa import PHOTOS, SETS, TUNING, VALIDATION, _row, crop_count, draw_crops


def test_crop_ground_truth_counts_people_at_least_half_inside():
    people = ((0, 0, 100, 100), (200, 0, 300, 100), (400, 0, 500, 100))
    assert inside_share(people[0], (50, 0, 1000, 100)) == pytest.approx(0.5)
    assert crop_count(people, (0, 0, 350, 100)) == 2                 # third person entirely outside
    assert crop_count(people, (0, 0, 460, 100)) == 3                 # 60 % of the third inside: counted
    assert crop_count(people, (0, 0, 430, 100)) is None              # 30 %: ambiguous, the crop is redrawn
    assert crop_count(people, (0, 0, 410, 100)) == 2                 # 10 %: not a person in this crop


def test_crops_are_deterministic_and_splits_differ():
    rng = np.random.default_rng(0)
    images = {p.name: rng.integers(0, 255, (700, 1000, 3), np.uint8) for p in PHOTOS}
    first, again = draw_crops(images, 6, 3, VALIDATION), draw_crops(images, 6, 3, VALIDATION)
    assert [c.name for c in first] == [c.name for c in again]
    assert all(np.array_equal(a.image, b.image) for a, b in zip(first, again))
    assert [c.name for c in first] != [c.name for c in draw_crops(images, 6, 3, TUNING)]
    for crop in first:                                  # counted people lie inside the rescaled crop
        height, width = crop.image.shape[:2]
        assert all(0 <= x0 < x1 <= width + 0.5 and 0 <= y0 < y1 <= height + 0.5 for x0, y0, x1, y1 in crop.people)


def test_splits_are_by_photo():
    splits = {p.name: p.split for p in PHOTOS}
    assert set(splits.values()) == {"tuning", "validation"} and len(splits) == len(PHOTOS)
    assert {"bus", "zidane", "multi_face", "t1"} <= {n for n, s in splits.items() if s == "tuning"}   # designed on
    images = {p.name: np.zeros((700, 1000, 3), np.uint8) for p in PHOTOS}
    for split in (TUNING, VALIDATION):                  # each split's crops come from its own photos only
        assert {c.name.split("[")[0] for c in draw_crops(images, 30, 0, split)} <= {n for n, s in splits.items() if s == split.name}
    for p in PHOTOS:                                     # labels, where given, are one per salient person
        assert not p.expressions or len(p.expressions) == len(p.people)


def test_optional_people_widen_the_right_count():
    # salient 1 and 2 optional people: 1, 2 and 3 found are right, 0 and 4 are not
    row = _row("x", "right person count", ["a"] * 5, [(1, 3)] * 5, [0, 1, 2, 3, 4], 0.9, "")
    assert row.value == 0.6 and not row.met and "a 1-3->0" in row.note and "a 1-3->4" in row.note
    assert _row("x", "m", ["a"], [(2, 2)], [2], None, "").goal == "report"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return fetched_person_weights(tmp_path_factory).parent.parent   # VISTAR_HOME/models/NAME


@pytest.mark.slow
def test_slice_of_each_set(home, monkeypatch):
    monkeypatch.setenv("VISTAR_HOME", str(home))
    try:
        group, single = SETS["photos (tuning)"](2, 0)   # bus (4 people, all found) and zidane (2 people)
    except RuntimeError as exc:                         # offline: no photo could be downloaded
        pytest.skip(str(exc))
    empty = SETS["no_people"](2, 0)
    assert group.set == "group photos (tuning)" and group.goal == "report" and single.n == 0
    assert all(isinstance(row, ValidityRow) and row.angle == "CPA" for row in (group, single, *empty))
    assert empty[0].met == (empty[0].value >= 0.95)
    if "unavailable" in group.note:
        pytest.skip(group.note)
    assert group.n == 2 and group.value == 1.0 and "miscounted (true->found): none" in group.note
    assert "persons+faces" in group.note
    assert empty[0].n == 2 and empty[0].value == 1.0
    (held,) = SETS["held-out photos"](1, 0)             # sitcom_cast: five men in a row, the outer two cut
    assert (held.set, held.n, held.goal) == ("held-out photos", 1, ">= 0.95") and held.met == (held.value >= 0.95)
    assert held.value == 1.0, held.note


@pytest.mark.slow
def test_expression_rows_match_each_labelled_face_to_its_person(tmp_path_factory, monkeypatch):
    from tests.support.fetched_weights import fetched_expression_weights
    from vistar.validity.cpa import run_expressions

    home = fetched_expression_weights(tmp_path_factory).parents[2]   # VISTAR_HOME/models/NAME/FILE
    monkeypatch.setenv("VISTAR_HOME", str(home))
    try:
        neutral, top = run_expressions(1)                # sitcom_cast: five men, each labelled neutral
    except RuntimeError as exc:                          # offline: no weights or no photo
        pytest.skip(str(exc))
    if "not found: sitcom_cast:" in neutral.note:
        pytest.skip(neutral.note)
    assert neutral.n == 5 and top.n == 5                 # every face found and given to its own annotated person
    assert neutral.value == top.value and neutral.goal == "report"
    wrong = round((1 - neutral.value) * 5)
    assert neutral.note.count("neutral->") == wrong      # each misread face is named with what it was read as


def test_a_set_that_cannot_run_raises_so_validate_makes_it_an_error_row(monkeypatch):
    from vistar.validity import cpa

    monkeypatch.setattr(cpa, "_expression_model", lambda: None)          # offline, no expression weights
    with pytest.raises(RuntimeError, match="expression weights unavailable"):
        cpa.run_expressions(2)

    def no_download(photo):
        raise OSError(f"{photo.name}: download failed")

    monkeypatch.setattr(cpa, "load", no_download)                        # every photo download failed
    for run in (SETS["photos"], SETS["group_crops"], SETS["held-out photos"]):
        with pytest.raises(RuntimeError, match="no validation photo could be loaded"):
            run(4, 0)
    monkeypatch.setattr(cpa, "_expression_model", lambda: "weights.onnx")
    with pytest.raises(RuntimeError, match="no labelled photo could be loaded"):
        cpa.run_expressions(2)
