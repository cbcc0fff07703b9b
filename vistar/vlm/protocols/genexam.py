"""GenExam: exam-style diagram generation graded against weighted scoring points.

Per item the judge answers every scoring point 0/1 (seeing the ground-truth image when it is available)
and gives three global 0–2 scores (spelling, readability, logical consistency).
strict = 1 iff all points are correct and all three globals are 2;
relaxed = 0.7·Σ weights of correct points + 0.1·(spelling/2 + readability/2 + logic/2).
Overall: the mean over all scored exams, as the benchmark's cal_score.py prints it; per subject beside it
(`summarize`).
"""
from __future__ import annotations

import ast
import base64
import io
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from PIL import Image

from ..errors import ReplyFormatError
from ..images import png_bytes
from ..replies import Reply, boolean, int_score
from ..types import WireFormat
from .aggregate import each_model, means_by, missing_items, ok_rows
from .base import Family, Items, Outcome, Protocol, Query, make_prompt
from .demo import level, yes
from .upstream_source import constant, function, verified_source

NAME, VERSION = "genexam", "2"  # 2: relaxed rounded as the benchmark rounds it
GLOBALS = ("spelling", "readability", "logic")
GLOBAL_ALIASES = {"spelling": (), "readability": ("clarity_and_readability",), "logic": ("logical_consistency",)}

SYSTEM = ("You are a strict examiner grading a diagram drawn by an image-generation model for an exam question. "
          "You check each scoring point against the image; when a reference answer image is given after the "
          "generated image, use it as the model answer.")
USER = """Exam question (subject: {subject}): {prompt}

Scoring points:
{points}

For each scoring point answer 1 if the generated image (the first image) satisfies it, else 0.
Then grade the whole image, each an integer 0, 1 or 2:
- spelling: correctness of all text, labels and symbols (2 = no errors);
- readability: clarity and legibility of the drawing and its text (2 = fully clear);
- logic: logical and scientific consistency of the whole diagram (2 = fully consistent).
Reply with only a JSON object: {{"points": [{n} integers, each 0 or 1, in order], "spelling": 0-2, "readability": 0-2, "logic": 0-2}}"""


@dataclass(frozen=True)
class ExamItem:
    id: str
    subject: str
    prompt: str
    points: tuple[tuple[str, float], ...]   # (question, weight); weights sum to 1
    image_path: str | None                  # ground-truth image, relative to the data folder's images
    taxonomy: str = ""
    difficulty: str = ""

    def to_prompt(self):
        return make_prompt(self.id, "ED", "PSC", self.prompt, NAME, subject=self.subject,
                           taxonomy=self.taxonomy or None, difficulty=self.difficulty or None)


def load_items(data_dir: str | Path) -> Items:
    root = PROTOCOL.data_root(data_dir)
    folder = next((f for f in (root / "data" / "annotations", root / "annotations") if f.is_dir()), None)
    if folder is None:
        raise FileNotFoundError(f"{root}: GenExam annotations folder not found (expected data/annotations/*.jsonl)")
    items, problems, first = [], [], {}   # first: id -> (file:line, item) where it was read
    for path in sorted(folder.glob("*.jsonl")):  # per-subject files and/or the combined All_Subjects.jsonl
        try:
            lines = path.read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read, file skipped: {exc}")
            continue
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            item = _item(path, lineno, line, problems)
            if item is None:
                continue
            if item.id in first:  # the same exam in the combined file and its subject's file is read once
                where, prev = first[item.id]
                if (item.prompt, item.points) != (prev.prompt, prev.points):
                    problems.append(f"{path}:{lineno}: field 'id': '{item.id}' was already read from {where} with other "
                                    "content; this record is skipped")
                continue
            first[item.id] = (f"{path.name}:{lineno}", item)
            items.append(item)
    return Items(items, problems)


def _item(path: Path, lineno: int, line: str, problems: list[str]) -> ExamItem | None:
    where = f"{path}:{lineno}"
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        problems.append(f"{where}: invalid JSON: {exc.msg}")
        return None
    rid = rec.get("id") if isinstance(rec, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not isinstance(rec.get("prompt"), str):
        problems.append(f"{where}: fields 'id' (string) and 'prompt' (string) are required")
        return None
    where = f"{where} (id {rid})"
    points = _points(rec.get("scoring_points"))
    if points is None:
        problems.append(f"{where}: field 'scoring_points' must be a list of {{question: text, score: number}}")
        return None
    total = sum(w for _, w in points)
    if not points or any(w < 0 for _, w in points) or not math.isclose(total, 1.0, abs_tol=1e-3):
        problems.append(f"{where}: field 'scoring_points': weights must be non-negative and sum to 1 (sum {total:g})")
        return None
    image = rec.get("image_path")
    return ExamItem(str(rid), _subject(rec, path), rec["prompt"], points, image if isinstance(image, str) and image else None,
                    str(rec.get("taxonomy") or ""), str(rec.get("difficulty") or ""))


def _points(raw) -> tuple[tuple[str, float], ...] | None:
    """(question, weight) pairs; weights may be written as numbers or numeric text."""
    if not isinstance(raw, list):
        return None
    points = []
    for p in raw:
        q, w = (p.get("question"), p.get("score")) if isinstance(p, dict) else (None, None)
        try:
            weight = float(w) if not isinstance(w, bool) and isinstance(w, (int, float, str)) else math.nan
        except ValueError:
            weight = math.nan
        if not isinstance(q, str) or not q.strip() or not math.isfinite(weight):
            return None
        points.append((q, weight))
    return tuple(points)


def _subject(rec: dict, path: Path) -> str:
    """The record's `subject`, else its id's prefix (`Computer_Science_12`), else the file name: the combined
    All_Subjects.jsonl holds every subject."""
    if isinstance(rec.get("subject"), str) and rec["subject"].strip():
        return rec["subject"].strip()
    m = re.fullmatch(r"(.+)_\d+", str(rec["id"]))
    return m.group(1) if m else path.stem


def ground_truth_image(item: ExamItem, data_dir: Path | None) -> bytes | None:
    """The reference image when the data folder has it (the public annotations ship without images)."""
    if not item.image_path or data_dir is None:
        return None
    root = PROTOCOL.data_root(data_dir)
    for base in (root / "data" / "images", root / "images", root / "data"):
        path = base / item.image_path
        if path.is_file():
            return path.read_bytes()
    return None


def make_parser(n_points: int):
    def parse(text: str) -> dict:
        reply = Reply(text)
        answers = reply.get("points", ("answers",))
        if not isinstance(answers, list):
            raise ReplyFormatError("'points' must be a list of 0/1 answers")
        if len(answers) != n_points:
            raise ReplyFormatError(f"'points' has {len(answers)} answers but there are {n_points} scoring points")
        clean = []
        for i, a in enumerate(answers, start=1):
            if isinstance(a, dict):  # the benchmark's own format: [{"answer": 1, ...}, ...]
                a = next((v for k, v in a.items() if str(k).lower() == "answer"), None)
            clean.append(int(boolean(a, f"answer {i}")))
        return {"points": clean, **{g: int_score(reply, g, 0, 2, aliases=GLOBAL_ALIASES[g]) for g in GLOBALS}}
    return parse


def queries(item: ExamItem, criteria=None, data_dir=None) -> list[Query]:
    points = "\n".join(f"{i}. {q} (weight {w:g})" for i, (q, w) in enumerate(item.points, start=1))
    gt = ground_truth_image(item, data_dir)
    user = USER.format(subject=item.subject, prompt=item.prompt, points=points, n=len(item.points))
    return [Query("exam", user, make_parser(len(item.points)), SYSTEM, extra_images=(gt,) if gt else ())]


# --- the benchmark's own questions: eval_prompt.py, run_eval.py ------------------------------------------------

UPSTREAM_BODY = (("stream", False), ("reasoning_effort", "low"), ("verbosity", "medium"), ("max_completion_tokens", 16384))
UPSTREAM_IMG_SIZE = 768  # eval_single's img_size


@lru_cache(maxsize=None)
def _upstream_pieces(folder: str):
    prompt = constant("GenExam", folder, "eval_prompt.py", "prompt_for_eval")
    encode = function("GenExam", folder, "run_eval.py", "encode_image", {"Image": Image, "io": io, "base64": base64})
    for piece in ("call_gpt5", "eval_single"):
        verified_source("GenExam", folder, "run_eval.py", piece)
    return prompt, encode


def upstream_queries(folder: str, item, criteria=None, extra=None) -> list[Query]:
    prompt, encode = _upstream_pieces(str(folder))
    ground_truth = (extra or {}).get("ground_truth")
    if ground_truth is None:
        raise ValueError(f"GenExam item {item.id}: the benchmark's run_eval.py requires the ground-truth image "
                         f"({item.image_path}); put the data's images/ folder beside annotations/")

    def jpeg(file) -> bytes:
        """eval_single's encoding of an image file (a path, or bytes read as a file)."""
        try:
            return base64.b64decode(encode(file, target_size=UPSTREAM_IMG_SIZE))
        except OSError as exc:  # e.g. an LA or 16-bit greyscale PNG: JPEG cannot hold its mode
            raise ValueError(f"GenExam's encode_image cannot send this image ({exc}); the benchmark's run_eval.py "
                             "fails on it too") from None

    def generated(image: np.ndarray, source: Path | None) -> bytes:
        return jpeg(source if source is not None else io.BytesIO(png_bytes(image, 0)))

    try:
        reference = jpeg(io.BytesIO(ground_truth))
    except ValueError as exc:
        raise ValueError(f"GenExam item {item.id}: the ground-truth image {item.image_path}: {exc}") from None
    user = prompt.format(prompt=item.prompt, scoring_points=[q for q, _ in item.points])
    wire = WireFormat(system_parts=False, image_mime="image/jpeg", image_detail="high", body=UPSTREAM_BODY, attempts=3)
    return [Query("exam", user, upstream_parser(len(item.points)), wire=wire, encode=generated, extra_images=(reference,))]


def upstream_parser(n_points: int) -> Callable[[str], dict]:
    """run_eval.py's reading (the text after the last ```json fence, json.loads else a Python literal) and its
    checks, then the fields cal_score.py reads."""
    def parse(text: str) -> dict:
        body = text.split("```json")[-1].split("```")[0]
        try:
            obj = json.loads(body)
        except ValueError:
            try:
                obj = ast.literal_eval(body)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise ReplyFormatError("the reply is neither JSON nor a Python literal after the last ```json") from None
        try:
            answers, ge = obj["answers"], obj["global_evaluation"]
            ok = len(answers) == n_points and all(a["answer"] in [0, 1] for a in answers)
            scores = {g: ge[name]["score"] for g, name in (("spelling", "Spelling"), ("readability", "Clarity and Readability"),
                                                          ("logic", "Logical Consistency"))}
        except (KeyError, TypeError, AttributeError):
            raise ReplyFormatError("the reply lacks the benchmark's answers / global_evaluation fields") from None
        if not ok or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores.values()):
            raise ReplyFormatError(f"the reply needs {n_points} answers of 0 or 1 and numeric global scores")
        return {"points": [int(a["answer"] == 1) for a in answers], **scores}
    return parse


def scores(item: ExamItem, answer: dict) -> dict:
    """As the benchmark's cal_score.py computes them, its rounding included (semantic 4, relaxed 3 decimals)."""
    correct = answer["points"]
    strict = float(all(correct) and all(answer[g] == 2 for g in GLOBALS))
    semantic = round(sum(w for (_, w), ok in zip(item.points, correct) if ok), 4)
    relaxed = semantic * 0.7
    for g in GLOBALS:  # added in the benchmark's order, so its float rounding matches too
        relaxed += answer[g] * 0.1 / 2
    return {"strict": strict, "relaxed": round(relaxed, 3)}


def score(outcome: Outcome, which: str) -> tuple[float, dict]:
    answer = outcome.answers.get("exam")
    if not isinstance(answer, dict):
        raise ReplyFormatError("no exam answer")
    item: ExamItem = outcome.item
    return scores(item, answer)[which], {**answer, "subject": item.subject,
                                          "weights": [w for _, w in item.points],
                                          "ground_truth_image": bool((outcome.context.get("extra_images") or {}).get("exam"))}


def summarize(df: pd.DataFrame, items=None) -> dict:
    """`pooled`: the mean over all scored exams, what cal_score.py prints as its Average (and, since the public
    annotations carry no `subject` field, its only group); `subject_averaged`: the unweighted mean of the
    per-subject means (subject = id prefix), which cal_score.py does not compute. Exams without a result are
    left out of both, as cal_score.py averages the result files it finds; `missing` counts them."""
    out: dict = defaultdict(dict)
    for metric in ("genexam.strict", "genexam.relaxed"):
        ok, coverage = ok_rows(df, metric)
        for model, g in each_model(df, metric, ok):
            subjects = means_by(g, "subject")
            pooled = float(g["score"].mean()) if len(g) else None
            out[model][metric] = {"overall": pooled, "pooled": pooled,
                                  "printed": f"{round(pooled * 100, 1)}%" if pooled is not None else None,
                                  "subjects": subjects,
                                  "subject_averaged": sum(subjects.values()) / len(subjects) if subjects else None,
                                  "subject_averaged_rule": "vistar: unweighted mean of the subject means (not in cal_score.py)",
                                  "missing": missing_items(g, items), "coverage": coverage.get(model)}
    return dict(out)


def headline(numbers: dict) -> dict:
    return {metric: {"overall": v["overall"], "missing": v["missing"]} for metric, v in numbers.items()}


def demo_reply(system: str, user: str, facts) -> str:
    """Each scoring point answered by the demo rule for yes/no questions, the global ratings by brightness."""
    points = re.findall(r"^\d+\. (.*) \(weight", user, re.M)
    return json.dumps({"points": [int(yes(p, *facts)) for p in points], **{g: level(2, facts[1]) for g in GLOBALS}})


PROTOCOL = Protocol(NAME, VERSION, {"genexam.strict": lambda o: score(o, "strict"),
                                    "genexam.relaxed": lambda o: score(o, "relaxed")},
                    (SYSTEM, USER), load_items, queries, summarize, headline, demo_reply, (SYSTEM,),
                    data_subdir="GenExam",
                    extra_inputs=lambda item, data_dir: {"ground_truth": ground_truth_image(item, data_dir)},
                    upstream=Family("GenExam", upstream_queries))
