"""The team's services on loopback, for the lake tests: PostgreSQL (the lake's catalog) from the
Debian package, in a temporary folder, and an S3 API (the lake's data) from moto's server. Each
is started for a test module and stopped after it; nothing is left running or on disk."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def postgres_bin() -> Path | None:
    """The PostgreSQL server's programs (Debian keeps them out of PATH), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass(frozen=True)
class Postgres:
    port: int

    def url(self, database: str) -> str:
        return f"postgresql://bench@127.0.0.1:{self.port}/{database}"


@contextmanager
def postgres() -> Iterator[Postgres]:
    """A throwaway server: trust authentication on 127.0.0.1 only, fsync off (a test's data)."""
    bindir = postgres_bin()
    assert bindir is not None
    # The server refuses to run as root: as root, run it as the package's `postgres` user, in
    # a folder that user owns (pytest's own temp folders are private to root).
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    if as_user:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()
    try:
        _run([*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "bench"])
        options = f"-k {folder} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(folder / "server.log")
        _run(
            [
                *as_user,
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                log,
                "-w",
                "start",
            ]
        )
        try:
            yield Postgres(port)
        finally:
            subprocess.run(
                [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                check=False,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def create_database(server: Postgres, name: str) -> str:
    bindir = postgres_bin()
    assert bindir is not None
    _run([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(server.port), "-U", "bench", name])
    return server.url(name)


@dataclass(frozen=True)
class S3:
    endpoint: str  # http://127.0.0.1:port

    def bucket(self, name: str) -> str:
        response = httpx.put(f"{self.endpoint}/{name}")
        response.raise_for_status()
        return f"s3://{name}"

    def keys(self, bucket: str, prefix: str) -> list[str]:
        return list(self.objects(bucket, prefix))

    def objects(self, bucket: str, prefix: str) -> dict[str, int]:
        """{key: bytes} of every object under `prefix` (ListObjectsV2, all pages)."""
        found: dict[str, int] = {}
        token = None
        while True:
            params = {"list-type": 2, "prefix": prefix}
            if token:
                params["continuation-token"] = token
            response = httpx.get(f"{self.endpoint}/{bucket}", params=params)
            response.raise_for_status()
            for entry in response.text.split("<Contents>")[1:]:
                key = entry.split("<Key>")[1].split("</Key>")[0]
                found[key] = int(entry.split("<Size>")[1].split("</Size>")[0])
            if "<NextContinuationToken>" not in response.text:
                return found
            token = response.text.split("<NextContinuationToken>")[1].split("<")[0]


@contextmanager
def s3() -> Iterator[S3]:
    """moto's S3 server on a free loopback port (it accepts any credentials)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(endpoint, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.2)
        yield S3(endpoint)
    finally:
        server.terminate()
        server.wait(timeout=10)


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
