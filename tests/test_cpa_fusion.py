"""Fusing person boxes with faces into people, on hand-made boxes: who is one person, who is two."""
from vistar.api import PersonBox
from vistar.features.persons import fuse, nms


def people(persons, faces, **kw):
    return [(p.box if p else None, k) for p, k in fuse(persons, faces, **kw)]


def test_a_box_without_a_face_is_a_person_turned_away():
    front = PersonBox((0, 0, 100, 300), 0.9)
    back = PersonBox((200, 0, 300, 300), 0.8)          # nobody's face inside: turned away, still a person
    assert people([front, back], [(35, 10, 65, 40)]) == [(front.box, 0), (back.box, None)]


def test_a_face_without_a_box_is_a_person():
    box = PersonBox((0, 0, 100, 300), 0.9)
    assert people([box], [(35, 10, 65, 40), (400, 10, 430, 40)]) == [(box.box, 0), (None, 1)]


def test_each_face_goes_to_the_box_whose_head_it_is():
    # two overlapping people; face A is inside both boxes but at the head of the left one only
    left, right = PersonBox((0, 0, 200, 400), 0.7), PersonBox((120, 40, 320, 440), 0.9)
    face_a, face_b = (80, 10, 130, 60), (200, 50, 250, 100)
    assert sorted(people([left, right], [face_a, face_b]), key=str) == sorted([(left.box, 0), (right.box, 1)], key=str)


def test_second_box_on_a_person_is_not_a_second_person():
    whole = PersonBox((0, 0, 200, 400), 0.9)
    overlapping = PersonBox((20, 20, 220, 420), 0.6)   # IoU 0.74 with the face-holding box
    torso = PersonBox((40, 60, 160, 300), 0.6)         # inside it (IoU 0.36), starting near its top
    face = (80, 10, 120, 50)
    assert people([whole, overlapping, torso], [face]) == [(whole.box, 0)]
    assert len(fuse([whole, torso], [face], duplicate_inside=1.01)) == 2   # the inside rule is what drops it


def test_person_seated_in_front_of_a_standing_one_is_kept():
    # cut by the frame, her box lies inside his but starts well below his top: another person, not his torso
    standing, seated = PersonBox((0, 0, 300, 600), 0.9), PersonBox((150, 250, 300, 600), 0.6)
    assert len(fuse([standing, seated], [(130, 20, 170, 60)])) == 2
    assert len(fuse([standing, seated], [(130, 20, 170, 60)], same_top=1.0)) == 1


def test_box_whose_head_is_someone_elses_face_is_that_person():
    whole = PersonBox((0, 40, 200, 400), 0.9)
    head_on = PersonBox((40, 0, 220, 160), 0.55)       # IoU 0.24, 67 % inside: only the head rule applies
    face = (90, 40, 130, 80)                           # matched to `whole`, in head_on's top 40 %
    assert people([whole, head_on], [face]) == [(whole.box, 0)]
    lower = (90, 100, 130, 140)                        # the same face lower down: not head_on's head
    assert len(fuse([whole, head_on], [lower])) == 2


def test_person_cut_by_the_frame_behind_another_is_kept():
    # a faceless box overlapping a face-holding one a little (IoU 0.14) and not inside it: another person
    front, cut = PersonBox((100, 0, 300, 400), 0.9), PersonBox((0, 100, 150, 400), 0.35)
    assert len(fuse([front, cut], [(180, 10, 220, 50)])) == 2


def test_faceless_box_overlapping_a_person_beside_their_face_is_another_person():
    # t1's layout: a man standing, face at his box's top right, and a woman behind-beside him whose face is hidden;
    # her box overlaps his by IoU 0.53 and lies inside it, but his face is not above her: two people
    standing, hidden = PersonBox((0, 30, 235, 485), 0.7), PersonBox((0, 133, 166, 475), 0.37)
    his_face = (143, 0, 252, 104)
    assert len(fuse([standing, hidden], [his_face])) == 2
    # the same two boxes with the face above the inner box: a second box on the same man
    assert len(fuse([standing, hidden], [(40, 0, 140, 100)])) == 1
    assert len(fuse([standing, hidden], [])) == 1            # no face to tell them apart: the old rule


def test_nms_keeps_the_higher_score():
    a, b, c = PersonBox((0, 0, 100, 100), 0.6), PersonBox((5, 5, 105, 105), 0.9), PersonBox((300, 0, 400, 100), 0.5)
    assert nms([a, b, c], 0.6) == [b, c]


def _bright_region_detector():
    """A detector whose `_detect` boxes the bright pixels of what it is shown, at score 0.9 (no weights needed)."""
    import numpy as np

    from vistar.features.persons import SSDPersonDetector

    detector = SSDPersonDetector.__new__(SSDPersonDetector)
    detector.min_score, detector.edge_score, detector.nms_iou, detector.elongated = 0.5, 0.3, 0.6, 3.0
    calls = []

    def detect(image):
        calls.append(image.shape[:2])
        ys, xs = np.nonzero(image[..., 0] > 128)
        return [PersonBox((float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)), 0.9)] if len(xs) else []

    detector._detect = detect
    return detector, calls


def test_mirrored_pass_maps_its_boxes_back_onto_the_image():
    import numpy as np

    detector, calls = _bright_region_detector()
    image = np.zeros((100, 250, 3), np.uint8)
    image[10:90, 10:40] = 255                                     # one "person", left of centre
    assert detector(image) == [PersonBox((10.0, 10.0, 40.0, 90.0), 0.9)]   # both passes agree: one box
    assert calls == [(100, 250)] * 2                              # 2.5:1: the whole image, as it is and mirrored
    both = detector._both_ways(image)
    assert [b.box for b in both] == [(10.0, 10.0, 40.0, 90.0)] * 2  # the mirror's box lands where the person is


def test_long_strip_is_searched_in_windows_only():
    import numpy as np

    detector, calls = _bright_region_detector()
    image = np.zeros((100, 400, 3), np.uint8)
    image[10:90, 160:190] = 255
    found = detector(image)                                       # 4:1: windows of 100 px every 50 px, both ways
    assert calls == [(100, 100)] * 14
    assert found == [PersonBox((160.0, 10.0, 190.0, 90.0), 0.9)]
