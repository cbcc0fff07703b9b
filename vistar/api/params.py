"""Typed parameters: each metric and stage declares a frozen dataclass, and its ontology block is parsed into it.

`parse(Kind, block, "metrics.TR.params")` refuses an unknown key and a value of the wrong type, naming the key,
so a typo in an `--ontology` file stops the run when it is planned instead of failing every row mid-run (or,
worse, being ignored). The field annotations are the schema: `bool`, `int`, `float` (an int is a number too),
`str`, `Literal[...]`, `X | None`, `tuple[X, ...]`, `tuple[X, Y]`, `Mapping[str, X]`, another parameter
dataclass, and `Any`. A field without a default must be in the block. A `__post_init__` that raises ValueError
checks what types cannot say (a range, two fields that go together).
"""
from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union

P = TypeVar("P")


class ParamsError(ValueError):
    """A parameter block that does not fit its dataclass; `key` is the dotted path of the offending entry."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


def parse(kind: type[P], block: Mapping[str, Any] | None, where: str) -> P:
    """`block` (a mapping from the ontology, None for none) as a `kind` instance; raises ParamsError."""
    return typing.cast(P, _dataclass(kind, {} if block is None else block, where))


def _dataclass(kind: type[Any], block: object, where: str) -> Any:
    if not isinstance(block, Mapping):
        raise ParamsError(where, f"must be a mapping of parameters, not {block!r}")
    fields = {f.name: f for f in dataclasses.fields(kind) if f.init}
    unknown = sorted(str(k) for k in block if k not in fields)
    if unknown:
        raise ParamsError(f"{where}.{unknown[0]}", f"unknown parameter (known: {', '.join(sorted(fields))})")
    hints = typing.get_type_hints(kind)
    values = {}
    for name, f in fields.items():
        if name in block:
            values[name] = _value(hints[name], block[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ParamsError(f"{where}.{name}", "missing (this parameter has no default)")
    try:
        return kind(**values)
    except ValueError as exc:   # the dataclass's own checks (__post_init__)
        raise ParamsError(where, str(exc)) from None


def _value(hint: Any, value: object, where: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        return _union(args, value, where)
    if origin is Literal:
        if value in args and not isinstance(value, bool):
            return value
        raise ParamsError(where, f"must be one of {', '.join(map(repr, args))}, not {value!r}")
    if origin is tuple:
        return _tuple(args, value, where)
    if origin in (Mapping, dict):
        if not isinstance(value, Mapping):
            raise ParamsError(where, f"must be a mapping, not {value!r}")
        return {str(k): _value(args[1], v, f"{where}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass(hint, value, where)
    if _fits(hint, value):
        return value
    raise ParamsError(where, f"must be {_KINDS.get(hint, getattr(hint, '__name__', str(hint)))}, not {value!r}")


_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string", type(None): "null"}


def _fits(hint: Any, value: object) -> bool:
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(hint, type) and isinstance(value, hint)


def _union(args: tuple[Any, ...], value: object, where: str) -> Any:
    problems = []
    for option in args:
        try:
            return _value(option, value, where)
        except ParamsError as exc:
            problems.append(str(exc).removeprefix(f"{where}: "))
    suffix = f", not {value!r}"
    if all(p.startswith("must be ") and p.endswith(suffix) for p in problems):   # "must be an integer or null, not 'x'"
        raise ParamsError(where, "must be " + " or ".join(p[len("must be "):-len(suffix)] for p in problems) + suffix)
    raise ParamsError(where, " or ".join(problems))


def _tuple(args: tuple[Any, ...], value: object, where: str) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise ParamsError(where, f"must be a list, not {value!r}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_value(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if len(value) != len(args):
        raise ParamsError(where, f"must be a list of {len(args)} values, not {value!r}")
    return tuple(_value(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
