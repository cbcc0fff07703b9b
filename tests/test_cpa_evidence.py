"""CPA without the person detector's weight counts people from faces and poses alone: its rows are `ok` but must
say so (details), and the end-of-run summary must name the missing weight and its fetch command, as it does for
skipped rows (a faces-only count misses people seen from behind or cut by the frame: bus.jpg 2 of 4)."""
import json

import numpy as np
import pandas as pd
import pytest
from matplotlib import cbook
from PIL import Image

from tests.support.fetched_weights import fetched_person_weights
from tests.support.run_inputs import prompts
from tests.support.score_cli import last_line, score
from vistar.cli.summary import degraded_lines
from vistar.engine.store import read_scores


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return fetched_person_weights(tmp_path_factory)


@pytest.mark.slow
def test_faces_only_count_is_named_in_the_row_and_in_the_end_of_run_summary(tmp_path, monkeypatch, weights):
    monkeypatch.setenv("VISTAR_HOME", str(tmp_path / "home"))   # a fresh machine: no fetched weights
    (tmp_path / "imgs" / "m").mkdir(parents=True)
    Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB").save(tmp_path / "imgs" / "m" / "hopper.png")
    res = score(tmp_path, tmp_path / "imgs", prompts(tmp_path / "p.vistar", ["hopper: [SA|CPA] an officer {count=1}"]))
    assert res.exit_code == 0, res.output
    row = read_scores(tmp_path / "run").iloc[0]
    details = json.loads(row.details)
    assert row.status == "ok" and details["person_source"] == "pose+faces"
    assert details["degraded"].startswith("no person detector, missing model weight 'ssd-mobilenet-v2-coco'")
    lines = res.output.splitlines()
    start = lines.index("scored with less evidence (first reason per angle; rows' `details.degraded`):")
    assert lines[start + 1] == "  CPA 1 ok: no person detector, missing model weight 'ssd-mobilenet-v2-coco'"
    assert lines[start + 2] == "      fix: vistar models fetch ssd-mobilenet-v2-coco (or --model-path NAME=PATH)"
    assert all(len(line) <= 80 for line in lines[start:start + 3])
    assert last_line(res) == "complete (rows: 1 ok)"
    # the fix works: with the weight, the same command scores the row again (it is not reused) with the detector
    again = score(tmp_path, tmp_path / "imgs", tmp_path / "p.vistar", "--model-path", f"ssd-mobilenet-v2-coco={weights}")
    assert again.exit_code == 0 and "scored 1 rows (1 ok); 0 already in" in again.output, again.output
    details = json.loads(read_scores(tmp_path / "run").iloc[0].details)
    assert details["person_source"] == "persons+faces" and "degraded" not in details
    assert "scored with less evidence" not in again.output


def test_rows_with_full_evidence_or_unreadable_details_add_no_summary_line():
    rows = pd.DataFrame({"status": ["ok", "ok", "ok", "skipped"], "angle": ["CPA", "CPA", "TR", "CPA"],
                         "details": ['{"person_source": "persons+faces"}', "not json", None,
                                     '{"degraded": "no person detector, x"}']})
    assert degraded_lines(rows) == []
    rows.loc[1, "details"] = json.dumps({"degraded": "no person detector, missing model weight 'w': run `vistar models fetch w`"})
    rows.loc[2, "details"] = json.dumps({"degraded": "other reason"})
    assert degraded_lines(rows)[1:] == ["  CPA 1 ok: no person detector, missing model weight 'w'",
                                        "      fix: vistar models fetch w (or --model-path NAME=PATH)",
                                        "  TR 1 ok: other reason",
                                        "      fix: fix the cause, then rerun"]
    assert np.all([len(line) <= 80 for line in degraded_lines(rows)])
