"""benchmarks/bench_tr.py keeps working (it is run by hand; this only checks it measures what it says)."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from vistar.features.ocr import OcrSettings
from vistar.synth.text import render_text

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tr.py"


def test_measure_reports_latency_and_accuracy(monkeypatch):
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # the bench sets them; undo after
        monkeypatch.setenv(var, os.environ.get(var, "")) if var in os.environ else monkeypatch.delenv(var, raising=False)
    spec = importlib.util.spec_from_file_location("bench_tr", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    image = ("OPEN", np.asarray(render_text("OPEN", size=256, font_size=48)))
    blank = ("SALE", np.asarray(render_text("", size=256)))
    r = bench.measure(OcrSettings(), [image], runs=2, acc_images=[image, blank])
    assert r["ocr_ms"] > 0 and r["ocr_cpu_ms"] > 0 and r["score_us"] > 0
    assert (r["tr_mean"], r["tr_min"]) == (0.5, 0.0)  # "OPEN" read exactly, nothing read on the blank


def test_stray_calibration_counts_words_and_other_readings(capsys):
    # bench_tr_validity's stray_angle calibration on hand-made readings: a poster word read unsurely 5° off the
    # text and photo detail read "C000" 18° off it (text lines at 8°, read surely)
    from tests.support.ocr_posters import poster, rotated

    spec = importlib.util.spec_from_file_location("bench_tr_validity", BENCH.parent / "bench_tr_validity.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ocr = poster(rotated("OPEN", 500, 480, 160, 40, 3.0, conf=0.7), rotated("C000", 500, 540, 100, 30, -10.0, conf=0.7))
    bench.stray_calibration([{"expected": "FRESH COFFEE DAILY OPEN", "ocr": {"correct": ocr}}])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("stray_angle  4.0: drops 1 readings that are words of the poster, 1 that are not")
    assert lines[3].startswith("stray_angle 10.0: drops 0 readings that are words of the poster, 1 that are not")
    assert lines[4].startswith("stray_angle 15.0: drops 0 readings that are words of the poster, 1 that are not")


def _bench(name: str):
    if str(BENCH.parent) not in sys.path:   # as when run as a script: the benches import their shared helpers
        sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location(name, BENCH.parent / f"{name}.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_wide_gaps_need_a_typical_step_and_leave_emitted_spaces_out():
    spaces = _bench("bench_tr_spaces")
    assert spaces.wide_gaps(np.array([0, 2, 8]), ["A", "B", "A"], 2.0) == set()            # two steps: no median
    # steps next to the emitted space (2->6, 6->8) neither counted nor flagged; the others 2, 2, 2, 2, 6
    chars = ["A", "B", " ", "A", "B", "A", "B", "A"]
    assert spaces.wide_gaps(np.array([0, 2, 6, 8, 10, 12, 14, 20]), chars, 2.0) == {7}


def test_geometric_space_is_added_with_the_alternatives_moved():
    # letters every 2 frames, then a step of 6 with p(space) 0; the 5th letter (A) nearly read B (share 1/3)
    spaces = _bench("bench_tr_spaces")
    probs = np.zeros((16, 4))
    for frame, cls in ((0, 1), (2, 2), (4, 1), (6, 2), (12, 1), (14, 2)):
        probs[frame, cls] = 0.9
    probs[12, 2] = 0.3
    probs[:, 0] = 1.0 - probs.sum(1)
    d = {"probs": probs, "text": "ABABAB", "space": 3, "character": ["", "A", "B", " "]}
    off = spaces.decode(d, 0.1, float("inf"))
    assert off == "ABABAB" and off.alternatives == ((4, "B", 0.333),)
    on = spaces.decode(d, 0.1, 2.5)                                       # 6 >= 2.5 x the median step 2
    assert on == "ABAB AB" and on.alternatives == ((5, "B", 0.333),)
    assert spaces.decode(d, 0.1, 3.5) == "ABABAB"                         # 6 < 3.5 x 2


def test_the_clean_look_bench_reads_with_the_strokes_and_stripes_it_names():
    from vistar.features.ocr import OcrSettings

    clean = _bench("bench_tr_clean_look")
    for strokes, max_ink, stripes in ((0, 0.0, 0.0), (5, 1.0, 0.0), (7, 0.1, 0.4)):
        settings = clean.scorer_with(strokes, max_ink, stripes).ctx.params("ocr", OcrSettings)
        assert (settings.second_look_strokes, settings.second_look_max_ink) == (strokes, max_ink)
        assert settings.second_look_stripes == stripes                      # "7:0.1" is stage 10: no stripes look
        assert settings.det_limit_side == OcrSettings().det_limit_side     # the rest as shipped


def test_the_second_reading_bench_reads_with_the_setting_it_names_and_measures_the_shipped_view():
    from vistar.features.ocr import OcrSettings
    from vistar.features.ocr_second_reading import stretched

    bench = _bench("bench_tr_second_reading")
    for second in (False, True):
        settings = bench.scorer_with(second).ctx.params("ocr", OcrSettings)
        assert settings.second_reading is second and settings.det_limit_side == OcrSettings().det_limit_side
    crop = np.random.default_rng(0).integers(0, 256, (30, 90, 3), dtype=np.uint8)
    shipped = [view for name, view in bench.VIEWS.items() if "shipped" in name]
    assert len(shipped) == 1 and np.array_equal(shipped[0](crop), stretched(crop))
    assert bench.VIEWS["padded 15 %"](crop).shape == (30 + 2 * 4, 90, 3)      # 15 % of 30 rows, rounded, each side
    assert bench.VIEWS["stretched 2x"](crop).shape == (30, 180, 3)


def test_the_ladder_benches_count_moved_renders_and_list_moved_correct_ones():
    report = _bench("tr_ladder_report")
    before = [{"correct": 0.9, "expected": "Gęś", "correct_read": "ges"}, {"correct": 1.0, "expected": "SALE", "correct_read": "sale"}]
    after = [{**before[0], "correct": 0.95, "correct_read": "gęś"}, dict(before[1])]
    assert report.moved_correct(before, after, digits=3) == ["    correct 0.900 -> 0.950: 'Gęś'\n        read 'ges'\n        now  'gęś'"]
    assert report.moved_correct(before, before) == []
    assert report.up_down([((0, "correct"), 0.05), ((0, "typo"), -0.01), ((1, "correct"), 0.0)]) == "renders up 1 down 1"


@pytest.mark.slow
def test_the_views_bench_reads_each_view_beside_the_stages_own_calls(capsys):
    # one carrier poster through the real OCR: the bench's stand-in recogniser must pass the stage's arguments on
    # (a stand-in the stage cannot call fails every image and the shares come out 0)
    bench = _bench("bench_tr_second_reading")
    bench.views(1, 0)
    out = capsys.readouterr().out.splitlines()
    first = float(out[0].rsplit(" ", 1)[1])
    shares = [float(line.rsplit(" ", 1)[1]) for line in out[1:]]
    assert first > 0.5 and len(shares) == len(bench.VIEWS) and all(first <= s <= 1.0 for s in shares)


def test_the_plain_bars_bench_reads_with_the_bars_off_and_nothing_else_changed():
    from vistar.features.ocr import OcrSettings

    _bench("bench_tr_plain_bars")   # imports: its helpers exist under the names it uses
    report = _bench("tr_ladder_report")
    settings = report.ocr_scorer(plain_bars=False).ctx.params("ocr", OcrSettings)
    assert settings == OcrSettings(**{**OcrSettings().__dict__, "plain_bars": False})
    assert report.ocr_scorer().ctx.params("ocr", OcrSettings) == OcrSettings()   # the ontology's values are the defaults
