"""The request-framing corpus on every serving path (tests/reliability/framing_cases.py, framing.py).

Each server starts once per path; each case is sent on a fresh connection
with an innocent request behind it, and asserts what the client got and what
the function saw. On funcwsgi's own framing (the default worker, the
event-loop worker, nodejs26) RFC 9112 decides and nothing may be wrong; on a
third-party server's parser (waitress, werkzeug, granian) the answer must be
the one docs/framing-results.json records, so docs/reliability.md, generated
from it, cannot outlive a change. ``FRAMING_RESULTS=path`` writes what this
run saw to that file instead of comparing (``python -m tests.reliability.framing``
does the same outside pytest).
"""

from __future__ import annotations

import json
import os
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from ..support.paths import REPO
from .framing import BY_NAME, PATH_NAMES, PATHS, Running, cell_text, run_case, start
from .framing_cases import CASE_NAMES, CASES, CHUNKED, Case

RESULTS = REPO / "docs" / "framing-results.json"
WRITE_TO = os.environ.get("FRAMING_RESULTS")
#: A 2-thread server with two connections holding malformed bodies still answers an honest call
#: this fast (the 30 s of a thread waiting for the rest of such a body is far beyond it).
HONEST_CALL_BOUND = 5.0
_seen: dict[str, dict[str, str]] = {}
#: Where one of funcwsgi's own paths still gets a case wrong (issue 42 item 7): the table records it, and the
#: test fails once the path gets it right, so the entry goes with the fix.
STILL_OPEN: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module", params=[pytest.param(path.name, marks=() if path.ours else pytest.mark.survey) for path in PATHS])
def running(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    served = start(BY_NAME[request.param], tmp_path_factory.mktemp(f"framing-{request.param}"))
    yield served
    served.stop()
    if WRITE_TO:
        _write(Path(WRITE_TO), request.param)


def _write(target: Path, path: str) -> None:
    results: dict[str, Any] = json.loads(target.read_text()) if target.exists() else {"command": "", "cells": {}}
    results["command"] = "python -m tests.reliability.framing --write docs/framing-results.json"
    results["cells"][path] = _seen.get(path, {})
    results["cells"] = {name: results["cells"][name] for name in PATH_NAMES if name in results["cells"]}
    target.write_text(json.dumps(results, indent=1) + "\n")


def recorded(path: str, case: str) -> str | None:
    cells = json.loads(RESULTS.read_text())["cells"]
    return cells.get(path, {}).get(case)


@pytest.mark.parametrize("case", CASES, ids=CASE_NAMES)
def test_framing(running: Running, case: Case) -> None:
    outcome = run_case(running, case)
    cell = cell_text(outcome)
    path = running.path.name
    _seen.setdefault(path, {})[case.name] = cell
    if WRITE_TO:
        return
    still_open = STILL_OPEN.get((path, case.name))
    if running.path.ours and still_open is None:
        assert not outcome.problems, f"{path}, {case.name} ({case.what}): {cell}"
    if still_open is not None:
        assert outcome.problems, f"{path}, {case.name} is right now ({cell}): remove it from STILL_OPEN"
    assert cell == recorded(path, case.name), (
        f"{path}, {case.name}: the server now answers {cell!r}; docs/framing-results.json says {recorded(path, case.name)!r}: "
        "run `make framing` to record it and regenerate docs/reliability.md"
    )
    if still_open is not None:
        pytest.xfail(still_open)


def test_a_malformed_request_costs_a_connection_never_a_function_thread(running: Running) -> None:
    """Two connections holding chunked bodies ended by bare LFs, on a server with two threads: an honest call is not delayed.

    The last chunk and the end of the body are bare LFs: a framer that takes them for line ends while
    the parser after it waits for CRLFs hands a thread a body that never ends.
    """
    bad = [socket.create_connection(running.address, timeout=5) for _ in range(2)]
    try:
        for sock in bad:
            sock.sendall(CHUNKED.replace(b"{P}", b"/case/bare-lf-holder") + b"\r\n3\r\nabc\r\n0\n\n")
        for sock in bad:  # each was either refused or handed on by now: wait for its answer, or a short while for none
            sock.settimeout(0.3)
            try:
                sock.recv(65536)
            except TimeoutError:
                pass
        started = time.monotonic()
        honest = requests.post(f"http://{running.address[0]}:{running.address[1]}/honest", data=b"hi", timeout=30)
        took = time.monotonic() - started
    finally:
        for sock in bad:
            sock.close()
    assert (honest.status_code, honest.text) == (200, "2")
    assert took < HONEST_CALL_BOUND, f"{running.path.name}: the honest call took {took:.1f} s behind two malformed requests"


PIECES_ROUNDS = 30
PIPELINED = 20


def test_pipelined_requests_sent_in_pieces_are_all_answered(running: Running) -> None:
    """20 pipelined POSTs, sent in pieces of 1-120 bytes with short pauses, 30 times: every one is answered.

    On the default worker a read of the loop could take the next request's bytes while a thread
    handed the connection back, and lose them (the connection then hung); a seeded random
    split makes the run the same each time.
    """
    if running.path.name == "werkzeug":
        pytest.skip("werkzeug's development server answers one request per connection (docs/reliability.md#hostile-clients)")
    if running.path.name == "granian":
        pytest.skip("funcwsgi on granian keeps no connection alive unless SERVER_KEEPALIVE_TIMEOUT is set (docs/servers.md#keep-alive-on-granian)")
    pieces = random.Random(30)
    request = b"POST /piece HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na"
    deadline = time.monotonic() + 60
    for round_number in range(PIECES_ROUNDS):
        assert time.monotonic() < deadline, f"{running.path.name}: {round_number} rounds in 60 s"
        with socket.create_connection(running.address, timeout=5) as sock:
            data, at = request * PIPELINED, 0
            while at < len(data):
                step = pieces.randint(1, 120)
                sock.sendall(data[at : at + step])
                at += step
                if pieces.random() < 0.3:
                    time.sleep(0.0005)
            answers = b""
            try:
                while answers.count(b" 200 ") < PIPELINED and (chunk := sock.recv(65536)):
                    answers += chunk
            except TimeoutError:
                pass
        assert answers.count(b" 200 ") == PIPELINED, f"{running.path.name}, round {round_number}: {answers.count(b' 200 ')} of {PIPELINED} answered"
