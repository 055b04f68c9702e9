"""What the reliability matrices share: a served function per adapter, the leak check, process figures.

Every HTTP answer a matrix gets goes through :class:`LeakCheck`, which fails
the test at once if the answer shows a caller anything it must not see.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from ..support.logs import log_records
from ..support.paths import REPO, function_folder
from ..support.processes import SERVE, ServedFunction, start
from ..support.sockets import exchange

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


class Served(ServedFunction):
    """A served function whose every answer goes through the leak check."""

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 30)
        return LEAKS.response(requests.get(self.url + path, **kwargs))

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 30)
        return LEAKS.response(requests.request(method, self.url + path, **kwargs))

    def raw(self, data: bytes, timeout: float = 10.0) -> bytes:
        """Send bytes as they are and read the answer until the server closes or goes quiet."""
        answer = exchange(self.server.port, data, self.server.host, timeout)
        LEAKS.check(f"{self.adapter} raw {data[:60]!r}", answer)
        return answer

    def serving_pid(self) -> int:
        return int(self.get("/pid").json()["pid"])

    def records(self) -> list[dict[str, Any]]:
        """The JSON log records the server wrote so far."""
        return log_records(self.output())


def serve(adapter: str, folder: Path, *, scenario: str = "serving", wait: bool = True, **settings: str) -> Served:
    """``funcwsgi serve`` of ``tests/functions/<scenario>`` on ``adapter``, configured by environment only."""
    defaults = {
        "SERVER_ADAPTER": adapter,
        "SERVER_NUMTHREADS": "4",
        "SERVER_CALL_TIMEOUT": str(CALL_TIMEOUT),
        "SERVER_MAX_BODY_SIZE": str(MAX_BODY),
        "SERVER_ACCESS_LOG": "true",  # the matrices check the access record of each case
        "LIFECYCLE_LOG": str(folder / "lifecycle.log"),
        "HEALTH_DIR": str(folder),
        "RELIABILITY_CANARY": CANARY,
    }
    return Served(adapter, start(SERVE, scenario, wait=wait, **{**defaults, **settings}), folder)


def all_ok(responses: Iterable[requests.Response]) -> bool:
    return all(response.status_code == 200 for response in responses)
