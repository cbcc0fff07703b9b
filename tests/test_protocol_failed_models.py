"""A model whose judge calls all failed is still in the summary (and so in summary-NAME.json and the printed
headline): no overall, coverage 0/N, every item missing, beside a model that was scored."""
from __future__ import annotations

import json

import pytest

from tests.support.protocol_helpers import rows
from vistar.vlm.protocols import genexam, phybench, unieval, wise_legacy, wise_verified
from vistar.vlm.protocols.genexam import ExamItem
from vistar.vlm.protocols.phybench import PhyItem


def _records(metric: str, details: dict) -> list[dict]:
    good = {"model": "good", "prompt_id": "1", "metric": metric, "score": 1.0, "details": details}
    failed = [{"model": "failed", "prompt_id": p, "metric": metric, "score": None, "status": "error"} for p in ("1", "2")]
    return [good, *failed]


def test_wise_reports_a_model_without_any_answer():
    for protocol, metric in ((wise_legacy, "wiscore.legacy"), (wise_verified, "wiscore.verified")):
        out = protocol.summarize(rows(_records(metric, {"category": "culture"})))
        assert set(out) == {"good", "failed"}
        failed = out["failed"]
        assert failed["overall"] is None and failed["coverage"] == "0/2" and failed["missing_ids"] == 1000
        assert failed["categories"] == {} and failed["printed"]["overall"] is None
        headline = protocol.PROTOCOL.headline(failed)
        assert headline == {"overall": None, "missing_ids": 1000, "coverage": "0/2"}
        json.dumps(out)  # what summary-NAME.json holds


@pytest.mark.parametrize("protocol,metrics,items,details", [
    (genexam, ("genexam.strict", "genexam.relaxed"),
     [ExamItem(i, "Physics", "prompt", (("q", 1.0),), None) for i in ("1", "2", "3")], {"subject": "Physics"}),
    (phybench, ("phybench.phy", "phybench.scene"),
     [PhyItem(i, "optics", "law", "prompt", "scene", "normal", None) for i in ("1", "2", "3")], {"category": "optics"}),
])
def test_genexam_and_phybench_report_a_model_without_any_answer(protocol, metrics, items, details):
    recs = [r for m in metrics for r in _records(m, details)]
    out = protocol.summarize(rows(recs), items)
    assert set(out) == {"good", "failed"}
    for metric in metrics:
        failed = out["failed"][metric]
        assert failed["overall"] is None and failed["coverage"] == "0/2" and failed["missing"] == 3
        assert out["good"][metric]["overall"] == 1.0 and out["good"][metric]["missing"] == 2
    assert protocol.PROTOCOL.headline(out["failed"]) == {m: {"overall": None, "missing": 3} for m in metrics}
    json.dumps(out)


def test_unieval_still_reports_a_model_without_any_answer():
    out = unieval.summarize(rows(_records("uniscore", {"answers": []})))
    assert set(out) == {"good", "failed"} and out["failed"]["coverage"] == "0/2"
