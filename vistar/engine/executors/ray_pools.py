"""The actor pools of a Ray run (`ray_plan.actor_specs`) and what the driver does when an actor dies.

Ray neither restarts an actor nor re-runs a call (`max_restarts=0`, `max_task_retries=0`): Ray's restarts are a
budget per actor for the whole run, which one batch that always kills its actor (an image that crashes a native
library) spends in one go, leaving a dead actor that the batches queued behind it, and the fewest-in-flight rule,
keep meeting. Here the driver replaces every dead actor with a fresh one of its pool (`replace_dead`) and runs
the batches that died again alone (`ray_exec`), as the local pool does.
"""
from __future__ import annotations

from typing import Any


class ActorPools:
    """One list of actors per pool, and the batches in flight on each actor."""

    def __init__(self, ray: Any, specs: list[dict[str, Any]]):
        self.ray = ray
        self.kinds = [ray.remote(spec["cls"]).options(max_restarts=0, max_task_retries=0, **spec["resources"])
                      for spec in specs]
        self.kwargs = [spec["kwargs"] for spec in specs]
        self.actors = [[kind.remote(**kwargs) for _ in range(spec["actors"])]
                       for kind, kwargs, spec in zip(self.kinds, self.kwargs, specs)]
        self.load = [[0] * len(pool) for pool in self.actors]

    @property
    def widest(self) -> int:
        return max(map(len, self.actors))

    def submit(self, setup: list[Any], state: Any) -> tuple[Any, list[int]]:
        """STATE through one actor of each pool (the fewest in flight, the first of equals): the last call's
        reference and the actor picked in each pool."""
        picks = []
        for pool, busy in zip(self.actors, self.load):
            k = min(range(len(pool)), key=busy.__getitem__)
            busy[k] += 1
            picks.append(k)
            state = pool[k].run.remote(setup, state)
        return state, picks

    def release(self, picks: list[int]) -> None:
        for busy, k in zip(self.load, picks):
            busy[k] -= 1

    def replace_dead(self) -> None:
        """Each actor that no longer answers is replaced by a fresh one of its pool (which loads its models on its
        first batch); called with nothing in flight."""
        for kind, kwargs, pool in zip(self.kinds, self.kwargs, self.actors):
            for k, actor in enumerate(pool):
                try:
                    self.ray.get(actor.ping.remote())
                except self.ray.exceptions.RayActorError:
                    pool[k] = kind.remote(**kwargs)
