"""Vendor extraction engines, one module each (providers.md §3), over `collectors.http`.

Every module exports the same names: PROVIDER, KEY_ENV, BASE_URL, PATH, DOCS, SDK_CHECK (a
`collectors.http.vendor_truth.SdkCheck`: the SDK release its wire shapes were checked against),
PRICE_USD_PER_1K (None when no list price is published), PRICE_BASIS, PRICE_SNAPSHOT,
`build_request(base_url, api_key, url, render) -> ProviderRequest` and
`read(document, url) -> VendorRead`. The registry in `collectors.extraction.live.engines` lists
the modules; nothing about a vendor is written down anywhere else.
"""
