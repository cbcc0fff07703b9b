"""`vistar score` run in-process through the CLI, as a user types it; a traceback in its output fails the test."""
from typer.testing import CliRunner

from vistar.cli import app


def score(tmp_path, images, prompt_file, *extra):
    res = CliRunner().invoke(app, ["score", str(images), "--prompts", str(prompt_file), "--out", str(tmp_path / "run"), *extra])
    assert "Traceback" not in res.output, res.output
    return res


def last_line(res) -> str:
    return res.output.strip().splitlines()[-1]
