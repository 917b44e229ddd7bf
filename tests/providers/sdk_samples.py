"""Instances of a vendor SDK's response types with every field the type defines filled in, so a
parser is tested against the vendor's whole shape, not the few fields we happen to read.

`sample(SomeModel)` walks pydantic models and dataclasses field by field (type hints resolved
in the SDK's own module): strings get a value naming their field path, numbers a small number,
lists two elements at the top (one deeper), unions their first non-None member, literals their first value. Recursive
types stop at `MAX_DEPTH` (optional fields there are None, lists empty).
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

MAX_DEPTH = 4


def sample(annotation: Any, path: str = "", depth: int = 0) -> Any:
    if isinstance(annotation, typing.ForwardRef):
        raise TypeError(f"{path}: unresolved forward reference {annotation}")
    if annotation in (type(None), None):
        return None
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is typing.Annotated:
        return sample(args[0], path, depth)
    if origin in (Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if type(None) in args and depth >= MAX_DEPTH:
            return None
        return sample(members[0], path, depth)
    if origin is Literal:
        return args[0]
    if origin in (list, tuple, set, frozenset, typing.Sequence) or (
        origin is not None and _is_sequence(origin)
    ):
        if depth >= MAX_DEPTH:
            return []
        count = 2 if depth <= 1 else 1  # two top-level results: rank order is checked too
        item = args[0] if args else str
        return [sample(item, f"{path}[{i}]", depth + 1) for i in range(count)]
    if origin is dict or (origin is not None and _is_mapping(origin)):
        value_type = args[1] if len(args) == 2 else str
        return {"key": sample(value_type, f"{path}.key", depth + 1)}
    if annotation is typing.Any or annotation is object:
        return f"{path}-value"
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return True
        if issubclass(annotation, int):
            return 3
        if issubclass(annotation, float):
            return 0.5
        if issubclass(annotation, str):
            return f"{path or 'value'}-text"
        if issubclass(annotation, dict):
            return {}
        if issubclass(annotation, list):
            return []
        if issubclass(annotation, BaseModel):
            return _model(annotation, path, depth)
        if dataclasses.is_dataclass(annotation):
            return _dataclass(annotation, path, depth)
    if isinstance(annotation, typing.TypeVar):
        return f"{path}-value"
    raise TypeError(f"{path}: no sample for {annotation!r}")


def _model(cls: type[BaseModel], path: str, depth: int) -> BaseModel:
    # A field pydantic left as a forward reference (firecrawl's Document.tools) is resolved in
    # the SDK's own module, as the SDK resolves it at validation time.
    values = {}
    for name, field in cls.model_fields.items():
        annotation = field.annotation
        if _has_forward_ref(annotation):
            annotation = _resolved(annotation, cls.__module__)
        values[name] = sample(annotation, f"{path}.{name}".lstrip("."), depth + 1)
    # Validated by the SDK's own model: a sample it rejects is a bug here, not a shape.
    return cls.model_validate(_plain(values))


def _resolved(annotation: Any, module: str) -> Any:
    holder = type("Holder", (), {"__annotations__": {"field": annotation}, "__module__": module})
    return typing.get_type_hints(holder, vars(sys.modules[module]))["field"]


def _has_forward_ref(annotation: Any) -> bool:
    if isinstance(annotation, typing.ForwardRef | str):
        return True
    return any(_has_forward_ref(arg) for arg in get_args(annotation))


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _dataclass(cls: type, path: str, depth: int) -> Any:
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    values = {
        f.name: sample(hints[f.name], f"{path}.{f.name}".lstrip("."), depth + 1)
        for f in dataclasses.fields(cls)
        if f.init
    }
    return cls(**values)


def _is_sequence(origin: Any) -> bool:
    import collections.abc as abc

    return isinstance(origin, type) and issubclass(origin, abc.Sequence) and origin is not str


def _is_mapping(origin: Any) -> bool:
    import collections.abc as abc

    return isinstance(origin, type) and issubclass(origin, abc.Mapping)
