"""The Ray pipeline's plan (no Ray needed: these are the actor pools the executor starts): stage pools,
decoding and metrics in the first and last CPU group's actors (pools of their own next to a GPU group), stages
grouped where their resource changes, GPU shares only for the stages that run
on the run's device under `--device cuda`, and CPU/GPU requests that fit every node whichever node Ray picks."""
from __future__ import annotations

import random

import pytest

from vistar.api import FeatureStage
from vistar.engine import registry
from vistar.engine.executors.ray_plan import RayStage, actor_specs, group_stages, plan
from vistar.engine.executors.ray_stages import Scorer, StageRunner

# the stages the executor tests' mixed workload needs (TR, LI, CPA, GC, CSE), dependencies first
MIXED = registry.stage_order({"ocr", "instances", "shadows", "pose", "depth", "clip_embed", "dino_embed", "panels"})


def _fits(pipeline: list[RayStage], nodes: list[tuple[float, float]], trials: int = 300) -> bool:
    """Every actor placed, in random orders, on a random node that still has room, on NODES of (CPUs, GPUs), as
    Ray may (which keeps an actor that asks for no GPU off the GPU nodes while others have room:
    `scheduler_avoid_gpu_nodes`): True when no order leaves an actor without a node."""
    rng = random.Random(0)
    actors = [(s.num_cpus, s.num_gpus) for s in pipeline for _ in range(s.actors)]
    for _ in range(trials):
        free = [list(node) for node in nodes]
        rng.shuffle(actors)
        for cpu, gpu in actors:
            room = [k for k, n in enumerate(free) if n[0] >= cpu - 1e-9 and n[1] >= gpu - 1e-9]
            if gpu == 0:
                room = [k for k in room if nodes[k][1] == 0] or room
            if not room:
                return False
            k = rng.choice(room)
            free[k][0] -= cpu
            free[k][1] -= gpu
    return True


def test_cpu_run_is_one_pool_that_decodes_and_scores():
    pipeline = plan(MIXED, "cpu", cpus=2, gpus=0, n_batches=6, cpu_workers=None)
    assert pipeline == [RayStage("stages", tuple(MIXED), 2, 1.0, decode=True, score=True)]
    [spec] = actor_specs(pipeline, 4_000_000)
    assert spec["cls"] is StageRunner and spec["actors"] == 2 and spec["resources"] == {"num_cpus": 1.0}
    assert spec["kwargs"] == {"stages": tuple(MIXED), "keep_images": False, "device": "cpu", "max_pixels": 4_000_000,
                              "score": True}
    # the two-node test's cluster: one CPU on each node
    assert _fits(pipeline, [(1, 0), (1, 0)])


def test_pools_never_exceed_the_cluster_the_workers_or_the_batches():
    assert plan(MIXED, "cpu", cpus=16, gpus=0, n_batches=100, cpu_workers=3)[0].actors == 3
    assert plan(MIXED, "cpu", cpus=2, gpus=0, n_batches=100, cpu_workers=8)[0].actors == 2
    assert plan(MIXED, "cpu", cpus=16, gpus=0, n_batches=5, cpu_workers=None)[0].actors == 5
    assert plan([], "cpu", cpus=2, gpus=0, n_batches=3, cpu_workers=None) == [
        RayStage("stages", (), 2, 1.0, decode=True, score=True)]
    big = plan(["depth"], "cuda", cpus=64, gpus=8, n_batches=1000, cpu_workers=None)
    assert [(s.role, s.actors) for s in big] == [("decode", 8), ("stages", 16), ("metrics", 8)]   # one per 8 CPUs


def test_cuda_run_gives_gpu_shares_to_device_stages_only():
    stages = registry.stage_order({"clip_embed", "pose", "shadows"})
    assert stages == ["panels", "clip_embed", "faces", "pose", "instances", "shadows"]
    pipeline = plan(stages, "cuda", cpus=8, gpus=1, n_batches=100, cpu_workers=None)
    # panels, faces and pose are CPU-only libraries; clip_embed waits for panels, the rest for nothing on the CPU
    # the CPU group decodes; the GPU group is last, so the metrics get a pool of their own
    assert [(s.role, s.stages, s.decode, s.score) for s in pipeline] == [
        ("stages", ("panels", "faces", "pose"), True, False),
        ("stages", ("clip_embed", "instances", "shadows"), False, False), ("metrics", (), False, False)]
    cpu_pool, gpu_pool = pipeline[0], pipeline[1]
    assert (cpu_pool.actors, cpu_pool.num_cpus, cpu_pool.num_gpus) == (8, 0.5, 0.0)
    assert (gpu_pool.actors, gpu_pool.num_cpus, gpu_pool.num_gpus) == (2, 0.5, 0.5)   # two actors share the GPU
    specs = actor_specs(pipeline, 1000)
    assert "num_gpus" not in specs[0]["resources"] and specs[1]["resources"]["num_gpus"] == 0.5 and specs[2]["cls"] is Scorer
    cpu_args, gpu_args = specs[0]["kwargs"], specs[1]["kwargs"]
    assert (cpu_args["device"], cpu_args["keep_images"], cpu_args["max_pixels"], cpu_args["score"]) == ("cpu", True, 1000, False)
    assert (gpu_args["device"], gpu_args["keep_images"], gpu_args["max_pixels"], gpu_args["score"]) == ("cuda", False, None, False)
    assert _fits(pipeline, [(4, 1), (4, 0)]) and not _fits(pipeline, [(8, 0)])   # a GPU actor needs the GPU node


def test_ocr_and_judges_stay_on_cpu_actors_unless_ocr_asks_for_cuda():
    def kinds(params):
        pipeline = plan(["depth", "hwpq", "ocr"], "cuda", cpus=4, gpus=1, n_batches=10, cpu_workers=None,
                        stage_params=params)
        return [(s.stages, s.num_gpus > 0) for s in pipeline if s.role == "stages"]

    assert kinds({}) == [(("depth",), True), (("hwpq", "ocr"), False)]
    assert kinds({"ocr": {"provider": "cpu"}}) == kinds({})
    assert kinds({"ocr": {"provider": "cuda"}}) == [(("depth", "ocr"), True), (("hwpq",), False)]
    assert [s.num_gpus for s in plan(["depth", "ocr"], "cpu", cpus=4, gpus=1, n_batches=10, cpu_workers=None)] == [0]
    # a GPU group first: a decode pool of its own; the CPU group last scores
    assert [s.role for s in plan(["depth", "ocr"], "cuda", cpus=4, gpus=1, n_batches=10, cpu_workers=None)] == [
        "decode", "stages", "stages"]


def test_gpu_shares_pack_on_several_gpus():
    pipeline = plan(["depth"], "cuda", cpus=4, gpus=2, n_batches=3, cpu_workers=None)
    assert [s.role for s in pipeline] == ["decode", "stages", "metrics"]
    gpu_pool = pipeline[1]
    assert (gpu_pool.actors, gpu_pool.num_gpus) == (3, 0.5)   # three batches: three actors, two per GPU at most
    assert _fits(pipeline, [(2, 1), (2, 1)])
    few_cpus = plan(["depth"], "cuda", cpus=2, gpus=4, n_batches=100, cpu_workers=None)[1]
    assert (few_cpus.actors, few_cpus.num_cpus, few_cpus.num_gpus) == (2, 1.0, 1.0)   # two CPUs: two actors, a GPU each
    with pytest.raises(ValueError, match="has no GPU"):
        plan(["depth"], "cuda", cpus=4, gpus=0, n_batches=3, cpu_workers=None)


# a chain CPU -> GPU -> CPU: the second CPU stage needs the GPU stage's output, so three groups
def _stage(name, requires=()):
    return FeatureStage(name=name, version="1", compute=lambda inputs, ctx: [None] * len(inputs), requires=requires)


CHAIN = {"panels": _stage("panels"), "gpu_a": _stage("gpu_a", ("panels",)), "pose": _stage("pose", ("gpu_a",)),
         "thumbnail": _stage("thumbnail")}


def test_groups_follow_dependencies_across_kinds(monkeypatch):
    monkeypatch.setattr(registry, "FEATURES", {name: f"{__name__}:CHAIN" for name in CHAIN})
    monkeypatch.setattr(registry, "_resolve", lambda table, name, kind: CHAIN[name])
    order = registry.stage_order(set(CHAIN))
    assert order == ["panels", "gpu_a", "pose", "thumbnail"]
    on_gpu = {"gpu_a"}.__contains__
    # thumbnail is ready at once and CPU: it joins panels; pose must wait for gpu_a
    assert group_stages(order, on_gpu) == [("panels", "thumbnail"), ("gpu_a",), ("pose",)]
    pipeline = plan(order, "cuda", cpus=3, gpus=1, n_batches=10, cpu_workers=None)
    assert [(s.num_gpus > 0, s.decode, s.score) for s in pipeline] == [(False, True, False), (True, False, False),
                                                                      (False, False, True)]
    assert all(s.num_cpus == 0.3333 for s in pipeline)   # 1/3 in Ray's unit, rounded down: three fit a CPU
    assert _fits(pipeline, [(1, 1), (1, 0), (1, 0)])
