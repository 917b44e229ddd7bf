"""One home per vendor: one package per API vendor, everything it sells in one place.

`collectors/vendors/<vendor>/__init__.py` declares who the vendor is, once, for every family
that calls it: provider id, API-key variable, base URL, how the key is sent (`Auth`), the
official SDK the clients are checked against (`Sdk`), key-level abort statuses, and the list
price of each product it sells with its source and date. Beside it, one module per capability
the vendor sells, each owning only its wire shape (request bodies, parsers, lane settings):
`search.py` (SimpleQA search lanes), `answer.py` (SimpleQA answer lanes), `research.py` (DRACO
research systems), `extract.py` (live extraction engines). They build on the shared bases in
`collectors.products`. dbt's price seeds are held equal to these prices
(tests/dbt/test_price_seeds.py renders every seed from the registries).

A vendor package imports nothing from the families (`collectors.search`, `collectors.qa`,
`collectors.draco`, `collectors.extraction`): their registries import it, so the dependency is
one way (import-linter).
"""
