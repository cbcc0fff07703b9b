"""The shape of the Ray pipeline for a run: which actor pools, what each runs, and what each asks Ray for.

One pool per group of feature stages. Stages are grouped where the resource they need changes, not one pool per
stage: with `--device cuda` the stages that put work on the GPU (`uses_gpu`) ask for a share of one and the
others do not, so a group is a run of consecutive stages (in a dependency order that keeps same-kind stages
together) of one kind; on CPU every stage is one group. A pool per stage would send every image through the
object store once per stage and start one more process per stage, for nothing: every actor of a group can run
any of its stages.

Decoding and the metrics go into the actors of the first and the last group when that group is on CPU: a CPU run
is then one pool whose actors each do what a `--cpu-workers` process does (decode, stages, metrics), and neither
pixels nor features cross the object store. Only next to a GPU group do they get a pool of their own (decode pool
-> GPU group, GPU group -> metrics pool), so a GPU actor's time goes to its stages, not to reading PNGs; those light
pools ask for no CPU and have one actor per `LIGHT_SHARE` stage actors.

CPU accounting (Ray will not start an actor whose `num_cpus` does not fit a node, and a pool short of actors
stalls the pipeline): each group's pool has one actor per cluster CPU (at most `--cpu-workers`, at most one per
batch), and each of those actors asks for 1/G of a CPU, G the number of groups (rounded down to Ray's unit). The
stage actors then reserve at most the cluster's CPUs, and as every request is the same 1/G, any node's whole CPUs
hold a whole number of them: whichever node Ray picks, every actor fits. The Dataset comes from `from_items`
(blocks put by the driver), so no read task needs a CPU either.

GPUs: `GPU_ACTORS_PER_GPU` actors of every accelerated group per GPU (one prepares its batch on the CPU while the
other runs on the GPU), each asking for its fraction of one GPU, so small models share a GPU; never more actors
than a CPU pool has, since each also asks for its 1/G of a CPU.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from ...runtime.device import CPU_STAGES, is_cuda, onnxruntime_provider
from .. import registry
from .ray_stages import Decoder, Scorer, StageRunner

GPU_ACTORS_PER_GPU = 2
LIGHT_SHARE = 8
RESOURCE_UNITS = 10_000   # Ray counts CPUs and GPUs in 1/10,000ths
JUDGE_STAGES = ("hwpq", "judge.")   # a VLM behind an API: network-bound, whatever the device


def uses_gpu(name: str, stage_params: dict[str, Any]) -> bool:
    """Whether stage NAME puts work on the GPU of a `--device cuda` run: not the CPU-only libraries
    (`device.CPU_STAGES`), not the judge stages, not OCR unless `features.ocr.provider` is `cuda`, or `auto` with
    onnxruntime's CUDA provider installed (onnxruntime runs it on the CPU otherwise); every torch stage (and the
    shadow detector's torch path) does."""
    if name in CPU_STAGES or name.startswith(JUDGE_STAGES):
        return False
    if name == "ocr":
        provider = str((stage_params.get("ocr") or {}).get("provider", "auto"))
        return provider == "cuda" or (provider == "auto" and onnxruntime_provider("auto", "cuda")[0] == "CUDAExecutionProvider")
    return True


@dataclass(frozen=True)
class RayStage:
    """One pool of the pipeline: its actor class's role, the feature stages it runs, its pool size and
    what each actor asks Ray for."""

    role: str                    # decode, stages or metrics
    stages: tuple[str, ...]
    actors: int
    num_cpus: float
    num_gpus: float = 0.0
    decode: bool = False         # a stages pool that reads the images itself (the first group, on CPU)
    score: bool = False          # a stages pool that applies the metrics itself (the last group, on CPU)


def group_stages(names: list[str], accelerated: Callable[[str], bool]) -> list[tuple[str, ...]]:
    """NAMES (dependencies first) as consecutive groups of one kind (`accelerated(name)`), fewest groups first:
    each group takes every stage of its kind whose dependencies are already computed."""
    left, done, groups = list(names), set(), []
    while left:
        kind = accelerated(left[0])   # the first left is always ready: its dependencies come earlier
        group: list[str] = []
        for name in list(left):
            if accelerated(name) == kind and all(d in done for d in registry.feature_stage(name).requires):
                group.append(name)
                done.add(name)
                left.remove(name)
        groups.append(tuple(group))
    return groups


def plan(stages: list[str], device: str, cpus: float, gpus: float, n_batches: int, cpu_workers: int | None,
         stage_params: dict[str, Any] | None = None) -> list[RayStage]:
    """The pipeline for feature STAGES (dependency order) on a cluster of CPUS and GPUS (`features.<stage>`
    settings in STAGE_PARAMS)."""
    def accelerated(name: str) -> bool:
        return is_cuda(device) and uses_gpu(name, stage_params or {})

    groups = group_stages(stages, accelerated)
    whole_cpus = max(1, int(cpus))
    workers = max(1, min(cpu_workers or whole_cpus, whole_cpus, n_batches))
    cpu_share = _share(1.0, len(groups))
    gpu_groups = sum(accelerated(g[0]) for g in groups)
    if gpu_groups and gpus <= 0:
        raise ValueError(f"--device {device} with --executor ray: the Ray cluster has no GPU")
    if gpus >= 1:   # 1/k of a GPU each (k actors per GPU): whole GPUs hold them wherever Ray puts them
        gpu_actors = max(1, min(workers, GPU_ACTORS_PER_GPU * int(gpus)))   # each needs its CPU share too
        per_actor = 1.0 / math.ceil(gpu_actors / int(gpus))
    else:           # a cluster offering part of a GPU: one actor takes that part
        gpu_actors, per_actor = 1, gpus
    gpu_share = _share(per_actor, gpu_groups)
    light = max(1, min(n_batches, math.ceil(workers / LIGHT_SHARE)))
    if not groups:   # metrics without features: decoding and the metrics alone, in one pool
        return [RayStage("stages", (), workers, cpu_share, decode=True, score=True)]
    pools = []
    for k, group in enumerate(groups):
        on_gpu = accelerated(group[0])
        pools.append(RayStage("stages", group, gpu_actors if on_gpu else workers, cpu_share, gpu_share if on_gpu else 0.0,
                              decode=k == 0 and not on_gpu, score=k == len(groups) - 1 and not on_gpu))
    decode = [] if pools[0].decode else [RayStage("decode", (), light, 0.0)]
    metrics = [] if pools[-1].score else [RayStage("metrics", (), light, 0.0)]
    return decode + pools + metrics


def _share(whole: float, parts: int) -> float:
    """WHOLE / PARTS rounded down to Ray's resource unit (1/10,000), so PARTS of them never exceed WHOLE."""
    return math.floor(whole * RESOURCE_UNITS / max(1, parts)) / RESOURCE_UNITS


def actor_specs(pipeline: list[RayStage], max_pixels: int) -> list[dict[str, Any]]:
    """Each pool's actor class, its constructor's keyword arguments (small: the run's setup comes with the first
    call, so a replacement actor needs nothing from the object store to start), its size and what each actor asks
    Ray for."""
    last_group = max((k for k, s in enumerate(pipeline) if s.role == "stages"), default=-1)
    specs = []
    for k, stage in enumerate(pipeline):
        actor: type
        kwargs: dict[str, Any]
        if stage.role == "decode":
            actor, kwargs = Decoder, {"max_pixels": max_pixels}
        elif stage.role == "metrics":
            actor, kwargs = Scorer, {}
        else:
            actor, kwargs = StageRunner, {"stages": stage.stages, "keep_images": k != last_group,
                                          "device": "cuda" if stage.num_gpus else "cpu",
                                          "max_pixels": max_pixels if stage.decode else None, "score": stage.score}
        specs.append({"cls": actor, "kwargs": kwargs, "actors": stage.actors,
                      "resources": {"num_cpus": stage.num_cpus, **({"num_gpus": stage.num_gpus} if stage.num_gpus else {})}})
    return specs
