"""What `Scorer.score` returns: one `Result` per (image, metric), the rows `vistar score` writes, with the index of
the image in the call; `Results.to_pandas()` gives them with the columns (and dtypes) of `scores.parquet`."""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Result:
    """One row: `score` in [0, 1] when `status` is `ok`, else None with the reason in `error`."""

    index: int                 # the image's position in the call (an NCHW tensor counts N)
    prompt_id: str
    role: str
    angle: str
    metric: str
    score: float | None
    status: str                # ok | error | skipped
    error: str | None
    details: dict[str, Any]
    key: str                   # the row's key (docs/engine.md; docs/api.md for images given in memory)
    image: str                 # `<folder>/<file>` for a path, `memory:<16 hex>` for an image given in memory
    image_sha256: str
    model: str
    sample: int
    set: str | None = None
    metric_version: str | None = None

    @classmethod
    def of_row(cls, index: int, row: dict[str, Any]) -> "Result":
        details = row.get("details")
        return cls(index=index, prompt_id=row["prompt_id"], role=row["role"], angle=row["angle"], metric=row["metric"],
                   score=row["score"], status=row["status"], error=row["error"],
                   details=json.loads(details) if isinstance(details, str) else dict(details or {}), key=row["key"],
                   image=row["image"], image_sha256=row["image_sha256"], model=row["model"], sample=int(row["sample"]),
                   set=row.get("set"), metric_version=row.get("metric_version"))


@dataclass(frozen=True)
class Results(Sequence[Result]):
    """The results of one call, ordered by image index, then as the image's metrics are registered."""

    items: tuple[Result, ...]
    problems: tuple[dict[str, Any], ...] = field(default=())   # as problems.jsonl: prompt warnings, unavailable metrics

    @overload
    def __getitem__(self, i: int) -> Result: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Result]: ...

    def __getitem__(self, i: int | slice) -> Result | Sequence[Result]:
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Result]:
        return iter(self.items)

    def rows(self) -> list[dict[str, Any]]:
        """The results as the store's rows (`details` as JSON text)."""
        from ..engine.store import details_json

        return [{"image": r.image, "image_sha256": r.image_sha256, "model": r.model, "prompt_id": r.prompt_id,
                 "sample": r.sample, "role": r.role, "angle": r.angle, "metric": r.metric, "score": r.score,
                 "status": r.status, "error": r.error, "details": details_json(r.details), "set": r.set,
                 "metric_version": r.metric_version, "key": r.key, "shard": 0} for r in self.items]

    def to_pandas(self) -> "pd.DataFrame":
        """The columns of `scores.parquet` (as `vistar.engine.store.read_scores` gives them; `shard` is 0: these
        rows were not read from a store), then `index`."""
        frame = rows_frame(self.rows())
        frame["index"] = [r.index for r in self.items]
        return frame


def rows_frame(rows: list[dict[str, Any]]) -> "pd.DataFrame":
    """Store rows as a DataFrame through the store's own schema, so dtypes equal a run folder's."""
    import pyarrow as pa

    from ..engine.store import SCHEMA

    frame: pd.DataFrame = pa.Table.from_pylist(rows, schema=SCHEMA).to_pandas()
    return frame
