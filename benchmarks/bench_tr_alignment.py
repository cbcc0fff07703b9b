"""Time of TR's word alignment (vistar.metrics.text_similarity.word_distance), the part of the metric that grows
with the text: N words against a reading of them with a typo and two words run together, and against N
unrelated words, caches cleared before each call (docs/metrics/tr.md, Formula).

    python benchmarks/bench_tr_alignment.py [--words 10 30] [--repeats 5]
"""
from __future__ import annotations

import argparse
import random
import time

from vistar.metrics import text_similarity
from vistar.validity.tr import WORDS


def best_ms(recognised: list[str], expected: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        text_similarity.char_distance.cache_clear()
        text_similarity.joined_cost.cache_clear()
        start = time.perf_counter()
        text_similarity.word_distance(recognised, expected)
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if min(args.words) < 2:
        parser.error("--words: at least 2 (two of them are run together)")
    rng, bank = random.Random(0), [w.lower() for w in WORDS["latin"] + WORDS["polish"]]
    for n in args.words:
        expected = [rng.choice(bank) for _ in range(n)]
        unrelated = [rng.choice(bank) for _ in range(n)]
        near = list(expected)
        near[n // 3] += "x"
        near[-2:] = ["".join(near[-2:])]
        print(f"{n:3d} words: near reading {best_ms(near, expected, args.repeats):6.1f} ms, "
              f"unrelated {best_ms(unrelated, expected, args.repeats):6.1f} ms "
              f"(joins up to {getattr(text_similarity, 'MAX_JOINED', 2)} words)", flush=True)


if __name__ == "__main__":
    main()
