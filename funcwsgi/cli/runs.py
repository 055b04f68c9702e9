"""The runs of a project: ``.func/runs/N/run.json``, ports, and finding a live one.

Each ``funcwsgi run`` records its process id, port and URL in its own
``.func/runs/N/run.json``. Ports are chosen under a lock on ``.func/runs`` so
that concurrent runs never pick the same one; ``invoke`` reads the records to
call "the function ``run`` started in this project".
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

STATE = "run.json"
#: How far above the requested port to look for a free one before asking the OS.
PORT_SEARCH = 50


@dataclass(frozen=True)
class RunRecord:
    folder: str
    pid: int
    port: int
    url: str
    container: str = ""

    @property
    def index(self) -> int:
        return int(Path(self.folder).name)


@contextmanager
def runs_lock(runs: Path) -> Iterator[None]:
    runs.mkdir(parents=True, exist_ok=True)
    with open(runs / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def port_is_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
        try:
            sock.bind((host, port))
        except OSError as error:
            if error.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def ephemeral_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def claim_port(runs: Path, folder: Path, host: str, requested: int, url_host: str, container: str = "") -> RunRecord:
    """Pick ``requested`` or the next free port no live sibling run holds, and record it in ``folder``.

    Done under the lock on ``runs``, so a concurrent run sees this claim
    before it picks its own port.
    """
    with runs_lock(runs):
        taken = {record.port for record in live_runs(runs)}
        port = next(
            (candidate for candidate in range(requested, min(requested + PORT_SEARCH, 65536)) if candidate not in taken and port_is_free(host, candidate)),
            None,
        )
        if port is None:
            port = ephemeral_port(host)
        record = RunRecord(str(folder), os.getpid(), port, f"http://{url_host}:{port}", container)
        (folder / STATE).write_text(json.dumps(asdict(record)) + "\n")
    return record


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_runs(runs: Path) -> list[RunRecord]:
    """The runs whose ``funcwsgi run`` process is still alive, lowest N first."""
    records: list[RunRecord] = []
    if not runs.is_dir():
        return records
    for state in runs.glob(f"*/{STATE}"):
        try:
            record = RunRecord(**json.loads(state.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        if _alive(record.pid):
            records.append(record)
    return sorted(records, key=lambda record: (len(Path(record.folder).name), Path(record.folder).name))
