"""Checks of our request bodies and the fakes' responses against a vendor SDK's own types,
shared by the contract suites (search lanes, extraction engines, answer lanes)."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, TypeAdapter
from typing_extensions import TypedDict


def typed_dict_check(params: type, body: dict[str, Any]) -> None:
    """`body` uses only the request type's keys, with its Literal values, types and nesting."""
    assert set(body) <= set(params.__annotations__), set(body) - set(params.__annotations__)
    TypeAdapter(params).validate_python(body, strict=True)


def signature_params(method: Callable[..., Any]) -> type:
    """An SDK method's annotated parameters as a request TypedDict (for SDKs, like
    tavily-python, whose only request type is the method's signature)."""
    hints = typing.get_type_hints(method)
    hints.pop("return", None)
    return TypedDict(f"{method.__qualname__.replace('.', '_')}_params", hints, total=False)


def model_fields(model: type[BaseModel]) -> set[str]:
    """The wire names of a pydantic model's fields (aliases where the SDK declares them)."""
    return {field.alias or name for name, field in model.model_fields.items()}
