"""The live extraction products' base: what a vendor extraction response says about one URL,
whatever its wire shape (the JSON is read with collectors.http.json_fields, the one set of
readers every family uses).

Every vendor extraction module (`collectors/vendors/<vendor>/extract.py`, providers.md §3)
exports the same names: PROVIDER, KEY_ENV, BASE_URL (the vendor's, imported from its package
`collectors.vendors.<vendor>`), PATH, DOCS, SDK_CHECK (a `collectors.http.vendor_truth.SdkCheck`:
the vendor's SDK release, checked against this product's docs page), PRICE_USD_PER_1K (None when
no list price is published), PRICE_BASIS, PRICE_SNAPSHOT (this product's price, declared in the
vendor's package), `build_request(base_url, api_key, url, render) -> ProviderRequest` and
`read(document, url) -> VendorRead`. The registry in `collectors.extraction.live.engines` lists
the modules; what a module adds is the product's wire shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from warehouse.events import RedirectHop


@dataclass(frozen=True)
class VendorRead:
    text: str | None  # the extracted content; None when the vendor returned none
    target_status_code: int | None = None  # the origin's status, when the vendor reports it
    final_url: str | None = None
    redirect_chain: list[RedirectHop] = field(default_factory=list)
    render_used: str | None = None  # as reported; None when the vendor does not say
    error_class: str | None = None  # a per-URL failure reported inside a 2xx response
    error_message: str | None = None
