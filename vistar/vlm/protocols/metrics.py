"""Engine metrics of the sibling protocols: pure functions of the protocol's judge stage output."""
from __future__ import annotations

from ...engine.registry import Metric, MetricResult
from ..errors import ReplyFormatError
from . import genexam, phybench, unieval, wise_legacy, wise_verified


def _metric(name: str, proto, score_fn) -> Metric:
    stage = proto.PROTOCOL.stage

    def fn(features: dict, controls: dict, params: dict, prompt) -> MetricResult:
        try:
            value, details = score_fn(features[stage])
        except ReplyFormatError as exc:
            return MetricResult(None, "error", f"{name}: {exc}", {})
        context = features[stage].context
        return MetricResult.ok(value, **details, judge=context.get("judge", ""), template=context.get("template", ""))

    # a protocol whose scoring changed while its judge questions did not bumps only METRIC_VERSION
    return Metric(name=name, angle=proto.NAME, version=getattr(proto, "METRIC_VERSION", proto.VERSION), features=(stage,), fn=fn)


WISCORE_LEGACY = _metric("wiscore.legacy", wise_legacy, wise_legacy.score)
WISCORE_VERIFIED = _metric("wiscore.verified", wise_verified, wise_verified.score)
GENEXAM_STRICT = _metric("genexam.strict", genexam, lambda o: genexam.score(o, "strict"))
GENEXAM_RELAXED = _metric("genexam.relaxed", genexam, lambda o: genexam.score(o, "relaxed"))
UNISCORE = _metric("uniscore", unieval, unieval.score)
PHYBENCH_PHY = _metric("phybench.phy", phybench, lambda o: phybench.score(o, "phy"))
PHYBENCH_SCENE = _metric("phybench.scene", phybench, lambda o: phybench.score(o, "scene"))
