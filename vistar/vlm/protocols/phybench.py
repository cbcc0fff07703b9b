"""PhyBench: physical commonsense of generated images (mechanics, optics, thermodynamics, material properties).

Stage 1 (text only, cached like questionnaires): an LLM writes item-specific scoring criteria from the scene
and the expected phenomenon, unless the item already carries them (`grading`). Stage 2: the VLM gives a scene
score 0–2 and a physics score 0–3 for the image under those criteria. phybench.phy = phy/3 and
phybench.scene = scene/2; per category they are averaged over images. The official repository publishes no
aggregation, so the per-category and overall means are this engine's interpretation (docs/protocols.md).
Material properties are two categories, as the benchmark's files and the paper's tables keep them:
chemistry (`chem.json`) and physical properties (`wuli.json`).

Public layout: a folder of JSON files (force.json, light.json, heat.json, chem.json, wuli.json), each a list
of items `{"prompt", "normal" (expected phenomenon), "scene"?, "grading"? (criteria), "law" (scenario),
"<MODEL>": image path?}`. An item's id is the name of the image its record points to (the benchmark's
evaluation script reads the image from that field), else `<law>_<n>`.
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import ReplyFormatError
from ..images import file_as_is
from ..replies import Reply, int_score
from ..types import WireFormat
from .aggregate import each_model, means_by, missing_items, ok_rows
from .base import Family, Items, Outcome, Protocol, Query, make_prompt, read_json_list
from .demo import level
from .upstream_source import constant, inner_assignment

NAME, VERSION = "phybench", "1"  # the judge's questions (their cached answers stay valid)
METRIC_VERSION = "2"  # 2: chemistry and physical properties apart; ids from the records' image paths
MATERIAL_CHEMISTRY, MATERIAL_PHYSICS = "material-chemistry", "material-physics"
CATEGORIES = {"force": "mechanics", "mechanics": "mechanics", "mechanical": "mechanics", "light": "optics",
              "optics": "optics", "optical": "optics", "heat": "thermodynamics", "thermodynamics": "thermodynamics",
              "thermal": "thermodynamics", "chem": MATERIAL_CHEMISTRY, "chemistry": MATERIAL_CHEMISTRY,
              "chemical": MATERIAL_CHEMISTRY, "wuli": MATERIAL_PHYSICS,  # wuli.json: physical properties of materials
              "physical": MATERIAL_PHYSICS, "material": MATERIAL_PHYSICS, "materials": MATERIAL_PHYSICS}
_IMAGE_PATH = re.compile(r"[^\n]*?([^/\\\n]+)\.(?:png|jpe?g|webp)", re.I)

CRITERIA_SYSTEM = "You are an experienced physicist who writes grading rubrics for images of physical scenes."
CRITERIA_USER = """Write detailed, item-specific scoring criteria for judging whether an image of the scene below
shows the expected physical phenomenon. Ignore artistic style and unimportant background details.

Scene: {scene}
Expected physical phenomenon: {normal}

Use exactly two scores:
Scene score: 0 = the required scene is absent; 1 = partly present or partly wrong; 2 = fully present
(regardless of the physics).
Physics score: 0 = the phenomenon is shown completely wrong; 1-2 = partly wrong, lower for larger errors;
3 = the phenomenon is shown correctly.
For each score level state concretely what the image must show for this scene. Reply with the criteria only."""

JUDGE_SYSTEM = ("You are an experienced physicist grading a generated image. Focus on whether it shows the "
                "expected physical phenomenon; ignore style and unimportant parts.")
JUDGE_USER = """Scene: {scene}
Expected physical phenomenon: {normal}
Scoring criteria:
{criteria}

Grade the image under these criteria. Reply with only a JSON object:
{{"scene_score": integer 0-2, "phy_score": integer 0-3, "scene_reason": "<short>", "phy_reason": "<short>"}}"""

_ID_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class PhyItem:
    id: str
    category: str
    law: str
    prompt: str
    scene: str
    normal: str
    criteria: str | None       # the item's own grading text when the data carries it

    def to_prompt(self):
        role, angle = ("PH", "MA") if self.category.startswith("material") else ("ED", "PSC")
        return make_prompt(self.id, role, angle, self.prompt, NAME, category=self.category, law=self.law or None)


def load_items(data_dir: str | Path) -> Items:
    root = PROTOCOL.data_root(data_dir)
    files = sorted(p for p in root.glob("*.json")) if root.is_dir() else []
    if not files:
        raise FileNotFoundError(f"{root}: no PhyBench JSON files (expected e.g. force.json, light.json, heat.json)")
    items, problems, seen = [], [], set()
    for path in files:
        data = read_json_list(path, problems, "items")
        if data is None:
            continue
        counters: dict[str, int] = {}
        for n, rec in enumerate(data):
            # the id counts every record of its law, usable or not, so ids stay aligned with the image names
            law = str(rec.get("law") or "").strip() if isinstance(rec, dict) else ""
            base = _ID_SAFE.sub("_", law or path.stem).strip("_") or path.stem
            counted = f"{base}_{counters.get(base, 0)}"
            counters[base] = counters.get(base, 0) + 1
            item_id = str(rec["id"]) if isinstance(rec, dict) and rec.get("id") else _image_name(rec, counted, problems, f"{path}: item {n}")
            where = f"{path}: item {n} ({item_id})"
            if not isinstance(rec, dict) or not all(isinstance(rec.get(k), str) and rec[k].strip() for k in ("prompt", "normal")):
                problems.append(f"{where}: fields 'prompt' and 'normal' (expected phenomenon) must be non-empty strings")
                continue
            category = _category(rec.get("category")) or _category(path.stem)
            if category is None:
                problems.append(f"{where}: field 'category' missing and file name '{path.stem}' names no category "
                                f"({', '.join(sorted(set(CATEGORIES.values())))})")
                continue
            if item_id in seen:
                problems.append(f"{where}: id '{item_id}' is a duplicate")
                continue
            seen.add(item_id)
            grading = rec.get("grading")
            items.append(PhyItem(item_id, category, law, rec["prompt"], str(rec.get("scene") or rec["prompt"]),
                                 rec["normal"], grading if isinstance(grading, str) and grading.strip() else None))
    return Items(items, problems)


def _image_name(rec, counted: str, problems: list[str], where: str) -> str:
    """The name (without extension) of the image the record points to, e.g. `"DALLE3": ".../Gravity_63.png"`:
    the benchmark numbers a law's images by their place in its original file, which the counter `<law>_<n>`
    does not reproduce when a law's records are not contiguous. Without such a field, the counter."""
    names = {m.group(1) for k, v in (rec.items() if isinstance(rec, dict) else ()) if k not in ("prompt", "normal", "scene", "grading")
             and isinstance(v, str) and (m := _IMAGE_PATH.fullmatch(v.strip()))}
    if len(names) > 1:
        problems.append(f"{where} ({counted}): its image fields name different images ({', '.join(sorted(names))}); "
                        f"the id {counted} is used")
    return names.pop() if len(names) == 1 else counted


def _category(name) -> str | None:
    """The category a name says ("Material Properties", "light", "chem_2"), or None."""
    return next((CATEGORIES[w] for w in re.split(r"[^a-z]+", str(name or "").lower()) if w in CATEGORIES), None)


def parse_criteria(text: str) -> str:
    if not isinstance(text, str) or len(text.strip()) < 20 or not re.search(r"scene", text, re.I) or not re.search(r"phys", text, re.I):
        raise ReplyFormatError("criteria must describe both the scene score and the physics score")
    return text.strip()


def criteria(item: PhyItem) -> Query | None:
    if item.criteria:
        return None
    return Query("criteria", CRITERIA_USER.format(scene=item.scene, normal=item.normal), parse_criteria,
                 CRITERIA_SYSTEM, with_image=False)


def parse(text: str) -> dict:
    reply = Reply(text)  # the benchmark asks for a Python-style dict; its reasons often contain apostrophes
    return {"scene": int_score(reply, "scene_score", 0, 2, aliases=("scene",)),
            "phy": int_score(reply, "phy_score", 0, 3, aliases=("physics_score", "physical_laws_score", "phy"))}


def queries(item: PhyItem, criteria: str | None = None, data_dir=None) -> list[Query]:
    text = item.criteria or criteria
    if not text:
        raise ValueError(f"PhyBench item {item.id}: no scoring criteria")
    return [Query("grade", JUDGE_USER.format(scene=item.scene, normal=item.normal, criteria=text), parse, JUDGE_SYSTEM)]


# --- the benchmark's own questions: GPT_make_grading.py, GPT_make_eval.py -----------------------------------------

def _upstream_text(folder: str, file: str, variables: dict, parts: tuple[str, ...]) -> str:
    """`content` as the script concatenates it, each part evaluated from the pinned function's own code."""
    values = dict(variables)
    for name in parts:
        if name not in values:
            expr = inner_assignment("PhyBench", folder, file, "process_data", name)
            values[name] = eval(compile(ast.Expression(expr), name, "eval"), {}, values)  # noqa: S307 - pinned text
    return "".join(values[p] for p in parts)


def upstream_criteria_query(folder: str, item) -> Query | None:
    """GPT_make_grading.py's question, for an item whose data carries no criteria."""
    if item.criteria:
        return None
    user = _upstream_text(str(folder), "GPT_make_grading.py", {"scene": item.scene, "normal": item.normal},
                          ("task", "prompt", "template", "answer"))
    wire = WireFormat(system_parts=False, body=(("max_tokens", 2000),))
    return Query("criteria", user, _any_text, with_image=False, wire=wire)


def upstream_queries(folder: str, item, criteria=None, extra=None) -> list[Query]:
    folder, criteria = str(folder), item.criteria or criteria
    task = constant("PhyBench", folder, "GPT_make_eval.py", "task")
    answer = constant("PhyBench", folder, "GPT_make_eval.py", "answer")
    user = _upstream_text(folder, "GPT_make_eval.py", {"scene": item.scene, "normal": item.normal, "grading": criteria,
                                                       "extra": "", "task": task, "answer": answer},
                          ("task", "prompt", "answer"))
    wire = WireFormat(system_parts=False, image_mime="image/jpeg", body=(("max_tokens", 500),))
    return [Query("grade", user, parse, wire=wire, encode=file_as_is)]


def _any_text(text: str) -> str:
    """GPT_make_grading.py keeps whatever the model wrote as the criteria."""
    if not text.strip():
        raise ReplyFormatError("empty criteria")
    return text


def score(outcome: Outcome, which: str) -> tuple[float, dict]:
    answer = outcome.answers.get("grade")
    if not isinstance(answer, dict):
        raise ReplyFormatError("no grade answer")
    value = answer["phy"] / 3 if which == "phy" else answer["scene"] / 2
    return value, {**answer, "category": outcome.item.category, "law": outcome.item.law}


def summarize(df: pd.DataFrame, items=None) -> dict:
    """Per category of the paper's tables (mechanics, optics, thermodynamics, and material properties split into
    chemistry and physics): mean of phy/3 and of scene/2 over images, and the raw 0-3 / 0-2 means. The
    upstream repository publishes no aggregation (GPT_make_eval.py only stores the replies, and records
    'no image' for an item without one), so items without a score are left out and counted in `missing`;
    the overall, an unweighted mean over the categories present, is vistar's."""
    out: dict = defaultdict(dict)
    scale = {"phybench.phy": 3, "phybench.scene": 2}
    for metric in ("phybench.phy", "phybench.scene"):
        ok, coverage = ok_rows(df, metric)
        for model, g in each_model(df, metric, ok):
            cats = means_by(g, "category")
            out[model][metric] = {"categories": cats, "raw_categories": {c: v * scale[metric] for c, v in cats.items()},
                                  "overall": sum(cats.values()) / len(cats) if cats else None,
                                  "overall_rule": "vistar: mean over categories",
                                  "missing": missing_items(g, items), "coverage": coverage.get(model)}
    return dict(out)


def headline(numbers: dict) -> dict:
    return {metric: {"overall": v["overall"], "missing": v["missing"]} for metric, v in numbers.items()}


def demo_reply(system: str, user: str, facts) -> str:
    """Criteria that name both scores; a grade by brightness (full marks on a bright image)."""
    if system == CRITERIA_SYSTEM:
        return "Scene score: 2 if the scene is fully present.\nPhysics score: 3 if the phenomenon is shown correctly."
    return "{'scene_score': %d, 'phy_score': %d, 'scene_reason': 'ok', 'phy_reason': 'ok'}" % (
        level(2, facts[1]), level(3, facts[1]))


PROTOCOL = Protocol(NAME, VERSION, {"phybench.phy": lambda o: score(o, "phy"), "phybench.scene": lambda o: score(o, "scene")},
                    (CRITERIA_SYSTEM, CRITERIA_USER, JUDGE_SYSTEM, JUDGE_USER), load_items, queries, summarize,
                    headline, demo_reply, (CRITERIA_SYSTEM, JUDGE_SYSTEM), criteria, data_subdir="PhyBench",
                    metric_version=METRIC_VERSION,
                    upstream=Family("PhyBench", upstream_queries, upstream_criteria_query,
                                    note="GPT_make_eval.py appends an undefined `extra` to the prompt; vistar appends nothing. "
                                         "Its replies are stored unparsed; vistar reads them as the vistar protocol does"))
