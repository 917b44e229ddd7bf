"""Vendor extraction engines, one module each (providers.md §3), over `collectors.http`.

Every module exports the same names: PROVIDER, KEY_ENV, BASE_URL (the vendor's, imported from
`collectors.vendors.<vendor>`), PATH, DOCS, SDK_CHECK (a `collectors.http.vendor_truth.SdkCheck`:
the vendor's SDK release, checked against this product's docs page), PRICE_USD_PER_1K (None when
no list price is published), PRICE_BASIS, PRICE_SNAPSHOT (this product's price, declared in the
vendor module), `build_request(base_url, api_key, url, render) -> ProviderRequest` and
`read(document, url) -> VendorRead`. The registry in `collectors.extraction.live.engines` lists
the modules; what a module adds is the product's wire shape.
"""
