"""Print what the sequence test tried (its recorded summary) at the end of the pytest run, also
under xdist, where a worker's output is not shown: the summary travels as a user property of
the test's report."""

from __future__ import annotations

SUMMARY = "sequence summary"


def pytest_terminal_summary(terminalreporter):
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", ()):
                if name == SUMMARY:
                    terminalreporter.write_sep("-", f"{report.nodeid}")
                    terminalreporter.write_line(str(value))
