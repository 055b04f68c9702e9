"""A Debug Adapter Protocol client over TCP, as VS Code speaks it: a Content-Length header, then JSON.

Used against debugpy's adapter (SERVER_DEBUG_PORT) on the host and in a container, with
the function of tests/functions/debugged (a breakpoint on its marked line).
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import requests

from .paths import FUNCTIONS


class DapClient:
    """Requests, their responses and the events between them, on one connection."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 20) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buffer = b""
        self.seq = 0
        self.events: list[dict[str, Any]] = []  # read while waiting for something else, not yet asked for
        self.responses: dict[int, dict[str, Any]] = {}

    def send(self, command: str, arguments: dict[str, Any]) -> int:
        """Send a request without waiting (``attach`` is answered only after ``configurationDone``); its seq."""
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command, "arguments": arguments}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def request(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.response(self.send(command, arguments))

    def response(self, seq: int) -> dict[str, Any]:
        while seq not in self.responses:
            self.read()
        return self.responses.pop(seq)

    def event(self, name: str) -> dict[str, Any]:
        """The first event ``name`` not yet taken, reading until it comes."""
        while True:
            for index, event in enumerate(self.events):
                if event["event"] == name:
                    return self.events.pop(index)
            self.read()

    def read(self) -> None:
        message = self.message()
        if message["type"] == "response":
            self.responses[message["request_seq"]] = message
        elif message["type"] == "event":
            self.events.append(message)

    def message(self) -> dict[str, Any]:
        while b"\r\n\r\n" not in self.buffer:
            self.receive()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        while len(self.buffer) < length:
            self.receive()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return json.loads(body)  # type: ignore[no-any-return]

    def receive(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise AssertionError(f"the debugger closed the connection; had {self.buffer!r}")
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def stop_one_call(client: DapClient, launch: dict[str, Any], workspace: Path, line: int, url: str) -> tuple[dict[str, Any], str, requests.Response]:
    """What a developer does in VS Code with ``launch`` (``${workspaceFolder}`` being ``workspace``).

    Attach, set a breakpoint at ``handler.py:line``, call ``url + "/paused"``
    until it stops there, call ``url + "/"`` meanwhile, and let the stopped call
    go on. Returns (the frame it stopped in, the other call's answer, the
    stopped call's answer).
    """
    mappings = [{**mapping, "localRoot": mapping["localRoot"].replace("${workspaceFolder}", str(workspace))} for mapping in launch["pathMappings"]]
    attach = client.send("attach", {**launch, "pathMappings": mappings})
    client.event("initialized")
    source = {"path": str(workspace / "handler.py")}
    placed = client.request("setBreakpoints", {"source": source, "breakpoints": [{"line": line}]})
    assert placed["success"] is True, placed
    assert client.request("configurationDone", {})["success"] is True
    assert client.response(attach)["success"] is True, "attached"
    answers: dict[str, requests.Response] = {}
    call = threading.Thread(target=lambda: answers.update(paused=requests.get(url + "/paused", timeout=60)))
    call.start()
    try:
        stopped = client.event("stopped")["body"]
        assert stopped["reason"] == "breakpoint", stopped
        frame = client.request("stackTrace", {"threadId": stopped["threadId"], "levels": 1})["body"]["stackFrames"][0]
        other = requests.get(url + "/", timeout=10).text  # while one call waits at the breakpoint
        assert client.request("continue", {"threadId": stopped["threadId"]})["success"] is True
    finally:
        call.join(timeout=60)
    return frame, other, answers["paused"]


#: The function a debugger attaches to, with its breakpoint line marked.
DEBUGGED = FUNCTIONS / "debugged"


def breakpoint_line() -> int:
    lines = (DEBUGGED / "handler.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.endswith("# breakpoint"))
