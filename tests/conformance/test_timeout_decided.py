"""C17: past its deadline a call answers 408, whatever the function does next; before it, the function's answer.

The fixture's ``/spin`` sleeps most of the way (``?idle=``), then asks
whether it is cancelled without a pause and returns ``done`` the moment it is
told: told by the clock, it can answer before the runtime's own look at the
deadline comes round. The runtime decides once
which answer goes out, so the client sees exactly one status line, the 408,
and the access log and the metrics say the same. Each call is read whole off
a raw socket (HTTP/1.1 with ``Connection: close``, or one h2c stream).
"""

from __future__ import annotations

import re
import socket
import uuid
from collections.abc import Iterator

import pytest

from ..support.metrics import metric_total
from ..support.polling import wait_for
from .kit import TIMEOUT_BODY, Runtime, serve

pytestmark = pytest.mark.slow("12 calls in a row on each serving path, each one waiting out the 0.3-s call timeout")

#: A sub-second call timeout, so that many calls in a row stay quick.
CALL_TIMEOUT = 0.3
#: Calls in a row past the deadline: before the runtime decided once, about five in six went out as `200 done`.
CALLS = 12
#: Seconds a call sleeps before it spins: the race is at the deadline, and a spin of the whole 0.3 s took 43 s
#: of a core for the kit's twelve runtimes.
IDLE = CALL_TIMEOUT * 2 / 3


@pytest.fixture(scope="module")
def decided(launcher) -> Iterator[Runtime]:
    with serve(launcher, "main", {"SERVER_CALL_TIMEOUT": f"{CALL_TIMEOUT:g}", "SERVER_ACCESS_LOG": "true"}) as running:
        yield running


def exchange(runtime: Runtime, path: str, request_id: str) -> list[tuple[int, bytes]]:
    """Every (status, body) the runtime sent for one call of ``path``, read until the call's end on the wire."""
    if runtime.launcher.protocol == "h2c":
        return h2c_exchange(runtime.process.port, path, request_id)
    with socket.create_connection(("127.0.0.1", runtime.process.port), timeout=10) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: kit\r\nX-Request-Id: {request_id}\r\nConnection: close\r\n\r\n".encode())
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    heads = list(re.finditer(rb"(?:^|\r\n)HTTP/1\.[01] (\d{3})[^\r\n]*\r\n", received))
    answers = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(received)
        answers.append((int(head.group(1)), received[head.end() : end].partition(b"\r\n\r\n")[2]))
    assert answers, f"no answer on the wire: {received!r}"
    return answers


def h2c_exchange(port: int, path: str, request_id: str) -> list[tuple[int, bytes]]:
    import h2.config
    import h2.connection
    import h2.events

    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    connection.send_headers(1, [(":method", "GET"), (":scheme", "http"), (":authority", "kit"), (":path", path), ("x-request-id", request_id)], end_stream=True)
    answers: list[tuple[int, bytes]] = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(connection.data_to_send())
        ended = False
        while not ended:
            data = client.recv(65536)
            if not data:
                break
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == 1:
                    answers.append((int(dict(event.headers)[b":status"]), b""))
                elif isinstance(event, h2.events.DataReceived) and event.stream_id == 1:
                    answers[-1] = (answers[-1][0], answers[-1][1] + event.data)
                    connection.acknowledge_received_data(event.flow_controlled_length, 1)
                elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)) and event.stream_id == 1:
                    ended = True
            client.sendall(connection.data_to_send())
    assert answers, "no answer on the stream"
    return answers


def access_statuses(runtime: Runtime, request_id: str) -> list[object]:
    return [record.get("status") for record in runtime.log_records() if record.get("request_id") == request_id and "status" in record]


def test_a_function_told_it_timed_out_never_gets_its_answer_out(decided):
    """Mutation caught: funcwsgi's function's answer taken without asking the call's deadline (``TimedCall.finish``,
    ``CallThread.settle``, ``TimeoutMiddleware.on_task`` not calling ``Deadline.keep``): nearly every call then goes
    out as ``200 done``, as it did on every Python path before the runtime decided once."""
    metrics_before = decided.get("/metrics").text
    ids = [f"kit-decided-{uuid.uuid4().hex[:12]}" for _ in range(CALLS)]
    seen = {request_id: exchange(decided, f"/spin?idle={IDLE:g}", request_id) for request_id in ids}
    wrong = {request_id: answers for request_id, answers in seen.items() if answers != [(408, TIMEOUT_BODY.encode())]}
    assert not wrong, f"{len(wrong)} of {CALLS} calls did not go out as exactly one 408: {wrong}"
    # The access log says what the wire says: one record per call, 408.
    wait_for(lambda: all(access_statuses(decided, request_id) for request_id in ids), 5, "an access record for every call")
    logged = {request_id: access_statuses(decided, request_id) for request_id in ids}
    assert all(statuses == [408] for statuses in logged.values()), logged
    # And the metrics: every call failed and was cancelled by its timeout. A cancellation is counted when the
    # function itself stops, which on a thread may come after its 408 is on the wire: waited for, not raced.
    after = decided.get("/metrics").text
    assert metric_total(after, "function_failures_total") == metric_total(metrics_before, "function_failures_total") + CALLS
    cancelled_before = metric_total(metrics_before, "function_cancelled_total", cause="timeout")

    def cancelled() -> float:
        return metric_total(decided.get("/metrics").text, "function_cancelled_total", cause="timeout") - cancelled_before

    def by_cause() -> str:
        return "\n".join(line for line in decided.get("/metrics").text.splitlines() if line.startswith("function_cancelled_total"))

    wait_for(lambda: cancelled() >= CALLS, 5, f"{CALLS} calls counted as cancelled by their timeout", show=by_cause)
    assert cancelled() == CALLS


@pytest.mark.timing  # a 0.03-s call must end inside its 0.3-s timeout: judged in the timing phase, not beside the busy first one
def test_a_function_that_answers_before_its_deadline_keeps_its_answer(decided):
    """Mutation caught: every answer dropped once the deadline is looked at (``Deadline.keep`` always False)."""
    ids = [f"kit-in-time-{uuid.uuid4().hex[:12]}" for _ in range(4)]
    seen = {request_id: exchange(decided, f"/spin?seconds={CALL_TIMEOUT / 10:g}", request_id) for request_id in ids}
    assert all(answers == [(200, b"in time")] for answers in seen.values()), seen
    wait_for(lambda: all(access_statuses(decided, request_id) == [200] for request_id in ids), 5, "a 200 access record for every call")
