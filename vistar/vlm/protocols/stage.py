"""One feature stage per protocol (`judge.<name>`), built from its declaration: all judge questions of a batch of
images go out together through the judge-batch routine (`runtime.ask_batch`); the output per image is an
`Outcome` the protocol's metrics score. Nothing here names a protocol: what differs between them is declared."""
from __future__ import annotations

import hashlib
from pathlib import Path

from ...api import FeatureStage
from ..errors import DataError, JudgeError, JudgeUnavailable
from ..images import image_sha256, png_bytes
from ..runtime import Question, ask_batch, judge_from_context
from ..types import JudgeRequest
from .base import UPSTREAM_TEMPLATE, Outcome, Protocol, vistar_label
from .upstream_source import UpstreamError


def _items(proto: Protocol, ctx) -> tuple[dict, Path]:
    """The benchmark's items by id: those the run loaded (shipped with its settings to every scoring process),
    else read from --data-dir once per process (a prompt file naming protocol items, outside --suite)."""
    data_dir = ctx.options.data_dir
    if not data_dir:
        raise JudgeUnavailable(f"{proto.name} benchmark data", "pass --data-dir DIR (the benchmark's public data folder)")
    loaded = ctx.options.benchmark_items.get(proto.name)
    items = ctx.model(f"vlm.items.{proto.name}.{data_dir}",
                      lambda: {it.id: it for it in (loaded if loaded is not None else proto.load_items(Path(data_dir)))})
    return items, Path(data_dir)


def _request(proto: Protocol, item_id: str, query, image: bytes | None, sha: str, family=None) -> JudgeRequest:
    extra_ids = "".join("+ref" + hashlib.sha256(b).hexdigest()[:12] for b in query.extra_images)
    images = ((image,) if query.with_image and image is not None else ()) + query.extra_images
    key, template_hash = (proto.key, proto.template_hash) if family is None else (
        f"{proto.name}@{family.version}", family.template_hash())
    return JudgeRequest(protocol=key, item_id=f"{item_id}/{query.qid}{extra_ids}", template_hash=template_hash,
                        user=query.user, system=query.system, images=images,
                        image_sha256=sha if query.with_image else "", max_tokens=query.max_tokens, wire=query.wire)


def _image(query, inp, max_side: int) -> bytes:
    """The scored image as the query sends it: its own encoding (upstream: the file, or the script's conversion
    of it), else vistar's PNG of the pixels at the judge's max side."""
    return query.encode(inp.image, inp.source) if query.encode else png_bytes(inp.image, max_side)


def _family(proto: Protocol, prompt, ctx):
    """The upstream family a prompt asks for (`template="upstream"`, written by `--suite NAME --upstream DIR`),
    with the checkout folder; (None, None) for vistar's own templates."""
    if str(prompt.controls.get("template", "")) != UPSTREAM_TEMPLATE:
        return None, None
    if proto.upstream is None:
        raise DataError(f"{proto.name}: the prompt asks for the upstream template, but the protocol declares no "
                        "upstream family (its benchmark publishes no judge code)")
    folder = ctx.options.upstream_dir
    if not folder:
        raise JudgeUnavailable(f"{proto.name}: the prompt asks for the upstream template",
                               "pass --upstream DIR (a checkout of the benchmark's repository; `vistar upstream fetch`)")
    return proto.upstream, folder


def _queries(proto: Protocol, item, criteria, data_dir: Path, family, folder) -> list:
    if family is None:
        return proto.queries(item, criteria=criteria, data_dir=data_dir)
    return family.queries(folder, item, criteria=criteria, **proto.extra_inputs(item, data_dir))


_BUILT: dict[str, FeatureStage] = {}


def make_stage(proto: Protocol) -> FeatureStage:
    """The protocol's judge stage, built once per process."""
    if proto.name not in _BUILT:
        _BUILT[proto.name] = FeatureStage(name=proto.stage, version=proto.version,
                                          compute=lambda inputs, ctx: _compute(proto, inputs, ctx))
    return _BUILT[proto.name]


def _compute(proto: Protocol, inputs, ctx) -> list:
    judge = judge_from_context(ctx)
    items, data_dir = _items(proto, ctx)
    outputs: list = [None] * len(inputs)
    found = {}   # input index -> (item, upstream family or None, checkout folder)
    for i, inp in enumerate(inputs):
        item_id = str(inp.prompt.controls.get("item", inp.prompt.id))
        if item_id not in items:
            outputs[i] = DataError(f"item '{item_id}' is not in the {proto.name} data under {data_dir}")
            continue
        try:
            found[i] = (items[item_id], *_family(proto, inp.prompt, ctx))
        except (JudgeUnavailable, DataError) as exc:
            outputs[i] = exc
    criteria = _criteria(proto, judge, ctx, found.values())
    shas = {i: image_sha256(inputs[i].image) for i in found}
    questions = []
    for i, (item, family, folder) in found.items():
        given = criteria.get((item.id, family))
        if isinstance(given, Exception):
            outputs[i] = given
            continue
        try:
            asked = _queries(proto, item, given, data_dir, family, folder)
        except (ValueError, UpstreamError) as exc:
            outputs[i] = DataError(str(exc))
            continue
        try:
            sent = [_image(query, inputs[i], judge.cfg.image_max_side) for query in asked]
        except (OSError, ValueError) as exc:
            outputs[i] = DataError(f"{proto.name} item {item.id}: the image cannot be sent: {exc}")
            continue
        for query, image in zip(asked, sent):
            # an upstream request sends the file (or the script's encoding of it), not the decoded pixels: two
            # files with equal pixels (RGBA and RGB on white, L and grey RGB) are different questions
            identity = shas[i] if family is None else hashlib.sha256(image).hexdigest()
            bill = (shas[i] if query.with_image else "", inputs[i].prompt.fingerprint)
            questions.append(Question(i, _request(proto, item.id, query, image, identity, family), query.parse, query, bill))
    answered = ask_batch(ctx, judge, questions, lambda i: f"{proto.name} item {found[i][0].id}")
    for i, (item, family, _) in found.items():
        if outputs[i] is not None:
            continue
        answers = answered.get(i, [])
        outputs[i] = answers if isinstance(answers, JudgeError) else Outcome(
            proto.name, item, {q.qid: parsed for q, parsed in answers},
            {"criteria": criteria.get((item.id, family)), "judge": judge.identity,
             "extra_images": {q.qid: len(q.extra_images) for q, _ in answers},
             "template": family.label if family else vistar_label(proto.name, proto.version)})
    return outputs


def _criteria(proto: Protocol, judge, ctx, found) -> dict:
    """Stage 1 (text only) for protocols that need item-specific criteria; cached like any judge answer.
    `found`: (item, upstream family or None, checkout folder). Keyed by (item id, family): one run may judge an
    item with vistar's templates and with the benchmark's, whose criteria questions differ."""
    wanted = {}
    for item, family, folder in found:
        query = proto.criteria(item) if family is None else family.criteria_query(folder, item)
        if query is not None and (item.id, family) not in wanted:
            wanted[(item.id, family)] = query
    questions = [Question(key, _request(proto, key[0], q, None, "", key[1]), q.parse) for key, q in wanted.items()]
    answered = ask_batch(ctx, judge, questions, lambda key: f"{proto.name} criteria of item {key[0]}")
    return {key: a if isinstance(a, JudgeError) else a[0][1] for key, a in answered.items()}
