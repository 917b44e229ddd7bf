"""A 200 body nested deeper than Python can parse is a malformed body (one failed call), not a
RecursionError that ends the whole run on every re-run."""

from __future__ import annotations

from collectors.http import ErrorClass
from tests.fakes import Fault
from tests.providers.test_http_faults import search_once

DEEP = b"[" * 200_000 + b"]" * 200_000


def test_deeply_nested_body_is_a_malformed_body(fake, run, search_with):
    fake.set_fault("exa", Fault.malformed_json(DEEP))
    outcome, _ = search_once(run, search_with)
    assert outcome.payload.error_class == ErrorClass.MALFORMED_BODY
    assert outcome.payload.landed is False
