"""The shared bases every vendor capability module builds on, one module per thing shared.

Layering: `collectors.products` (these bases) -> `collectors.vendors.<vendor>` (identity and one
module per capability the vendor sells) -> the families' registries and runners
(`collectors.search`, `collectors.qa`, `collectors.draco`, `collectors.extraction`). A base
imports no vendor and no family; a vendor imports bases, never a family (import-linter).

- `identity`: `Auth`, `Sdk`, the words a vendor's identity is written in;
- `search`: `LaneSpec` / `AnswerSpec` and the call policies of search and answer lanes;
  `chunks`: ranked chunks from a search response;
- `research`: `VendorApi`, `RunState`, `Report`, `Probe`, what the research driver runs;
  `polled`: the submit-then-poll research API; `documents`: reading research documents;
- `extract`: `VendorRead`, what a live extraction engine reads from a vendor document.
"""
