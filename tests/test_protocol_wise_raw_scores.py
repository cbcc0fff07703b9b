"""wise-legacy `--upstream` with replies whose scores are out of the rubric's 0-2 range: the benchmark's
extract_scores takes any digit (`Consistency: 7` is 7.0) and its Calculate.py averages (0.7·C + 0.2·R + 0.1·A)/2
as it is (2.6 for 7/1/1). vistar's row keeps a [0, 1] score with the raw answers in its details, and the
category means and overall are upstream's: checked against Calculate.py itself, run from the pinned copy."""
from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from tests.support.protocol_helpers import shared
from tests.support.upstream_helpers import fake_module, load_module, upstream_dir
from vistar.engine import registry
from vistar.vlm.protocols import PROTOCOLS, aggregate
from vistar.vlm.protocols.base import Outcome

REPLIES = ["Consistency: 7\nRealism: 1\nAesthetic Quality: 1", "Consistency: 2\nRealism: 2\nAesthetic Quality: 2",
           "**Consistency**: 0\n**Realism**: 9\n**Aesthetic Quality**: 3", "Consistency: 1\nRealism: 0\nAesthetic Quality: 1"]


def _rows(items: dict, replies: dict) -> pd.DataFrame:
    """scores.parquet rows as the engine writes them, each reply read by the upstream-exact parser."""
    metric = registry.metric("wiscore.legacy")
    out = []
    for pid, reply in replies.items():
        query = PROTOCOLS["wise-legacy"].upstream.queries(upstream_dir("WISE"), items[pid])[0]
        res = metric.fn({"judge.wise-legacy": Outcome("wise-legacy", items[pid], {query.qid: query.parse(reply)})}, {}, {}, None)
        out.append({"model": "m", "prompt_id": str(pid), "metric": "wiscore.legacy", "score": res.score,
                    "status": res.status, "details": json.dumps(res.details)})
    return pd.DataFrame(out)


def test_a_raw_row_keeps_a_unit_score_and_its_answers():
    items = {int(i.id): i for i in PROTOCOLS["wise-legacy"].load_items(shared("WISE"))}
    row = _rows(items, {1: REPLIES[0]}).iloc[0]
    assert row.score == 1.0 and row.status == "ok"
    assert json.loads(row.details)["consistency"] == 7  # (0.7·7 + 0.2 + 0.1)/2 = 2.6 upstream


def test_category_means_and_overall_equal_calculate_py(tmp_path, capsys):
    up = upstream_dir("WISE")
    items = {int(i.id): i for i in PROTOCOLS["wise-legacy"].load_items(shared("WISE"))}
    replies = {pid: REPLIES[pid % len(REPLIES)] for pid in items}
    ours = aggregate.summarize("wise-legacy", _rows(items, replies))["m"]

    script = load_module(up / "WISE_legacy" / "gpt_eval.py", requests=fake_module("requests"), openai=fake_module("openai"))
    lines = [json.dumps({"prompt_id": pid, **script.extract_scores(reply)}) for pid, reply in replies.items()]
    scores = tmp_path / "scores.jsonl"
    scores.write_text("\n".join(lines) + "\n")
    calc = load_module(up / "WISE_legacy" / "Calculate.py")
    saved, sys.argv = sys.argv, ["Calculate.py", str(scores)]
    try:
        calc.main()
    finally:
        sys.argv = saved
    printed = capsys.readouterr().out
    table = printed.strip().splitlines()[-1].split()   # Cultural Time Space Biology Physics Chemistry Overall
    order = ("CULTURE", "TIME", "SPACE", "BIOLOGY", "PHYSICS", "CHEMISTRY")
    assert table == [ours["printed"]["categories"][c] for c in order] + [ours["printed"]["overall"]]
    assert float(ours["printed"]["overall"]) > 1.0   # raw values averaged in, not clamped ones
    culture = [(0.7 * c + 0.2 * r + 0.1 * a) / 2 for c, r, a in ((7, 1, 1), (2, 2, 2), (0, 9, 3), (1, 0, 1))]
    assert ours["categories"]["culture"] == pytest.approx(sum(culture) / 4)
