"""HWPQ per-question vs batched mode: HTTP requests, tokens and cost per image, measured against the local
judge server (its token counts approximate API billing: 4 characters per token, 255 tokens per image).

    python benchmarks/hwpq_modes.py [--pairs 8] [--images 5] [--input-price 2.5] [--output-price 10]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from vistar.api import RunOptions, StageContext, StageInput
from vistar.prompts_dsl import parse_prompt
from vistar.vlm.config import JudgeConfig
from vistar.vlm.hwpq.questionnaire import validate
from vistar.vlm.hwpq.stage import compute
from vistar.vlm.hwpq.store import QuestionnaireStore
from vistar.vlm.prices import Ledger
from vistar.vlm.testing_server import JudgeServer


def questionnaire(pairs: int) -> dict:
    per_level = max(1, pairs // 4)
    return {"levels": [{"level": f"L{lv}", "weight": 0.25, "pairs": [
        {"id": f"L{lv}.{i}", "weight": 1 / per_level,
         "positive": f"Does the image clearly show requirement {lv}.{i} of the prompt, in the requested style?",
         "negative": f"Does the image contradict requirement {lv}.{i} of the prompt or show it in another style?"}
        for i in range(per_level)]} for lv in range(1, 5)]}


def measure(mode: str, pairs: int, images: int, prices: Path, tmp: Path, url: str) -> dict:
    prompt = parse_prompt("[GD|SF] a poster fusing ukiyo-e waves with art deco geometry", id="p1")
    store = QuestionnaireStore(tmp / "hwpq")
    store.put(validate(questionnaire(pairs)), prompt)
    rng = np.random.default_rng(0)
    inputs = [StageInput(rng.integers(0, 256, (256, 256, 3), dtype=np.uint8), prompt, {}) for _ in range(images)]
    ledger = Ledger()
    judge = JudgeConfig(url=url, model="bench-judge", mode=mode, cache_path=str(tmp / f"cache-{mode}.sqlite"),
                        prices=str(prices))
    ctx = StageContext(options=RunOptions(judge=judge, hwpq_dir=str(tmp / "hwpq")), judge_ledger=ledger)
    outputs = compute(inputs, ctx)
    assert all(not isinstance(o, Exception) for o in outputs), outputs
    return ledger.summary()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--images", type=int, default=5)
    ap.add_argument("--input-price", type=float, default=2.5, help="USD per 1M prompt tokens")
    ap.add_argument("--output-price", type=float, default=10.0, help="USD per 1M completion tokens")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, JudgeServer() as server:
        tmp = Path(d)
        prices = tmp / "prices.yaml"
        prices.write_text(f"models:\n  bench-judge: {{input: {args.input_price}, output: {args.output_price}}}\n")
        rows = {mode: measure(mode, args.pairs, args.images, prices, tmp, server.url) for mode in ("per-question", "batched")}
    print(f"HWPQ, {args.pairs} P/N pairs, k=3 votes, {args.images} images, ${args.input_price}/${args.output_price} per 1M tokens in/out")
    print(f"{'mode':<14}{'requests/img':>14}{'tokens in/img':>15}{'tokens out/img':>16}{'USD/img':>11}{'USD/1000 img':>15}")
    for mode, s in rows.items():
        n = args.images
        print(f"{mode:<14}{s['http_requests'] / n:>14.1f}{s['prompt_tokens'] / n:>15.0f}{s['completion_tokens'] / n:>16.0f}"
              f"{s['cost_per_image_usd']:>11.5f}{1000 * s['cost_usd'] / n:>15.2f}")
    ratio = rows["per-question"]["cost_usd"] / rows["batched"]["cost_usd"]
    print(f"per-question costs {ratio:.1f}x batched")


if __name__ == "__main__":
    main()
