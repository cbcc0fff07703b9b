"""One feature stage per protocol (`judge.<name>`): all judge questions of a batch of images go out together
(bounded concurrency, cache first); the output per image is an `Outcome` the protocol's metrics score."""
from __future__ import annotations

import hashlib
from pathlib import Path

from ...api import FeatureStage
from ..errors import DataError, JudgeUnavailable
from ..images import image_sha256, png_bytes
from ..runtime import failure, judge_from_context
from ..types import JudgeRequest
from . import genexam, upstream_families
from .base import Outcome, Protocol
from .upstream_families import FAMILIES, UPSTREAM_TEMPLATE, vistar_label
from .upstream_source import UpstreamError


def _items(proto: Protocol, ctx) -> tuple[dict, Path]:
    data_dir = ctx.options.data_dir
    if not data_dir:
        raise JudgeUnavailable(f"{proto.name} benchmark data", "pass --data-dir DIR (the benchmark's public data folder)")
    items = ctx.model(f"vlm.items.{proto.name}.{data_dir}", lambda: {it.id: it for it in proto.load_items(Path(data_dir))})
    return items, Path(data_dir)


def _request(proto: Protocol, item_id: str, query, image: bytes | None, sha: str, family=None) -> JudgeRequest:
    extra_ids = "".join("+ref" + hashlib.sha256(b).hexdigest()[:12] for b in query.extra_images)
    images = ((image,) if query.with_image and image is not None else ()) + query.extra_images
    key, template_hash = (proto.key, proto.template_hash) if family is None else (
        f"{proto.name}@{family.version}", family.template_hash())
    return JudgeRequest(protocol=key, item_id=f"{item_id}/{query.qid}{extra_ids}", template_hash=template_hash,
                        user=query.user, system=query.system, images=images,
                        image_sha256=sha if query.with_image else "", max_tokens=query.max_tokens, wire=query.wire)


def _family(proto: Protocol, prompt, ctx):
    """The upstream family a prompt asks for (`template="upstream"`, written by `--suite NAME --upstream DIR`),
    with the checkout folder; (None, None) for vistar's own templates."""
    if str(prompt.controls.get("template", "")) != UPSTREAM_TEMPLATE:
        return None, None
    folder = ctx.options.upstream_dir
    if not folder:
        raise JudgeUnavailable(f"{proto.name}: the prompt asks for the upstream template",
                               "pass --upstream DIR (a checkout of the benchmark's repository; `vistar upstream fetch`)")
    return FAMILIES[proto.name], folder


def _queries(proto: Protocol, item, criteria, data_dir: Path, family, folder) -> list:
    if family is None:
        return proto.queries(item, criteria=criteria, data_dir=data_dir)
    gt = genexam.ground_truth_image(item, data_dir) if proto.name == "genexam" else None
    return upstream_families.queries(proto.name, folder, item, criteria=criteria, ground_truth=gt)


_BUILT: dict[str, FeatureStage] = {}


def make_stage(proto: Protocol) -> FeatureStage:
    """The protocol's judge stage, built once per process."""
    if proto.name not in _BUILT:
        _BUILT[proto.name] = _stage(proto)
    return _BUILT[proto.name]


def _stage(proto: Protocol) -> FeatureStage:
    def compute(inputs, ctx) -> list:
        judge = judge_from_context(ctx)
        items, data_dir = _items(proto, ctx)
        found = []
        outputs: list = [None] * len(inputs)
        for i, inp in enumerate(inputs):
            item_id = str(inp.prompt.controls.get("item", inp.prompt.id))
            item = items.get(item_id)
            if item is None:
                outputs[i] = DataError(f"item '{item_id}' is not in the {proto.name} data under {data_dir}")
            else:
                found.append((i, item))
        families = {}
        for i, item in list(found):
            try:
                families[i] = _family(proto, inputs[i].prompt, ctx)
            except JudgeUnavailable as exc:
                outputs[i] = exc
                found.remove((i, item))
        criteria = _criteria(proto, judge, [(item, *families[i]) for i, item in found])
        shas = {i: image_sha256(inputs[i].image) for i, _ in found}
        calls, owners = [], []
        for i, item in found:
            if isinstance(criteria.get(item.id), Exception):
                outputs[i] = criteria[item.id]
                continue
            sha, family = shas[i], families[i][0]
            try:
                asked = _queries(proto, item, criteria.get(item.id), data_dir, *families[i])
            except (ValueError, UpstreamError) as exc:
                outputs[i] = DataError(str(exc))
                continue
            for query in asked:
                image = query.encode(inputs[i].image) if query.encode else png_bytes(inputs[i].image, judge.cfg.image_max_side)
                calls.append((_request(proto, item.id, query, image, sha, family), query.parse))
                owners.append((i, query))
        replies = judge.ask(calls, bill=[(shas[i] if q.with_image else "", inputs[i].prompt.fingerprint) for i, q in owners])
        by_image: dict[int, list] = {}
        for (i, query), reply in zip(owners, replies):
            by_image.setdefault(i, []).append((query, reply))
        for i, item in found:
            if outputs[i] is not None:
                continue
            pairs = by_image.get(i, [])
            err = failure([r for _, r in pairs], f"{proto.name} item {item.id}")
            family = families[i][0]
            outputs[i] = err or Outcome(proto.name, item, {q.qid: r.parsed for q, r in pairs},
                                        {"criteria": criteria.get(item.id), "judge": judge.identity,
                                         "extra_images": {q.qid: len(q.extra_images) for q, _ in pairs},
                                         "template": family.label if family else vistar_label(proto.name, proto.version)})
        return outputs

    return FeatureStage(name=proto.stage, version=proto.version, compute=compute)


def _criteria(proto: Protocol, judge, items: list) -> dict:
    """Stage 1 (text only) for protocols that need item-specific criteria; cached like any judge answer.
    `items`: (item, family, upstream folder)."""
    wanted = {}
    for item, family, folder in items:
        query = proto.criteria(item) if family is None else upstream_families.criteria_query(proto.name, folder, item)
        if query is not None and item.id not in wanted:
            wanted[item.id] = (query, family)
    if not wanted:
        return {}
    calls = [(_request(proto, item_id, q, None, "", family), q.parse) for item_id, (q, family) in wanted.items()]
    replies = judge.ask(calls)
    return {item_id: (r.parsed if r.ok else failure([r], f"{proto.name} criteria of item {item_id}"))
            for item_id, r in zip(wanted, replies)}
