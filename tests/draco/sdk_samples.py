"""Documents built from a vendor SDK's own response models, every field filled.

`sample(Model)` walks the model's fields (pydantic v2 models, TypedDicts, unions, literals,
lists, enums) and gives each one a value, recursively, so a parser is shown every field the SDK
defines and not only the few it reads. The caller then overrides the fields that carry the
report, validates the result with the SDK model (`wire(Model, document)`), and feeds the SDK's
own serialisation of it to our parser.
"""

from __future__ import annotations

import datetime as dt
import enum
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import pydantic

MAX_DEPTH = 9  # past it, lists and maps are empty (self-referencing models end)


def sample(tp: Any, depth: int = 0) -> Any:
    tp = _unwrap(tp)
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any or tp is object:
        return "any"
    if origin is Literal:
        return args[0]
    if origin in (Union, types.UnionType):
        return sample(_first_variant(args), depth)
    if origin in (list, tuple, set, frozenset) or origin in _SEQUENCES:
        return [] if depth > MAX_DEPTH or not args else [sample(args[0], depth + 1)]
    if origin is dict or origin in _MAPPINGS:
        return {} if depth > MAX_DEPTH or not args else {"key": sample(args[-1], depth + 1)}
    if tp is str:
        return "text"
    if tp is bool:
        return True
    if tp is int:
        return 1
    if tp is float:
        return 1.5
    if tp is dt.datetime:
        return "2026-12-01T00:00:00Z"
    if tp is dt.date:
        return "2026-12-01"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return next(iter(tp)).value
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        return _model(tp, depth)  # lists and maps stop the recursion, models never do
    if typing.is_typeddict(tp):
        hints = get_type_hints(tp, include_extras=False)
        return {} if depth > MAX_DEPTH else {k: sample(v, depth + 1) for k, v in hints.items()}
    return "value"


def wire(model: type[pydantic.BaseModel], document: dict[str, Any]) -> dict[str, Any]:
    """The document as the SDK models it and serialises it back (aliases, its own rules)."""
    return model.model_validate(document).model_dump(mode="json", by_alias=True)


def field_names(model: type[pydantic.BaseModel]) -> set[str]:
    return {info.alias or name for name, info in model.model_fields.items()}


_SEQUENCES = {
    typing.Sequence,
    typing.Iterable,
    typing.List,  # noqa: UP006
    __import__("collections.abc").abc.Sequence,
    __import__("collections.abc").abc.Iterable,
}
_MAPPINGS = {typing.Mapping, typing.Dict, __import__("collections.abc").abc.Mapping}  # noqa: UP006


def _unwrap(tp: Any) -> Any:
    while True:
        if get_origin(tp) is typing.Annotated:
            tp = get_args(tp)[0]
        elif isinstance(tp, typing.TypeAliasType if hasattr(typing, "TypeAliasType") else ()) or (
            type(tp).__name__ == "TypeAliasType" and hasattr(tp, "__value__")
        ):
            tp = tp.__value__
        elif get_origin(tp) in (typing.Required, typing.NotRequired):
            tp = get_args(tp)[0]
        else:
            return tp


def _first_variant(args: tuple[Any, ...]) -> Any:
    concrete = [a for a in args if a is not type(None)]
    # Prefer a model, then a Literal, then anything else (open unions end with a plain str).
    for kind in (_is_model, lambda a: get_origin(_unwrap(a)) is Literal):
        for arg in concrete:
            if kind(arg) and "Unknown" not in getattr(_unwrap(arg), "__name__", ""):
                return arg
    return concrete[0]


def _is_model(tp: Any) -> bool:
    tp = _unwrap(tp)
    return isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def _model(model: type[pydantic.BaseModel], depth: int) -> dict[str, Any]:
    document = {}
    for name, info in model.model_fields.items():
        if info.deprecated:
            continue  # deprecated fields warn on access; the vendor is removing them
        document[info.alias or name] = sample(info.annotation, depth + 1)
    return document
