"""Upstream-exact judge questions: the messages, decoding fields, retry rule and answer reading of each
benchmark's own evaluation script, built from the pinned pieces of the user's upstream checkout
(upstream_source). Scores from these are comparable with the benchmark's published tables; scores from
vistar's own templates (the protocol modules' SYSTEM/USER) are not.

What the scripts leave open is filled as documented in docs/judges.md: the judge model (the user's), UniEval's
call (its script hands the question to each model's own `understand`), PhyBench's undefined `extra` (empty).
"""
from __future__ import annotations

import ast
import base64
import io
import json
import re
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np
from PIL import Image

from ..errors import ReplyFormatError
from ..images import file_as_is, png_bytes
from ..types import WireFormat, text_hash
from . import phybench as vistar_phybench
from .base import Query
from .upstream_source import UPSTREAMS, constant, function, inner_assignment, verified_source

_TYPING = {"Dict": Dict, "Any": Any, "List": List}
UPSTREAM_TEMPLATE = "upstream"  # the prompt control value (`template="upstream"`) that asks for this module's requests


@dataclass(frozen=True)
class Family:
    """The benchmark's own questions for one protocol: `ask(folder, item, criteria, extra)` builds an item's
    questions from the pinned pieces in the checkout FOLDER (`extra`: what the protocol's `extra_inputs` read),
    `criteria(folder, item)` its text-only first question, if it has one."""

    suite: str          # the protocol it replaces the templates of
    upstream: str       # UPSTREAMS key
    ask: Callable[[str, Any, Any, dict], list[Query]]
    criteria: Callable[[str, Any], Query | None] = lambda folder, item: None
    note: str = ""      # what the upstream script leaves open and vistar fills

    @property
    def label(self) -> str:
        return UPSTREAMS[self.upstream].label

    @property
    def version(self) -> str:
        return f"upstream-{UPSTREAMS[self.upstream].commit[:7]}"

    def template_hash(self) -> str:
        return text_hash(*UPSTREAMS[self.upstream].pins.values())


def vistar_label(suite: str, version: str) -> str:
    return f"vistar-{suite}-{version}: not comparable with published tables"


# --- WISE: vllm_eval.py (verified) and WISE_legacy/gpt_eval.py ---------------------------------------------

_WISE_FILES = {"wise-verified": "vllm_eval.py", "wise-legacy": "WISE_legacy/gpt_eval.py"}
_WISE_KEYS = {"wise-verified": ("score",), "wise-legacy": ("consistency", "realism", "aesthetic_quality")}
_WISE_BODY = {"wise-verified": (("temperature", 0.0), ("max_tokens", 500), ("chat_template_kwargs", {"enable_thinking": False})),
              "wise-legacy": (("temperature", 0.0), ("max_tokens", 2000))}


def _strip_think(content: str) -> str:
    """vllm_eval.py's cleanup of a reply before reading it."""
    content = re.sub(r"<think>.*?</think>\s*", "", content, flags=re.DOTALL)
    content = re.sub(r"</think>\s*", "", content)
    return content.strip()


@lru_cache(maxsize=None)
def _wise_pieces(suite: str, folder: str):
    file = _WISE_FILES[suite]
    build = function("WISE", folder, file, "build_evaluation_messages", _TYPING)
    extract = function("WISE", folder, file, "extract_scores", {"re": re, **_TYPING})
    verified_source("WISE", folder, file, "_chat_completion_via_vllm" if suite == "wise-verified" else "evaluate_image")
    return build, extract


def wise_queries(suite: str, folder: str, item, criteria=None, extra=None) -> list[Query]:
    build, extract = _wise_pieces(suite, str(folder))
    messages = build({"Prompt": item.prompt, "Explanation": item.explanation, "Subcategory": item.subcategory}, "")
    system, user = messages[0]["content"][0]["text"], messages[1]["content"][0]["text"]
    keys = _WISE_KEYS[suite]

    def parse(text: str) -> dict:
        scores = extract(text)
        missing = [k for k in keys if k not in scores]
        if missing:
            raise ReplyFormatError(f"the benchmark's extract_scores finds no {', '.join(missing)} in the reply")
        return {"score": int(scores["score"]), "reason": ""} if suite == "wise-verified" else {k: scores[k] for k in keys}

    wire = WireFormat(image_mime="image/png", body=_WISE_BODY[suite], attempts=3,
                      clean=_strip_think if suite == "wise-verified" else None)
    qid = "binary" if suite == "wise-verified" else "rubric"
    return [Query(qid, user, parse, system, wire=wire, encode=file_as_is)]


# --- GenExam: eval_prompt.py, run_eval.py ----------------------------------------------------------------------

GENEXAM_BODY = (("stream", False), ("reasoning_effort", "low"), ("verbosity", "medium"), ("max_completion_tokens", 16384))
GENEXAM_IMG_SIZE = 768  # eval_single's img_size


@lru_cache(maxsize=None)
def _genexam_pieces(folder: str):
    prompt = constant("GenExam", folder, "eval_prompt.py", "prompt_for_eval")
    encode = function("GenExam", folder, "run_eval.py", "encode_image", {"Image": Image, "io": io, "base64": base64})
    for piece in ("call_gpt5", "eval_single"):
        verified_source("GenExam", folder, "run_eval.py", piece)
    return prompt, encode


def genexam_queries(folder: str, item, criteria=None, extra=None) -> list[Query]:
    prompt, encode = _genexam_pieces(str(folder))
    ground_truth = (extra or {}).get("ground_truth")
    if ground_truth is None:
        raise ValueError(f"GenExam item {item.id}: the benchmark's run_eval.py requires the ground-truth image "
                         f"({item.image_path}); put the data's images/ folder beside annotations/")

    def jpeg(file) -> bytes:
        """eval_single's encoding of an image file (a path, or bytes read as a file)."""
        try:
            return base64.b64decode(encode(file, target_size=GENEXAM_IMG_SIZE))
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
    wire = WireFormat(system_parts=False, image_mime="image/jpeg", image_detail="high", body=GENEXAM_BODY, attempts=3)
    return [Query("exam", user, genexam_parser(len(item.points)), wire=wire, encode=generated, extra_images=(reference,))]


def genexam_parser(n_points: int) -> Callable[[str], dict]:
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


# --- UniEval: uni_eval.py -------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _unieval_pieces(folder: str):
    check = function("UniEval", folder, "uni_eval.py", "check_answer", {"re": re})
    options = compile(ast.Expression(inner_assignment("UniEval", folder, "uni_eval.py", "uni_eval", "options")), "options", "eval")
    return check, options


def unieval_queries(folder: str, item, criteria=None, extra=None) -> list[Query]:
    check, options_expr = _unieval_pieces(str(folder))
    queries = []
    for qa in item.qas:
        options = eval(options_expr, {}, {"QA": {"question": qa.question}})  # noqa: S307 - the pinned upstream expression

        def parse(text: str, qa=qa, options=options) -> dict:
            _, response = check(text, qa.answer, options)
            letter = response if response in tuple("ABCDE") else None
            return {"letter": letter} if letter else {"letter": None, "reply": text[:300]}

        wire = WireFormat(system_parts=False, image_mime=None, body=(("temperature", 0.0), ("max_tokens", 64)))
        queries.append(Query(f"qa{qa.id}", qa.question, parse, wire=wire, encode=file_as_is))
    return queries


# --- PhyBench: GPT_make_grading.py, GPT_make_eval.py -----------------------------------------------------------------

def _phy_text(folder: str, file: str, variables: dict, parts: tuple[str, ...]) -> str:
    """`content` as the script concatenates it, each part evaluated from the pinned function's own code."""
    values = dict(variables)
    for name in parts:
        if name not in values:
            expr = inner_assignment("PhyBench", folder, file, "process_data", name)
            values[name] = eval(compile(ast.Expression(expr), name, "eval"), {}, values)  # noqa: S307 - pinned text
    return "".join(values[p] for p in parts)


def phybench_criteria_query(folder: str, item) -> Query | None:
    """GPT_make_grading.py's question, for an item whose data carries no criteria."""
    if item.criteria:
        return None
    user = _phy_text(str(folder), "GPT_make_grading.py", {"scene": item.scene, "normal": item.normal},
                     ("task", "prompt", "template", "answer"))
    wire = WireFormat(system_parts=False, body=(("max_tokens", 2000),))
    return Query("criteria", user, _any_text, with_image=False, wire=wire)


def phybench_queries(folder: str, item, criteria=None, extra=None) -> list[Query]:
    folder, criteria = str(folder), item.criteria or criteria
    task = constant("PhyBench", folder, "GPT_make_eval.py", "task")
    answer = constant("PhyBench", folder, "GPT_make_eval.py", "answer")
    user = _phy_text(folder, "GPT_make_eval.py", {"scene": item.scene, "normal": item.normal, "grading": criteria,
                                                  "extra": "", "task": task, "answer": answer},
                     ("task", "prompt", "answer"))
    wire = WireFormat(system_parts=False, image_mime="image/jpeg", body=(("max_tokens", 500),))
    return [Query("grade", user, vistar_phybench.parse, wire=wire, encode=file_as_is)]


def _any_text(text: str) -> str:
    """GPT_make_grading.py keeps whatever the model wrote as the criteria."""
    if not text.strip():
        raise ReplyFormatError("empty criteria")
    return text


FAMILIES = {
    "wise-verified": Family("wise-verified", "WISE", partial(wise_queries, "wise-verified")),
    "wise-legacy": Family("wise-legacy", "WISE", partial(wise_queries, "wise-legacy")),
    "genexam": Family("genexam", "GenExam", genexam_queries),
    "unieval": Family("unieval", "UniEval", unieval_queries,
                      note="the script hands the question to each model's own `understand`; vistar sends it as the user "
                           "text before the image, with vistar's decoding"),
    "phybench": Family("phybench", "PhyBench", phybench_queries, phybench_criteria_query,
                       note="GPT_make_eval.py appends an undefined `extra` to the prompt; vistar appends nothing. Its replies "
                            "are stored unparsed; vistar reads them as the vistar protocol does"),
}


def queries(suite: str, folder: str | Path, item, criteria=None, **extra) -> list[Query]:
    """The item's questions as the benchmark's script asks them (`extra`: e.g. GenExam's `ground_truth` image)."""
    return FAMILIES[suite].ask(str(folder), item, criteria, extra)


def criteria_query(suite: str, folder: str | Path, item) -> Query | None:
    return FAMILIES[suite].criteria(str(folder), item)
