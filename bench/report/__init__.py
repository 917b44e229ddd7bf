"""`bench report --out DIR`: the published snapshot as a static site (HTML, inline SVG charts,
a CSV behind every figure, the methodology texts, the log head it was built from) that any
static host, or a browser from `file://`, shows without a server.

`figures` holds what is shown (the column lists), `html` how, `build` reads and writes."""

from bench.report.build import ReportError, Written, write_report

__all__ = ["ReportError", "Written", "write_report"]
