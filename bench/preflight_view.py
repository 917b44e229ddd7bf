"""How `bench preflight` and `bench run draco`'s preflight print a check: a verdict a reader
cannot misread, then the probe's own detail. The wording of the detail is the collectors'; this
only says what a status means (an "ok" probe can answer HTTP 404 on purpose: it asked for a run
id that does not exist, and a 404 rather than a 401 is what proves the key was accepted)."""

from __future__ import annotations

VERDICTS = {
    "ok": "[green]ready[/green]",
    "offline": "[green]ready[/green] (offline, no key)",
    "skipped": "skipped",
    "missing_key": "[red]missing key[/red]",
    "auth_failed": "[red]key refused[/red]",
    "rejected": "[red]request rejected[/red]",
    "unreachable": "[red]unreachable[/red]",
    "error": "[red]error[/red]",
}


def verdict(status: str) -> str:
    return VERDICTS.get(status, status)


def detail(status: str, text: str) -> str:
    """The probe's detail; a bare HTTP error code on a passing probe is said to be expected (a
    detail that already explains its status, as the answer lanes' "reachable, key not refused
    (HTTP 404 ...; key validity not proven)", is kept: "key accepted" would overstate it)."""
    if status == "ok" and text.strip().startswith("HTTP 4"):
        return f"key accepted; the probe's {text.strip()} is the expected answer"
    return text
