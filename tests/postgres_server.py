"""A throwaway PostgreSQL (with pgvector) for tests, from the binaries inside the `pgserver` wheel.

No network and nothing installed by hand: `initdb` into a temporary folder, then `pg_ctl start`
listening on 127.0.0.1 at a free port (TCP, so a URL looks like a user's) and on a private socket
folder. PostgreSQL refuses to run as root; as root (CI here) the server runs as the unprivileged
system user `pgserver`, created once, as the pgserver package itself does.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import stat
import subprocess
import uuid
from pathlib import Path

from tests.ports import free_port

SERVER_USER = "pgserver"


def _binaries() -> Path:
    # Located, not imported: importing pgserver sets up its own server machinery we do not use.
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the pgserver wheel is not installed (make setup installs it with the dev extras)")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


POSTGRES_BIN_PATH = _binaries()
"""The PostgreSQL binaries (initdb, pg_ctl, postgres) inside the pgserver wheel."""


class PostgresServer:
    """One PostgreSQL cluster in `folder`: start, stop, restart, and fresh databases for tests."""

    def __init__(self, folder: Path) -> None:
        """Prepare (not start) a cluster in `folder`, which must not exist yet or be empty."""
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.data = folder / "data"
        self.port = free_port()
        self.log = folder / "server.log"
        self._user = self._server_user()

    def _server_user(self) -> str | None:
        if os.geteuid() != 0:
            return None
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            useradd = ["useradd", "-M", "-s", "/bin/false", SERVER_USER]
            subprocess.run(useradd, check=True, capture_output=True)
        # The unprivileged server must traverse to its folder and run the wheel's binaries.
        for path in (self.folder, POSTGRES_BIN_PATH):
            for parent in [path, *path.parents]:
                parent.chmod(parent.stat().st_mode | stat.S_IXOTH | stat.S_IROTH)
        return SERVER_USER

    def _run(self, *args: str, timeout: float = 60) -> None:
        command = [str(POSTGRES_BIN_PATH / args[0]), *args[1:]]
        # user= alone keeps root's group, whose (empty) group bits would then deny the server.
        as_user = {"user": self._user, "group": self._user, "extra_groups": []} if self._user else {}
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **as_user)
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr.strip()}\n{log[-2000:]}")

    def init(self) -> None:
        """initdb (trust authentication: the server listens on loopback only)."""
        if self._user:
            shutil.chown(self.folder, self._user)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`immediate` is a crash: no shutdown checkpoint)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        """A TCP URL of `database` on this server."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database (with the vector extension) and its URL."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(self.url(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return self.url(name)

    def close(self) -> None:
        """Stop the server if it runs and delete its folder."""
        if (self.data / "postmaster.pid").exists():
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)
