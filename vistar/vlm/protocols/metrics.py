"""Engine metrics of the sibling protocols, built from each protocol's declared score functions: a pure
function of the protocol's judge stage output. The registry builds them from a declaration (`PROTOCOL_PARTS`)."""
from __future__ import annotations

from ...api import Metric, MetricResult
from ..errors import ReplyFormatError

_BUILT: dict[str, dict[str, Metric]] = {}


def _metric(name: str, proto, score_fn) -> Metric:
    stage = proto.stage

    def fn(features: dict, controls: dict, params: dict, prompt) -> MetricResult:
        try:
            value, details = score_fn(features[stage])
        except ReplyFormatError as exc:
            return MetricResult.error(f"{name}: {exc}")
        context = features[stage].context
        return MetricResult.ok(value, **details, judge=context.get("judge", ""), template=context.get("template", ""))

    # a protocol whose scoring changed while its judge questions did not bumps only its metric_version
    return Metric(name=name, angle=proto.name, version=proto.metric_version or proto.version, features=(stage,), fn=fn)


def metrics_of(proto) -> dict[str, Metric]:
    """The protocol's metrics by name, built once per process."""
    if proto.name not in _BUILT:
        _BUILT[proto.name] = {name: _metric(name, proto, fn) for name, fn in proto.scores.items()}
    return _BUILT[proto.name]
