"""PhyBench's public JSON layout written by hand (three law files, odd records included), for the tests that import
or run it without the public data."""
import json

GRADING = "Scene Score:\n0: no seesaw\n2: seesaw with both animals\nPhysical laws Score:\n3: heavy side down"


def write_phybench(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "force.json").write_text(json.dumps([
        {"prompt": "an elephant and a mouse on a seesaw", "normal": "the elephant side is down", "grading": GRADING, "law": "Gravity"},
        {"prompt": "a boulder and a feather on a balance", "normal": "the boulder side is down", "law": "Gravity"},
        {"prompt": "a ball rolling down a slope", "normal": "it speeds up", "law": "Friction", "scene": "a ball on a slope"},
        {"prompt": "missing phenomenon", "law": "Gravity"}]))
    (folder / "light.json").write_text(json.dumps([{"prompt": "a pencil in a glass of water", "normal": "it looks bent", "law": "Refraction"}]))
    (folder / "misc.json").write_text(json.dumps([{"prompt": "ice on a stove", "normal": "it melts", "category": "heat"},
                                                   {"prompt": "a stone", "normal": "it sinks"}]))
    return folder
