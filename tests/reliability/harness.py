"""What the reliability matrices share: a served function per adapter, the leak check, process figures.

Every HTTP answer a matrix gets goes through :class:`LeakCheck`, which fails
the test at once if the answer shows a caller anything it must not see.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from ..conftest import function_folder
from ..servers import BIN, REPO, Server, base_env, free_port

SERVE = [str(BIN / "funcwsgi"), "serve"]
#: The servers the fault matrix runs on (werkzeug's is for development only).
ADAPTERS = ("gunicorn", "waitress", "granian")
CALL_TIMEOUT = 0.5
MAX_BODY = 4096
#: An environment value no answer may ever contain.
CANARY = "canary-7f3d0c1e9b"
#: What the fixture functions' exceptions say; no answer may contain it.
SECRETS = ("hunter2", "cannot reach the database")


@dataclass
class LeakCheck:
    """Refuses answers that show a traceback, an exception message, a file path or an environment value."""

    checked: int = 0
    forbidden: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        paths = {str(REPO), str(Path(sys.prefix)), str(Path(sys.base_prefix) / "lib"), str(Path(function_folder("serving")))}
        self.forbidden = ["Traceback (most recent call last)", 'File "', CANARY, *SECRETS, *sorted(paths)]
        self.patterns = [re.compile(r"\b\w+(Error|Exception): "), re.compile(r"\bline \d+, in ")]

    def check(self, where: str, *parts: bytes | str) -> None:
        text = "\n".join(part.decode("latin-1") if isinstance(part, bytes) else part for part in parts)
        for needle in self.forbidden:
            assert needle not in text, f"{where}: the answer shows {needle!r}:\n{text[:2000]}"
        for pattern in self.patterns:
            found = pattern.search(text)
            assert found is None, f"{where}: the answer shows {found.group(0)!r}:\n{text[:2000]}"
        self.checked += 1

    def response(self, response: requests.Response) -> requests.Response:
        headers = "\n".join(f"{name}: {value}" for name, value in response.headers.items())
        self.check(f"{response.request.method} {response.request.url}", response.reason or "", headers, response.content)
        return response

    def werkzeug(self, response: Any, where: str) -> Any:
        headers = "\n".join(f"{name}: {value}" for name, value in response.headers.items())
        self.check(where, response.status, headers, response.get_data())
        return response


LEAKS = LeakCheck()


@dataclass
class Served:
    adapter: str
    server: Server
    folder: Path

    @property
    def url(self) -> str:
        return self.server.url

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 30)
        return LEAKS.response(requests.get(self.url + path, **kwargs))

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 30)
        return LEAKS.response(requests.request(method, self.url + path, **kwargs))

    def raw(self, data: bytes, timeout: float = 10.0) -> bytes:
        """Send bytes as they are and read the answer until the server closes or goes quiet."""
        answer = raw_exchange(self.server.host, self.server.port, data, timeout)
        LEAKS.check(f"{self.adapter} raw {data[:60]!r}", answer)
        return answer

    def events(self) -> list[str]:
        path = self.folder / "lifecycle.log"
        return path.read_text().splitlines() if path.exists() else []

    def serving_pid(self) -> int:
        return int(self.get("/pid").json()["pid"])

    def output(self) -> str:
        return self.server.stdout + self.server.stderr

    def records(self) -> list[dict[str, Any]]:
        """The JSON log records the server wrote so far."""
        return log_records(self.output())


def log_records(output: str) -> list[dict[str, Any]]:
    found = []
    for line in output.splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    return found


def serve(adapter: str, folder: Path, *, scenario: str = "serving", wait: bool = True, **settings: str) -> Served:
    """``funcwsgi serve`` of ``tests/functions/<scenario>`` on ``adapter``, configured by environment only."""
    port = free_port()
    env = base_env(
        SERVER_ADAPTER=adapter,
        HANDLER_FOLDER=function_folder(scenario),
        SERVER_HOST="127.0.0.1",
        SERVER_PORT=str(port),
        SERVER_NUMTHREADS="4",
        SERVER_CALL_TIMEOUT=str(CALL_TIMEOUT),
        SERVER_MAX_BODY_SIZE=str(MAX_BODY),
        SERVER_ACCESS_LOG="true",  # the matrices check the access record of each case
        LIFECYCLE_LOG=str(folder / "lifecycle.log"),
        HEALTH_DIR=str(folder),
        RELIABILITY_CANARY=CANARY,
    )
    env.update(settings)
    served = Served(adapter, Server(SERVE, env, port), folder)
    if wait:
        try:
            served.server.wait_ready()
        except Exception:
            served.server.stop()
            raise
    return served


def raw_exchange(host: str, port: int, data: bytes, timeout: float = 10.0) -> bytes:
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return answer


def status_of(answer: bytes) -> int:
    """The status code of a raw HTTP answer; 0 when the server closed without one."""
    match = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(match.group(1)) if match else 0


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = predicate()
        except (requests.ConnectionError, requests.Timeout):
            found = None
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{what} not met in {timeout}s")


# -- process figures, from /proc ------------------------------------------------


def process_figures(pid: int) -> dict[str, int]:
    """Resident memory (kB), threads and open file descriptors of a process."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {
        "rss_kb": int(fields["VmRSS"].split()[0]),
        "threads": int(fields["Threads"]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
    }


def children(pid: int) -> list[int]:
    """The process ids whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def all_ok(responses: Iterable[requests.Response]) -> bool:
    return all(response.status_code == 200 for response in responses)
