"""Validation against the ontology names the field; mask violations warn, missing ground truth errs."""
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt, resolved_controls, validate_prompt

ONTO = Ontology.load()


def _issues(text, **kw):
    return [(i.severity, i.field, i.message) for i in validate_prompt(parse_prompt(text, location="f:1", **kw), ONTO)]


def test_unknown_codes_are_errors_naming_the_field():
    (sev, field, msg), = _issues('[XX|TR] "A"')
    assert (sev, field) == ("error", "role") and "unknown role code 'XX'" in msg and "GD" in msg
    (sev, field, msg), = _issues('[GD|ZZ] "A"')
    assert (sev, field) == ("error", "angle") and "unknown angle code 'ZZ'" in msg


def test_angle_outside_the_mask_is_a_warning():
    (sev, field, msg), = _issues('[SA|TR] a sign "OPEN"')  # SA's mask is CSE CPA LI PSC
    assert (sev, field) == ("warning", "angle") and "not relevant to role SA" in msg
    assert _issues('[GD|TR] a sign "OPEN"') == []


def test_tr_text_falls_back_to_the_quoted_span():
    p = parse_prompt('[GD|TR] a sign saying "GRAND" and “OPENING” {set="hard"}')
    assert resolved_controls(p, ONTO) == {"text": "GRAND OPENING"}  # `set` is metadata, never ground truth
    explicit = parse_prompt('[GD|TR] a sign saying "GRAND" {text="SALE"}')
    assert resolved_controls(explicit, ONTO) == {"text": "SALE"}
    (sev, field, msg), = _issues("[GD|TR] a sign with no quoted words")
    assert (sev, field) == ("error", "text") and "requires control key 'text'" in msg and "double-quoted span" in msg
    assert _issues('[GD|TR] a sign {text=""}')[0][:2] == ("error", "text")


def test_set_metadata_from_controls_or_jsonl():
    assert parse_prompt('[GD|TR] "A" {set="hard"}').set == "hard"
    assert parse_prompt('[GD|TR] "A"', metadata={"set": "core"}).set == "core"
    assert _issues('[GD|TR] "A" {set="easy"}') == [("error", "set", "set must be 'core' or 'hard', not 'easy'")]
    (sev, field, msg), = _issues('[GD|TR] "A" {set="hard"}', metadata={"set": "core"})
    assert (sev, field) == ("error", "set") and "'hard'" in msg and "'core'" in msg


def test_required_keys_come_from_the_ontology(tmp_path):
    extra = tmp_path / "o.yaml"
    extra.write_text("required_keys:\n  LI: [[light_dir, light_azimuth], [shadows]]\n")
    onto = Ontology.load(extra)
    issues = validate_prompt(parse_prompt('[PH|LI] a room {light_azimuth=30}', location="f:3"), onto)
    assert [(i.severity, i.field) for i in issues] == [("error", "shadows")]
    assert str(issues[0]) == "error: f:3: field 'shadows': angle LI requires control key 'shadows'"


def test_fingerprint_covers_what_a_row_records_from_the_prompt():
    base = parse_prompt('[GD|TR] "A"')
    assert base.fingerprint == parse_prompt('[GD|TR]   "A"', id="other", location="g:9").fingerprint
    assert base.fingerprint == parse_prompt('[GD|TR] "A"', metadata={"source": "x"}).fingerprint
    changed = ['[GD|TR] "B"', '[MS|TR] "A"', '[GD|TR] "A" {text="A"}', '[GD|TR] "A" {set="hard"}']
    assert len({base.fingerprint, *(parse_prompt(t).fingerprint for t in changed)}) == 5
    assert parse_prompt('[GD|TR] "A"', metadata={"set": "hard"}).fingerprint != base.fingerprint
