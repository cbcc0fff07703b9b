"""The command-line arguments the throughput benchmarks share (bench_end_to_end, bench_precision, bench_ocr_provider)."""
from __future__ import annotations

import argparse

from vistar.runtime.device import resolve_device


def parser_with_device(doc: str, n: int, batch: int = 8) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--n", type=int, default=n)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch", type=int, default=batch)
    return parser


def device_of(parser: argparse.ArgumentParser, args) -> str:
    """The device `--device` names, as `vistar score` resolves it; a GPU this machine lacks ends with the message."""
    try:
        return resolve_device(args.device)
    except ValueError as exc:
        parser.error(str(exc))
