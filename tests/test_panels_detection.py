"""Panel detection on generated storyboards whose panel boxes are known exactly."""
import numpy as np
import pytest

from vistar.features.panels import PanelRequest, panel_request, split_panels
from vistar.synth.storyboards import make_storyboard


def _assert_boxes(layout, truth, tol=2):
    assert layout.boxes.shape == truth.shape
    assert np.abs(layout.boxes - truth).max() <= tol, f"\n{layout.boxes}\nvs truth\n{truth}"


@pytest.mark.parametrize("seed", range(6))
def test_uneven_white_gutters_and_borders_are_detected(seed):
    board = make_storyboard(2, 2, 420, 600, seed=seed)
    layout = split_panels(board.image, PanelRequest(4, 2, 2))
    assert layout.method == "detected"
    _assert_boxes(layout, board.boxes)


def test_black_gutters_with_no_outer_border_and_three_columns():
    board = make_storyboard(2, 3, 400, 720, seed=11, border=(0, 0, 0, 0), gutters_x=[5, 17], gutters_y=[9],
                            gutter_colour=(0, 0, 0))
    layout = split_panels(board.image, PanelRequest(6, 2, 3))
    assert (layout.rows, layout.cols, layout.method) == (2, 3, "detected")
    _assert_boxes(layout, board.boxes)


def test_framed_panels_keep_their_frame_inside_the_box():
    board = make_storyboard(3, 2, 600, 400, seed=3, frame=3)
    layout = split_panels(board.image, PanelRequest(6, 3, 2))
    assert layout.method == "detected"
    _assert_boxes(layout, board.boxes)


def test_panel_count_alone_picks_the_grid_shape_from_the_gutters():
    board = make_storyboard(1, 4, 300, 900, seed=5)     # a strip: 1x4 although 2x2 is squarer
    layout = split_panels(board.image, PanelRequest(4))
    assert (layout.rows, layout.cols) == (1, 4)
    _assert_boxes(layout, board.boxes)


def test_touching_panels_are_split_at_strong_edges():
    colours = np.array([[30, 30, 30], [220, 220, 220], [200, 40, 40], [40, 40, 200]], np.uint8)
    image = np.zeros((200, 300, 3), np.uint8)
    rng = np.random.default_rng(0)
    cuts_y, cuts_x = (0, 90, 200), (0, 170, 300)
    truth = []
    for r in range(2):
        for c in range(2):
            block = colours[2 * r + c].astype(int) + rng.integers(-12, 13, size=(cuts_y[r + 1] - cuts_y[r], cuts_x[c + 1] - cuts_x[c], 3))
            image[cuts_y[r]:cuts_y[r + 1], cuts_x[c]:cuts_x[c + 1]] = np.clip(block, 0, 255)
            truth.append((cuts_x[c], cuts_y[r], cuts_x[c + 1], cuts_y[r + 1]))
    layout = split_panels(image, PanelRequest(4, 2, 2))
    assert layout.method == "detected"
    _assert_boxes(layout, np.array(truth), tol=0)


def test_image_without_gutters_falls_back_to_the_regular_grid_and_says_so():
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, size=(100, 160, 3), dtype=np.uint8)
    layout = split_panels(image, PanelRequest(4, 2, 2))
    assert (layout.row_method, layout.col_method, layout.method) == ("grid", "grid", "grid")
    np.testing.assert_array_equal(layout.boxes, [[0, 0, 80, 50], [80, 0, 160, 50], [0, 50, 80, 100], [80, 50, 160, 100]])


def test_grid_fallback_stays_inside_detected_borders():
    rng = np.random.default_rng(2)
    image = np.full((120, 200, 3), 255, np.uint8)
    image[10:110, 20:180] = rng.integers(0, 256, size=(100, 160, 3))   # one noisy block, no gutters
    layout = split_panels(image, PanelRequest(2, 1, 2))
    assert layout.method == "partial" and layout.row_method == "detected" and layout.col_method == "grid"
    np.testing.assert_array_equal(layout.boxes, [[20, 10, 100, 110], [100, 10, 180, 110]])


def test_panel_request_from_controls():
    assert panel_request({"grid": "2x3"}) == PanelRequest(6, 2, 3)
    assert panel_request({"panels": 4}) == PanelRequest(4)
    assert panel_request({"shots": ["a", "b", "c"]}) == PanelRequest(3)
    assert panel_request({"panels": "6", "grid": "3 × 2", "shots": ["a"]}) == PanelRequest(6, 3, 2)
    for bad, field in [({"grid": "two by two"}, "grid"), ({"panels": 0}, "panels"), ({"panels": "x"}, "panels"),
                       ({"panels": 4, "grid": "3x3"}, "disagree"), ({}, "no panel count")]:
        with pytest.raises(ValueError, match=field):
            panel_request(bad)


def test_fractional_or_boolean_panel_counts_are_refused_not_truncated():
    assert panel_request({"panels": 2.0}) == PanelRequest(2)
    for bad in (2.7, True, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="'panels': expected a whole number"):
            panel_request({"panels": bad})


def test_more_panels_than_the_image_has_pixels_are_refused_at_once():
    image = np.zeros((64, 48, 3), np.uint8)
    with pytest.raises(ValueError, match=r"10{12} panels are more than a 48x64 image can hold \(at most 3072"):
        split_panels(image, PanelRequest(10**12))
    with pytest.raises(ValueError, match="3067 panels do not fit"):   # a prime: only 1×3067 or 3067×1, neither fits
        split_panels(image, PanelRequest(3067))


def _jpeg(image, quality):
    import io

    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", quality=quality)
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


@pytest.mark.parametrize("seed", range(12))
def test_random_layouts_survive_jpeg_compression(seed):
    rng = np.random.default_rng(seed + 100)
    rows, cols = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    board = make_storyboard(rows, cols, int(rng.integers(300, 600)), int(rng.integers(300, 800)), seed=seed,
                            gutter_colour=(255, 255, 255) if seed % 2 else (0, 0, 0), frame=2 if seed % 3 == 0 else 0)
    layout = split_panels(_jpeg(board.image, 85), PanelRequest(rows * cols))   # shape not given: found too
    assert (layout.rows, layout.cols) == (rows, cols)
    _assert_boxes(layout, board.boxes)


@pytest.mark.parametrize("rows, cols, row_weights, col_weights, gutter_colour", [
    (1, 4, None, [1.5, 0.6, 1.4, 0.5], (255, 255, 255)),    # second cut 0.55 of a mean panel off the regular grid
    (3, 1, [0.6, 1.4, 1.0], None, (0, 0, 0)),
    (2, 3, [1.3, 0.7], [0.7, 1.5, 0.8], (240, 225, 190)),
])
def test_panels_of_very_different_sizes_are_found_by_their_gutters(rows, cols, row_weights, col_weights, gutter_colour):
    # the cuts lie beyond tolerance_frac of the regular grid; the image has exactly the gutters asked for
    board = make_storyboard(rows, cols, 600, 900, seed=41, gutter_colour=gutter_colour,
                            row_weights=row_weights, col_weights=col_weights)
    layout = split_panels(board.image, PanelRequest(rows * cols, rows, cols))
    assert layout.method == "detected"
    _assert_boxes(layout, board.boxes)
    assert (split_panels(board.image, PanelRequest(rows * cols)).rows, layout.cols) == (rows, cols)  # count only


def test_uneven_touching_panels_are_cut_at_their_edges():
    # no gutters at all: exactly R-1 edge lines are taken wherever they are
    colours = np.array([[40, 40, 40], [220, 220, 220], [200, 40, 40]])
    cuts = (0, 60, 250, 300)
    rng = np.random.default_rng(0)
    image = np.zeros((300, 200, 3), np.uint8)
    for k in range(3):
        block = colours[k] + rng.integers(-20, 21, size=(cuts[k + 1] - cuts[k], 200, 3))   # std 12: not a gutter
        image[cuts[k]:cuts[k + 1]] = np.clip(block, 0, 255)
    layout = split_panels(image, PanelRequest(3, 3, 1))
    assert layout.method == "detected"
    _assert_boxes(layout, np.array([(0, cuts[k], 200, cuts[k + 1]) for k in range(3)]), tol=0)


def test_gutters_too_close_to_make_panels_fall_back_to_the_grid():
    # two uniform bands 6 px apart are not two gutters of a 3-row layout (a panel of 6 px is not a panel)
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, size=(300, 200, 3), dtype=np.uint8)
    image[100:104] = 255
    image[110:114] = 255
    layout = split_panels(image, PanelRequest(3, 3, 1))
    assert layout.row_method == "grid"


@pytest.mark.parametrize("wrong", [{"row_weights": [1.0, 2.0, 1.0]}, {"col_weights": [1.0]}, {"gutters_y": [8, 8]},
                                   {"gutters_x": []}])
def test_storyboard_weights_and_gutters_must_match_the_grid(wrong):
    # a 2×2 grid: two row and two column weights, one gutter each way
    with pytest.raises(ValueError, match=next(iter(wrong))):
        make_storyboard(2, 2, **wrong)
    right = {"row_weights": [1.0, 2.0], "col_weights": [1.0, 1.0], "gutters_y": [8], "gutters_x": [8]}
    assert len(make_storyboard(2, 2, **right).boxes) == 4
