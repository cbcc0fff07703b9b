"""Safety screen: shipped suites pass, planted terms are caught, whole-token matching, pluggable classifiers."""
from __future__ import annotations

import sys
import types

import pytest

from vistar.models import MissingWeightError
from vistar.prompts_dsl import parse_prompt
from vistar.suites import load_builtin
from vistar.suites.safety import ClassifierScreen, DetoxifyClassifier, WordListScreen


def test_shipped_suites_pass_the_word_list():
    assert WordListScreen.default().screen(load_builtin("full")) == []


def test_a_planted_bad_word_is_caught_in_core_and_in_controls():
    screen = WordListScreen.default()
    clean = load_builtin("core")[:5]
    planted = parse_prompt('[GD|TR] A poster of a naked man {text="HELLO"}', id="bad-1")
    in_text = parse_prompt('[GD|TR] A poster {text="heroin for sale"}', id="bad-2")
    flags = screen.screen([*clean, planted, in_text])
    assert [(f.prompt_id, f.match, f.category) for f in flags] == [("bad-1", "naked", "sexual"), ("bad-2", "heroin", "drugs")]


def test_matching_is_whole_token_with_prefix_and_phrase_entries():
    screen = WordListScreen({"sexual": ["sex"], "violence": ["torture*"], "self_harm": ["kill yourself"]})
    assert screen.matches("A cottage in Sussex, Essex style") == []
    assert screen.matches("SEX!") == [("sex", "sexual")]
    assert screen.matches("a torturer's rack") == [("torture*", "violence")]
    assert screen.matches("kill the lights yourself") == []
    assert screen.matches("Kill  Yourself") == [("kill yourself", "self_harm")]


def test_extra_blocklist_file_extends_the_default(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text("categories:\n  brand: [acme corp]\n", encoding="utf-8")
    screen = WordListScreen.from_files([extra])
    assert screen.matches("An ACME Corp billboard") == [("acme corp", "brand")]
    assert screen.matches("a nude statue") == [("nude", "sexual")]  # defaults still there
    bad = tmp_path / "bad.yaml"
    bad.write_text("terms: [x]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="categories"):
        WordListScreen.from_files([bad])


class _KeywordClassifier:
    """A deterministic stand-in: probability 0.9 for 'toxicity' when the text contains 'awful'."""

    name = "keyword"

    def __init__(self):
        self.batches = []

    def predict(self, texts):
        self.batches.append(list(texts))
        return [{"toxicity": 0.9 if "awful" in t else 0.1, "insult": 0.2} for t in texts]


def test_classifier_screen_thresholds_and_batches():
    prompts = [parse_prompt("[GD|GC] A nice cube", id="ok"), parse_prompt('[GD|TR] A sign {text="awful"}', id="bad")]
    clf = _KeywordClassifier()
    flags = ClassifierScreen(clf, threshold=0.5, batch_size=2).screen(prompts)
    assert [(f.prompt_id, f.match, f.score) for f in flags] == [("bad", "toxicity", 0.9)]
    assert [len(b) for b in clf.batches] == [2, 1]  # core, core, text control
    assert ClassifierScreen(clf, threshold=0.95).screen(prompts) == []


def test_detoxify_adapter_maps_its_output(monkeypatch, tmp_path):
    calls = {}

    class FakeDetoxify:  # the detoxify package's documented API: Detoxify(type, checkpoint=..., ...).predict(list)
        def __init__(self, model_type, checkpoint=None, device="cpu", huggingface_config_path=None):
            calls.update(model_type=model_type, checkpoint=checkpoint, device=device)

        def predict(self, texts):
            return {"toxicity": [0.8 if "awful" in t else 0.01 for t in texts], "threat": [0.0] * len(texts)}

    monkeypatch.setitem(sys.modules, "detoxify", types.SimpleNamespace(Detoxify=FakeDetoxify))
    (tmp_path / "toxic_original-c1212f89.ckpt").write_bytes(b"x")
    clf = DetoxifyClassifier(tmp_path)
    assert calls == {"model_type": "original", "checkpoint": str(tmp_path / "toxic_original-c1212f89.ckpt"), "device": "cpu"}
    assert clf.predict(["fine", "awful"]) == [{"toxicity": 0.01, "threat": 0.0}, {"toxicity": 0.8, "threat": 0.0}]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MissingWeightError, match="no \\*.ckpt"):
        DetoxifyClassifier(empty)


def test_detoxify_missing_package_is_a_clear_missing_weight(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "detoxify", None)  # import fails
    with pytest.raises(MissingWeightError, match="pip install detoxify"):
        DetoxifyClassifier(tmp_path)
