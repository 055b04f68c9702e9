"""The framing corpus run on one serving path: raw bytes out, the answers and the function's own record back.

A serving path is a server started once (``start``) with the recording
function of ``tests/functions/framing*``; ``run_case`` sends one case and
its innocent follower on one connection, reads the answers as a client
would, and reads what the function saw from the file it appends to.
``judge`` turns that into one cell (what the doc's table shows) and the
problems RFC 9112 finds in it.

    python -m tests.reliability.framing --write docs/framing-results.json

runs every path and writes the cells; ``tests.reliability.framing_doc``
puts them into docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..support.paths import REPO, function_folder
from ..support.ports import free_port
from ..support.processes import Server, base_env
from .framing_cases import ACCEPT, CASES, EITHER, IN_ORDER, IN_ORDER_CALLS, NOT_RUN, PROBE, REFUSE, THEN_REFUSE, Case, innocent
from .harness import LEAKS, serve

#: How long a case's answers are waited for: the slowest honest answer is far quicker; a server that
#: waits for bytes that will never come (it took the next request for a body) waits longer.
BUDGET = 3.0
#: A client that left: how long the function is given to run anyway before it is taken as not run.
LEFT_WAIT = 1.0
MAX_BODY = 1024 * 1024


@dataclass(frozen=True)
class ServingPath:
    name: str
    scenario: str  # the recording function's folder under tests/functions
    adapter: str | None = None  # SERVER_ADAPTER; None: nodejs26
    ours: bool = True  # our own framing (RFC 9112 is asserted), else a third-party server's (documented)
    module: str = "handler"  # HANDLER_MODULE_NAME: handler_async is the same function as async def


#: Every serving path the corpus runs on; a new server or worker is one line here.
PATHS = (
    ServingPath("gunicorn", "framing", "gunicorn"),
    ServingPath("gunicorn-loop", "framing", "gunicorn", module="handler_async"),
    ServingPath("waitress", "framing", "waitress", ours=False),
    ServingPath("werkzeug", "framing", "werkzeug", ours=False),
    ServingPath("granian", "framing", "granian", ours=False),
    ServingPath("nodejs26", "framing_nodejs26"),
)
PATH_NAMES = tuple(path.name for path in PATHS)
BY_NAME = {path.name: path for path in PATHS}


@dataclass
class Running:
    path: ServingPath
    server: Server
    calls_file: Path

    @property
    def address(self) -> tuple[str, int]:
        return (self.server.host, self.server.port)

    def calls(self) -> list[dict[str, str]]:
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines() if line.strip()]

    def stop(self) -> None:
        self.server.stop()


def start(path: ServingPath, folder: Path, **settings: str) -> Running:
    """The path's server on a free loopback port, two threads, serving the recording function."""
    calls = folder / "calls.jsonl"
    env = {
        "FRAMING_CALLS": str(calls),
        "SERVER_NUMTHREADS": "2",
        "SERVER_MAX_BODY_SIZE": str(MAX_BODY),
        "SERVER_BODY_TIMEOUT": "10",
        "SERVER_CALL_TIMEOUT": "10",
        # Stopped, not drained: werkzeug's development server never closes the answer of a call whose
        # client left while it read the rest of the body, so that call stays in flight until this ends.
        "SERVER_GRACEFUL_TIMEOUT": "1",
        "HANDLER_MODULE_NAME": path.module,
        **settings,
    }
    if path.adapter is not None:
        served = serve(path.adapter, folder, scenario=path.scenario, **env)
        return Running(path, served.server, calls)
    port = free_port()
    node_env = base_env(HANDLER_FOLDER=function_folder(path.scenario), SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), **env)
    server = Server([str(REPO / "nodejs26" / "bin" / "serve")], node_env, port)
    try:
        server.wait_ready()
    except Exception:
        server.stop()
        raise
    return Running(path, server, calls)


# -- the client side ----------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Seen:
    answers: list[Answer] = field(default_factory=list)
    continues: int = 0
    closed: bool = False  # the server closed the connection (or reset it) within the budget
    complete: bool = False  # every answer waited for came
    raw: bytes = b""


def _parse_one(buffer: bytes) -> tuple[Answer, int] | None:
    """The first whole response in ``buffer`` and its length; None while it is incomplete."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = buffer[:end].decode("latin-1").split("\r\n")
    match = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    status = int(match.group(1)) if match else 0
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    start = end + 4
    if 100 <= status < 200 or status in (204, 304):
        return Answer(status, headers, b""), start
    if "content-length" in headers:
        length = int(headers["content-length"])
        if len(buffer) < start + length:
            return None
        return Answer(status, headers, buffer[start : start + length]), start + length
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body, at = b"", start
        while True:
            line_end = buffer.find(b"\r\n", at)
            if line_end < 0:
                return None
            size = int(buffer[at:line_end].split(b";")[0], 16)
            if size == 0:
                trailer_end = buffer.find(b"\r\n\r\n", line_end)
                if buffer[line_end : line_end + 4] == b"\r\n\r\n":
                    return Answer(status, headers, body), line_end + 4
                if trailer_end < 0:
                    return None
                return Answer(status, headers, body), trailer_end + 4
            if len(buffer) < line_end + 2 + size + 2:
                return None
            body += buffer[line_end + 2 : line_end + 2 + size]
            at = line_end + 2 + size + 2
    return None  # delimited by the close


def exchange(address: tuple[str, int], case: Case, budget: float = BUDGET) -> Seen:
    """Send the case and its innocent follower on one connection; read the answers until both came, the close, or the budget."""
    seen = Seen()
    data = case.request()
    follower = b"" if case.leaves else innocent(case.name)
    # Behind a valid request and garbage, a third answer (the follower's) would be one too many: read to the close.
    wanted = len(IN_ORDER_CALLS.get(case.name, ((),))) + 1 + (case.expect == THEN_REFUSE)
    deadline = time.monotonic() + budget
    with socket.create_connection(address, timeout=budget) as sock:
        buffer = b""
        if case.wait_for_continue is not None:
            head, rest = data.split(case.wait_for_continue, 1)
            sock.sendall(head)
            waited = time.monotonic() + 1.0
            while b"100 Continue" not in buffer and time.monotonic() < waited:
                sock.settimeout(max(0.01, waited - time.monotonic()))
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    break
                if not chunk:
                    break
                buffer += chunk
            sock.sendall(rest + follower)
        else:
            sock.sendall(data + follower)
        if case.leaves:
            sock.close()
            seen.closed = True
            return seen
        while True:
            parsed = _parse_one(buffer)
            while parsed is not None:
                answer, used = parsed
                buffer = buffer[used:]
                if 100 <= answer.status < 200:
                    seen.continues += 1
                else:
                    seen.answers.append(answer)
                parsed = _parse_one(buffer)
            if len(seen.answers) >= wanted:
                seen.complete = True
                break
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            except (ConnectionResetError, BrokenPipeError):
                seen.closed = True
                break
            if not chunk:
                seen.closed = True
                if buffer.startswith(b"HTTP/"):  # a response delimited by the close
                    answer_or_none = _parse_one(buffer + b"\r\n\r\n") if b"\r\n\r\n" not in buffer else None
                    head, _, body = buffer.partition(b"\r\n\r\n")
                    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
                    if answer_or_none is None and match:
                        seen.answers.append(Answer(int(match.group(1)), {}, body))
                break
            buffer += chunk
            seen.raw += chunk
    LEAKS.check(f"framing case {case.name}", seen.raw)
    return seen


# -- judging --------------------------------------------------------------------------------------


KNOWN_PATH = re.compile(r"/(case|innocent|smuggled)/")
#: A call the server makes after a refusal, or after the client's close, comes within this long.
SETTLE = 0.2


@dataclass
class Outcome:
    cell: str
    problems: list[str]


def calls_of(calls: list[dict[str, str]], kind: str, name: str) -> list[dict[str, str]]:
    marker = f"/{kind}/{name}"
    return [call for call in calls if call["path"].endswith(marker) or f"{marker}/" in call["path"]]


def judge(case: Case, seen: Seen, calls: list[dict[str, str]]) -> Outcome:
    """One cell for the doc's table, and what RFC 9112 (or smuggling) finds wrong in it.

    ``calls`` are the function's calls made since the case was sent (a late
    call of the case before is told apart by its path).
    """
    innocents = calls_of(calls, "innocent", case.name)
    smuggled = calls_of(calls, "smuggled", case.name)
    # The case's own calls; a call with none of the corpus's paths (`*`, `x:80`) is the case's too.
    mine = [call for call in calls if call["path"] == case.path or call["path"].startswith(case.path + "/") or not KNOWN_PATH.search(call["path"])]
    problems: list[str] = []
    first = seen.answers[0] if seen.answers else None
    status = first.status if first else 0
    if case.expect == NOT_RUN:
        if mine:
            problems.append(f"function ran on {len(mine[0]['body'])} bytes")
        return Outcome("not run" if not problems else "ran", problems)
    refused = status >= 400 or (status == 0 and seen.closed)
    if status == 0:
        base = "no answer, closed" if seen.closed else f"no answer in {BUDGET:g} s"
    elif refused:
        base = f"{status}, " + ("closed" if seen.closed and len(seen.answers) == 1 else "kept open")
    else:
        base = str(status)
    if any(answer.status == 500 for answer in seen.answers):
        problems.append("500")
    # The innocent follower: answered once by the function, or the connection closed before it. Behind a hidden
    # request that ran, its answer is a third one, which the client did not wait for.
    innocent_answered = len(seen.answers) >= 2 and seen.answers[-1].status == 200 and seen.answers[-1].body == b"0"
    if smuggled:
        problems.append("a hidden request ran")
    elif len(innocents) > 1:
        problems.append(f"next request ran {len(innocents)} times")
    elif innocents and not innocent_answered:
        problems.append("next request ran, its answer lost")
    elif not innocents and not seen.closed:
        problems.append("next request lost")
    if case.expect == IN_ORDER:
        expected = [(case.path + suffix, body.decode("latin-1")) for suffix, body in IN_ORDER_CALLS[case.name]]
        got = [(call["path"], call["body"]) for call in mine]
        if seen.closed and got == expected[: len(got)] and len(seen.answers) == len(got):
            return Outcome(base if len(got) == len(expected) else f"{len(got)} of {len(expected)} answered, closed", problems)
        if got != expected:
            problems.append("calls " + ", ".join(f"{path.removeprefix(case.path) or '/'}:{body!r}" for path, body in got) + " (not the requests in order)")
        if [answer.status for answer in seen.answers[: len(expected)]] != [200] * len(expected):
            problems.append("answers " + ", ".join(str(answer.status) for answer in seen.answers))
        return Outcome(base if not problems else base, problems)
    if case.expect == THEN_REFUSE:
        statuses = [answer.status for answer in seen.answers]
        cell = ", then ".join(str(status) for status in statuses) or base
        if statuses[:1] != [200] or len(mine) != 1:
            problems.append(f"the valid request's answer did not come first (function ran {len(mine)} times)")
        elif len(statuses) != 2 or not 400 <= statuses[1] < 500 or not seen.closed:
            problems.append("the garbage after it was not refused with a 4xx and the close")
        return Outcome(cell + (", closed" if seen.closed else ", kept open"), problems)
    if case.expect == PROBE:
        if mine:
            problems.append(f"the function ran with path {mine[0]['path']!r} instead of the probe")
        elif status != 200:
            problems.append("the probe did not answer")
        return Outcome("probe answered" if not problems else base, problems)
    if status == 0 and not seen.closed:  # it waits for bytes that will never come: it read the request otherwise
        if mine:
            problems.append(f"function ran on {len(mine[0]['body'])} bytes")
        return Outcome(base, problems)
    if refused:
        if mine:
            problems.append(f"function ran on {len(mine[0]['body'])} bytes of a refused request")
        if status and seen.answers[0:1] and not seen.closed:
            problems.append("kept open after refusing")
        if case.expect == ACCEPT:
            problems.append("refuses a valid request")
        return Outcome(base, problems)
    # Answered without refusing: the function ran, once, on the body as sent.
    if len(mine) != 1:
        problems.append(f"function ran {len(mine)} times")
    elif case.expect != REFUSE:
        if mine[0]["body"].encode("latin-1") != case.body:
            problems.append(f"function saw {len(mine[0]['body'])} bytes, not the {len(case.body)} sent")
        if mine[0]["path"] != case.path:
            problems.append(f"function saw path {mine[0]['path']!r}")
    if case.expect == REFUSE:
        problems.append("accepted where RFC 9112 asks for 400" + (f" (the function saw {len(mine[0]['body'])} bytes)" if mine else ""))
    if case.expect not in (ACCEPT, EITHER, REFUSE):
        problems.append(f"unexpected answer for a {case.expect} case")
    return Outcome(base, problems)


def cell_text(outcome: Outcome) -> str:
    return outcome.cell + "".join(f"; {problem}" for problem in outcome.problems)


def run_case(running: Running, case: Case) -> Outcome:
    before = len(running.calls())
    seen = exchange(running.address, case)
    if case.leaves:
        time.sleep(LEFT_WAIT)  # the function would have run by now on any path that runs it
    elif seen.closed or not seen.complete:
        time.sleep(SETTLE)  # the server saw the close: a call it makes of what it read comes now
    return judge(case, seen, running.calls()[before:])


def run_path(path: ServingPath, folder: Path) -> dict[str, str]:
    running = start(path, folder)
    try:
        return {case.name: cell_text(run_case(running, case)) for case in CASES}
    finally:
        running.stop()


def main(argv: list[str]) -> int:
    import tempfile

    parser = argparse.ArgumentParser(description="Run the framing corpus on every serving path.")
    parser.add_argument("--write", type=Path, help="write the results file (docs/framing-results.json)")
    parser.add_argument("--path", action="append", choices=PATH_NAMES, help="only these paths (default: all)")
    args = parser.parse_args(argv)
    # Stopped (make interrupted, a CI timeout): the servers started so far are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    cells: dict[str, Any] = {}
    if args.write and args.write.exists():
        cells = json.loads(args.write.read_text())["cells"]
    for name in args.path or PATH_NAMES:
        with tempfile.TemporaryDirectory() as folder:
            cells[name] = run_path(BY_NAME[name], Path(folder))
        print(f"{name}: {sum(';' in cell for cell in cells[name].values())} cases with problems", file=sys.stderr)
    results = {"command": "python -m tests.reliability.framing --write docs/framing-results.json", "cells": {name: cells[name] for name in PATH_NAMES if name in cells}}
    text = json.dumps(results, indent=1, sort_keys=False) + "\n"
    if args.write:
        args.write.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
