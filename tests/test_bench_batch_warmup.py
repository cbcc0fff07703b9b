"""`vistar bench` times a stage's throughput at each batch size only after one untimed call at each batch shape
that size makes: the first call at a new shape (allocations, kernel choice) would otherwise fall in the timing."""
from __future__ import annotations

from vistar.api import FeatureStage
from vistar.engine import bench
from vistar.engine.bench_inputs import Item
from vistar.ontology import Ontology
from vistar.prompts_dsl import parse_prompt


def test_each_batch_shape_runs_untimed_before_its_throughput_is_timed(monkeypatch):
    calls: list[tuple[int, bool]] = []   # (batch length, inside a timed call)
    timing = [False]

    def timed(fn, device):
        timing[0] = True
        try:
            fn()
        finally:
            timing[0] = False
        return 1.0

    def compute(inputs, ctx):
        calls.append((len(inputs), timing[0]))
        return [0] * len(inputs)

    monkeypatch.setattr(bench.registry, "feature_stage", lambda name: FeatureStage("fake", "1", compute))
    monkeypatch.setattr(bench, "_timed", timed)
    monkeypatch.setattr(bench, "_flops", lambda fn: None)
    items = [Item(None, parse_prompt("[SA|PSC] a scene")) for _ in range(5)]
    rep = bench.bench_stage("fake", items, [{} for _ in items], bench.StageContext(device="cpu"), Ontology.load(None),
                            [2, 4], repeats=3)
    assert set(rep.throughput) == {2, 4}
    warm_up = [(1, True), (4, False)]    # the first image (its time is the 1st ms), then the rest of the workload
    latency = [(1, True)] * 5 * 3        # every image alone, --repeats times
    batch_2 = [(2, False), (1, False)] + [(2, True), (2, True), (1, True)]   # 5 images: shapes 2 and 1, one timed pass
    batch_4 = [(4, False), (1, False)] + [(4, True), (1, True)]
    assert calls == warm_up + latency + batch_2 + batch_4
