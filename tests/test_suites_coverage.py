"""The shipped suites: coverage of the 28 (role, angle) pairs, scorer controls per angle, ids, no
near-duplicates, and validity under both the CLI (`vistar dsl check`) and the Python validator against
the ontology as it is now (other angles may add required keys: this test re-reads them every run)."""
from __future__ import annotations

import re
from collections import Counter
from importlib import resources

import pytest
from typer.testing import CliRunner

from vistar.cli import app
from vistar.engine.params import metric_params
from vistar.ontology import Ontology
from vistar.prompts_dsl import resolved_controls, validate_prompt
from vistar.suites import builtin_suites, load_builtin
from vistar.suites.stats import near_duplicates

ONTO = Ontology.load()
CORE = load_builtin("core")
HARD = load_builtin("hard")
ALL = CORE + HARD
SHIPPED_FILES = sorted({f for info in builtin_suites().values() for f in info.files})
CHALLENGES = {"negation", "multi-constraint", "rare-entity", "script", "font", "long-text"}


@pytest.mark.parametrize("filename", SHIPPED_FILES)
def test_every_shipped_file_passes_dsl_check(filename):
    with resources.as_file(resources.files("vistar.suites").joinpath(filename)) as path:
        result = CliRunner().invoke(app, ["dsl", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert " 0 errors, 0 warnings" in result.output


def test_every_prompt_passes_the_python_validator_without_warnings():
    issues = [str(i) for p in ALL for i in validate_prompt(p, ONTO)]
    assert issues == []


def test_core_covers_every_pair_of_the_mask_with_at_least_ten():
    counts = Counter((p.role, p.angle) for p in CORE)
    assert len(ONTO.pairs) == 28
    short = {pair: counts[pair] for pair in ONTO.pairs if counts[pair] < 10}
    assert short == {}
    assert set(counts) == set(ONTO.pairs)  # nothing outside the mask


def test_sets_are_tagged():
    assert {p.set for p in CORE} == {"core"}
    assert {p.set for p in HARD} == {"hard"}
    assert len(HARD) >= 150


def test_hard_spreads_over_all_angles_and_challenges():
    assert {p.angle for p in HARD} == set(ONTO.angles)
    assert all(ONTO.relevant(p.role, p.angle) for p in HARD)
    tags = Counter(t for p in HARD for t in p.controls["challenge"])
    assert set(tags) <= CHALLENGES
    assert {"negation", "multi-constraint", "rare-entity", "script"} <= set(tags)
    scripts = {p.controls["script"] for p in HARD if "script" in p.controls}
    assert {"Devanagari", "Hangul", "Cyrillic", "Ethiopic"} <= scripts
    for p in HARD:  # every negated instruction says what it forbids
        assert ("negation" in p.controls["challenge"]) == ("exclude" in p.controls), p.id


def test_ids_are_unique_and_follow_the_pattern():
    ids = [p.id for p in ALL]
    assert len(ids) == len(set(ids))
    for p in ALL:
        assert re.fullmatch(rf"{p.set}-{p.role}-{p.angle}-\d{{3}}", p.id), p.id


def test_no_near_duplicate_cores():
    assert near_duplicates(ALL, threshold=0.5) == []


def _resolved(angle):
    return [(p, resolved_controls(p, ONTO)) for p in ALL if p.angle == angle]


def test_tr_text_is_the_quoted_span_of_the_core():
    for p, c in _resolved("TR"):
        spans = re.findall(r'"([^"]+)"', p.core)
        assert spans and c["text"] == " ".join(spans), p.id


def test_li_light_is_an_anchor_and_the_core_names_the_same_anchor():
    from vistar.metrics.light_geometry import anchors_from_params, find_anchor, parse_light

    anchors = anchors_from_params(metric_params(ONTO, "LI").anchors)
    used = set()
    for p, c in _resolved("LI"):
        _, label = parse_light(c["light"], anchors)
        assert c["light"] == label, p.id  # the canonical phrase, not an alias
        named = find_anchor(p.core, anchors)
        assert named is not None and named.phrase == label, p.id
        used.add(label)
    assert used == {a.phrase for a in anchors}  # every anchor direction is exercised


def test_cse_panels_grid_shots_and_subject_agree():
    from vistar.features.clip_embed import shots_of
    from vistar.features.panels import panel_request

    for p, c in _resolved("CSE"):
        request = panel_request(c)  # the panels stage's own reading; raises on disagreeing controls
        assert c["panels"] == request.count == request.rows * request.cols == len(shots_of(c)), p.id
        assert isinstance(c["subject"], str) and c["subject"], p.id
        assert len(set(c["shots"])) == len(c["shots"]), p.id


def test_cpa_ground_truth_is_accepted_by_the_scorer():
    from vistar.metrics.cpa import cpa

    params = metric_params(ONTO, "CPA")
    for p, c in _resolved("CPA"):
        assert isinstance(c["count"], int) and c["count"] >= 1, p.id
        for key in ("posture", "expression"):
            if isinstance(c[key], list):
                assert len(c[key]) == c["count"], p.id
        # with nobody detected the scorer still parses every label: unknown postures/expressions or
        # per-person lists that disagree with the count raise ValueError here
        result = cpa([], c, params, p.role)
        assert result["n_expected"] == c["count"], p.id


def test_descriptor_controls_of_the_other_angles():
    for p, c in _resolved("PSC"):
        assert len(c["objects"]) >= 2 and c["contact"] in {"resting", "leaning", "touching", "inside", "hanging", "stacked"}, p.id
    for p, c in _resolved("GC"):
        assert isinstance(c["shape"], str) and c["shape"], p.id
    for p, c in _resolved("SF"):
        assert len(c["styles"]) >= 2, p.id
    for p, c in _resolved("CUL"):
        assert isinstance(c["culture"], str) and c["culture"], p.id
    for p, c in _resolved("MA"):
        assert len(c["materials"]) >= 1, p.id
