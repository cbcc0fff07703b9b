"""`--executor`, `--ray-address` and `--cpu-workers` are checked before the run folder exists; a missing Ray is
refused naming the extra that installs it; the default worker count follows the run's size and device."""
import sys
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from tests.support.run_inputs import png, prompts
from vistar.cli import app
from vistar.engine.executors.workers import local_workers, usable_cores


def _score(tmp_path, *extra):
    png(tmp_path / "imgs" / "m" / "p1.png")
    p = prompts(tmp_path / "p.vistar", ['p1: [GD|TR] "A"'])
    return CliRunner().invoke(app, ["score", str(tmp_path / "imgs"), "--prompts", str(p), "--out", str(tmp_path / "run"),
                                    *extra])


def test_missing_ray_names_the_extra_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    res = _score(tmp_path, "--executor", "ray")
    assert res.exit_code == 2 and "pip install 'vistar[ray]'" in res.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("extra, message", [(["--executor", "spark"], "--executor must be one of local, ray"),
                                            (["--ray-address", "auto"], "--ray-address needs --executor ray")])
def test_bad_executor_options_exit_2(tmp_path, extra, message):
    res = _score(tmp_path, *extra)
    assert res.exit_code == 2 and message in res.output
    assert not (tmp_path / "run").exists()


def test_default_worker_count():
    cfg = SimpleNamespace(cpu_workers=None, device="cpu")
    cores = usable_cores()
    assert local_workers(cfg, 3, warm=False) == 1                      # too short to pay a model load per worker
    assert local_workers(cfg, 100, warm=False) == cores
    assert local_workers(cfg, 100, warm=True) == 1                     # vistar bench's warm models are in this process
    assert local_workers(SimpleNamespace(cpu_workers=None, device="cuda"), 100, warm=False) == 1
    assert local_workers(SimpleNamespace(cpu_workers=4, device="cuda"), 100, warm=False) == 4   # asked for: obeyed
    assert local_workers(SimpleNamespace(cpu_workers=4, device="cpu"), 2, warm=False) == 2     # never idle workers
