"""One home per vendor: who each API vendor is, written down once.

`collectors/vendors/<vendor>.py` declares the vendor's identity for every family that calls it
(the SimpleQA search and answer lanes in `collectors.search`, the DRACO research systems in
`collectors.draco.systems`, the live extraction engines in `collectors.extraction.live.vendors`):
provider id, API-key variable, base URL, how the key is sent (`Auth`), the official SDK the
clients are checked against (`Sdk`), key-level abort statuses, and the list price of each
product it sells with its source and date. The family modules import these names and keep only
what is theirs: request bodies, parsers, lane settings. dbt's price seeds are held equal to these
prices (tests/dbt/test_price_seeds.py renders every seed from the registries).

A vendor module imports nothing from the families (they import it), so the dependency is one way.
"""
