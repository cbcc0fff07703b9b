"""`vistar score --suite` run in-process against the local test judge, over solid-colour images of one model."""
from PIL import Image
from typer.testing import CliRunner

from tests.support.vlm_helpers import solid
from vistar.cli import app
from vistar.engine.store import read_scores
from vistar.vlm.testing_server import JudgeServer


def run_suite(tmp_path, suite, data_dir, images: dict[str, tuple], *options: str):
    """`vistar score --suite SUITE` over solid-colour IMAGES of one model, judged by the local test judge (with
    any further OPTIONS): ({(image stem, metric): score}, judge requests), every row `ok`."""
    folder = tmp_path / "images" / "modelA"
    folder.mkdir(parents=True)
    for name, rgb in images.items():
        Image.fromarray(solid(rgb)).save(folder / f"{name}.png")
    with JudgeServer() as server:
        result = CliRunner().invoke(app, ["score", str(tmp_path / "images"), "--suite", suite, "--data-dir", str(data_dir),
                                          "--out", str(tmp_path / "run"), "--judge-url", server.url, "--judge-model", "t", *options],
                                    env={"VISTAR_HOME": str(tmp_path / "home")})
        n_requests = len(server.requests)
    assert result.exit_code == 0, result.output
    frame = read_scores(tmp_path / "run")
    assert set(frame.status) == {"ok"}, frame[["prompt_id", "metric", "error"]].to_string()
    return {(r.image.rsplit('/', 1)[-1].rsplit('.', 1)[0], r.metric): r.score for r in frame.itertuples()}, n_requests
