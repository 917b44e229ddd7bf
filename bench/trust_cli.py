"""`bench verify` and `bench keygen`: check the log against an earlier head, record an
acceptance, make a signing key (docs/log-integrity.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from bench.options import HomeOption
from warehouse.merkle import LogHead

# warehouse.log, log_trust and verify load the event models (pydantic): imported by the
# commands, so that `bench -h` does not pay for them.

console = Console(stderr=True)
out = Console()


def _since(text: str | None, paths) -> LogHead | None:
    if text is None:
        return None
    if text == "last":
        from warehouse.log_trust import last_trusted_head

        head = last_trusted_head(paths)
        if head is None:
            raise ValueError("--since last: this data root has recorded no head yet")
        return head
    if text == "published":
        return _published_head(paths)
    return LogHead.parse(text)


def _published_head(paths) -> LogHead:
    from warehouse.log_trust import snapshot_head

    snapshot = snapshot_head(paths.serve_db)
    if snapshot is None:
        raise ValueError(f"--since published: no snapshot at {paths.serve_db}")
    if snapshot.head is None:
        raise ValueError(f"--since published: {paths.serve_db} records no log head")
    return snapshot.head


def _verify_bucket(paths, report) -> bool:
    """Every other writer's log in the log bucket (BENCH_LOG_BUCKET), copied and verified
    line by line against the head held for it, and one head over the union; True without a
    bucket."""
    from transform.pipeline import writer_logs
    from warehouse.log_bucket import union_head, writer_id
    from warehouse.log_trust import next_step

    writers = writer_logs(paths, fast=False)
    if not writers:
        return True
    for writer in writers:
        if writer.report.intact:
            out.print(
                f"bucket writer {writer.writer}: intact, {writer.report.segments} segments, "
                f"{writer.report.events} events, head {writer.report.head}"
            )
            continue
        for problem in writer.report.problems:
            console.print(f"[red]bucket writer {writer.writer}: {escape(str(problem))}[/red]")
        console.print(escape(next_step(writer.report)), highlight=False)
    heads = {w.writer: w.report.head for w in writers if w.report.head is not None}
    if report.head is not None and report.head.size:  # a builder that collected nothing
        heads[writer_id(paths)] = report.head
    out.print(f"union head of {len(heads)} writers' logs {union_head(heads)}")
    return all(writer.report.intact for writer in writers)


def register(app: typer.Typer, paths_for) -> None:
    @app.command()
    def verify(
        since: Annotated[
            str | None,
            typer.Option(
                help="Prove the log extends this earlier head: SIZE:ROOT as `bench publish` "
                "printed it, `published` (the snapshot's) or `last` (the last one recorded). "
                "Default: every head this data root holds (the last recorded and the "
                "snapshot's)."
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
        from warehouse.log import EventLog
        from warehouse.log_trust import (
            accept,
            next_step,
            record_head,
            save_verification,
            verify_trusted,
        )
        from warehouse.signing import public_key_from
        from warehouse.verify import verify_log

        paths = paths_for(home)
        if accept_reason is not None:
            report, head = accept(paths, accept_reason)
            out.print(f"acceptance recorded; log head {head}")
        else:
            key = public_key_from(public_key)
            if since:
                report = verify_log(
                    EventLog(paths.log_dir), since=_since(since, paths), public_key=key
                )
            else:
                # Against every head this data root holds (heads.jsonl's last, the snapshot's),
                # as ingest and rebuild check; the outcome is what `bench status` and the
                # snapshot report.
                report = verify_trusted(paths, fast=False, public_key=key)
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
        else:
            for problem in report.problems:
                console.print(f"[red]{escape(str(problem))}[/red]")
            console.print(escape(next_step(report)), highlight=False)
        bucket_intact = (
            since is not None or accept_reason is not None or _verify_bucket(paths, report)
        )
        if not (report.intact and bucket_intact):
            raise typer.Exit(1)

    @app.command()
    def keygen(
        private_key: Annotated[
            Path, typer.Argument(help="Where to write the private key (outside the data root).")
        ],
        home: HomeOption = None,
    ) -> None:
        """Make an ed25519 key pair for signing log heads (KEY and KEY.pub)."""
        from warehouse.signing import generate_key

        paths = paths_for(home)
        public = private_key.with_name(private_key.name + ".pub")
        generate_key(private_key, public, data_root=paths.home)
        out.print(
            f"wrote {private_key} (keep it private) and {public}\n"
            f"writers sign with: export BENCH_LOG_SIGNING_KEY={private_key}\n"
            f"verifiers check with: export BENCH_LOG_PUBLIC_KEY={public}"
        )
