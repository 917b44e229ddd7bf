"""Call a macro of dbt_project/macros from Python, so a rule dbt enforces is written once.

`bench rescore` and the app's what-if panels must refuse what dbt's build would refuse, and say
so before any dbt start (the app checks on every slider move). Rather than restating a macro's
rule in Python, this renders the macro's own file with plain Jinja and calls it. Only the few
dbt context pieces such rule macros use exist here: `var` (the values given), `return`,
`exceptions.raise_compiler_error`, `{% do %}`, and `execute` false (we are not running a model).
A macro that needs more (ref, adapter, run_query) fails loudly with Jinja's undefined error.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.runtime import Context, Macro

# dbt_project/ ships beside warehouse/ (bench.settings.DBT_PROJECT_DIR names the same folder).
DBT_PROJECT_DIR = Path(__file__).resolve().parent.parent / "dbt_project"


class MacroError(ValueError):
    """A macro's `exceptions.raise_compiler_error(message)`: what dbt's build would fail with."""


class _MacroReturn(Exception):  # control flow, as dbt's own MacroReturn
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise _MacroReturn(value)


class _Exceptions:
    @staticmethod
    def raise_compiler_error(message: str) -> None:
        raise MacroError(message)


class _MacroContext(Context):
    """dbt's `{{ return(x) }}` ends the macro it is written in, not the whole render: catch it at
    the boundary of the Macro being called (every template call goes through Context.call)."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().call(__obj, *args, **kwargs)
        except _MacroReturn as returned:
            if isinstance(__obj, Macro):
                return returned.value
            raise


class _Environment(jinja2.Environment):
    context_class = _MacroContext


@cache
def _template(path: Path) -> jinja2.Template:
    environment = _Environment(extensions=["jinja2.ext.do"], undefined=jinja2.StrictUndefined)
    return environment.from_string(path.read_text(encoding="utf-8"))


def call_macro(file: str, name: str, /, *args: Any, variables: dict[str, Any]) -> Any:
    """`name(*args)` from dbt_project/macros/`file`, with `var(key)` reading `variables`: the
    macro's `return` value, or MacroError with its compiler-error message."""

    def var(key: str, default: Any = None) -> Any:
        if key in variables:
            return variables[key]
        if default is None:
            raise MacroError(f"var {key} is not given")
        return default

    module = _template(DBT_PROJECT_DIR / "macros" / file).make_module(
        {"var": var, "return": _return, "exceptions": _Exceptions, "execute": False}
    )
    try:
        return getattr(module, name)(*args)
    except _MacroReturn as returned:  # the outermost macro's own return
        return returned.value
