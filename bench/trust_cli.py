"""`bench verify` and `bench keygen`: check the log against an earlier head, record an
acceptance, make a signing key (docs/log-integrity.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from bench.options import HomeOption
from warehouse.log import EventLog
from warehouse.log_trust import accept, last_trusted_head, record_head, save_verification
from warehouse.merkle import LogHead
from warehouse.signing import generate_key, public_key_from
from warehouse.verify import verify_log

console = Console(stderr=True)
out = Console()


def _since(text: str | None, paths) -> LogHead | None:
    if text is None:
        return None
    if text == "last":
        head = last_trusted_head(paths)
        if head is None:
            raise ValueError("--since last: this data root has recorded no head yet")
        return head
    if text == "published":
        return _published_head(paths)
    return LogHead.parse(text)


def _published_head(paths) -> LogHead:
    import json

    import duckdb

    if not paths.serve_db.exists():
        raise ValueError(f"--since published: no snapshot at {paths.serve_db}")
    with duckdb.connect(str(paths.serve_db), read_only=True) as con:
        row = con.execute(
            "select metadata from main._publish order by published_at desc limit 1"
        ).fetchone()
    head = json.loads(row[0]).get("log_head") if row else None
    if not head:
        raise ValueError(f"--since published: {paths.serve_db} records no log head")
    return LogHead(int(head["size"]), head["root"], int(head.get("events", 0)))


def register(app: typer.Typer, paths_for) -> None:
    @app.command()
    def verify(
        since: Annotated[
            str | None,
            typer.Option(
                help="Prove the log extends this earlier head: SIZE:ROOT as `bench publish` "
                "printed it, `published` (the snapshot's) or `last` (the last one recorded; "
                "the default)."
            ),
        ] = None,
        public_key: Annotated[
            Path | None,
            typer.Option(help="ed25519 public key (PEM); default $BENCH_LOG_PUBLIC_KEY."),
        ] = None,
        accept_reason: Annotated[
            str | None,
            typer.Option(
                "--accept",
                help="Record an acceptance of the current problems with this reason; failing "
                "segments stay set aside, the warning clears.",
            ),
        ] = None,
        home: HomeOption = None,
    ) -> None:
        """Check the whole log: content hashes, chains, seals, the MANIFEST's Merkle tree, and
        (with --since / a public key) that it extends an earlier head. Exit 0 only when intact."""
        paths = paths_for(home)
        if accept_reason is not None:
            report, head = accept(paths, accept_reason)
            out.print(f"acceptance recorded; log head {head}")
        else:
            # Without --since: against the last head this data root vouched for, and the
            # outcome is what `bench status` and the snapshot report.
            report = verify_log(
                EventLog(paths.log_dir),
                since=_since(since, paths) if since else last_trusted_head(paths),
                public_key=public_key_from(public_key),
            )
            if since is None:
                save_verification(paths, report)
                if report.intact and report.head is not None:
                    record_head(paths, report.head, "verified")
        for problem in report.accepted:
            console.print(f"[yellow]accepted[/yellow] {escape(str(problem))}")
        if report.intact:
            note = f" ({len(report.unsealed)} segment(s) still open)" if report.unsealed else ""
            signed = f"; signed head {report.signed_head}" if report.signed_head else ""
            out.print(
                f"log intact: {report.segments} segments, {report.events} events{note}\n"
                f"log head {report.head}{signed}"
            )
            return
        for problem in report.problems:
            console.print(f"[red]{escape(str(problem))}[/red]")
        raise typer.Exit(1)

    @app.command()
    def keygen(
        private_key: Annotated[
            Path, typer.Argument(help="Where to write the private key (outside the data root).")
        ],
        home: HomeOption = None,
    ) -> None:
        """Make an ed25519 key pair for signing log heads (KEY and KEY.pub)."""
        paths = paths_for(home)
        public = private_key.with_name(private_key.name + ".pub")
        generate_key(private_key, public, data_root=paths.home)
        out.print(
            f"wrote {private_key} (keep it private) and {public}\n"
            f"writers sign with: export BENCH_LOG_SIGNING_KEY={private_key}\n"
            f"verifiers check with: export BENCH_LOG_PUBLIC_KEY={public}"
        )
