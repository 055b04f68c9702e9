"""The hostile-client matrix: misbehaving clients against a real server, and the calls of everyone else.

    python -m tests.reliability.hostile                     # every HTTP adapter; what `make hostile` runs
    python -m tests.reliability.hostile --adapter gunicorn  # one adapter
    python -m tests.reliability.hostile --write docs/hostile-results.json

Each attack opens its connections against ``funcwsgi serve`` (defaults, on
loopback) and holds them; while it holds them, normal calls (``GET /`` on a
new connection) must each be answered ``200`` within :data:`CALL_BUDGET`
seconds. Then the attack lets go, and the next normal call must be answered
again. After every attack, the serving processes' threads and descriptors
must be back where they were before the first one (no leak). The overload
scenario drives more concurrent calls than the server has threads and
reports what the admitted calls waited, what was refused, and how fast the
probes answered meanwhile. ``tests/reliability/test_hostile.py`` runs the same
matrix in ``make test``; ``tests/reliability/hostile_doc.py`` turns a results
file into the table in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import selectors
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..support.paths import function_folder
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env, children, process_figures
from ..support.sockets import status_of

HOST = "127.0.0.1"
#: A normal call made while an attack holds its connections must be answered within this.
CALL_BUDGET = 1.0
NORMAL_CALLS = 3
#: Time the server gets to take in what an attack sent before the normal calls start.
SETTLE = 0.5
#: After an attack lets go: how long the server may take to answer normally again.
RECOVERY = 10.0
#: No leak: threads and descriptors of the serving processes after the matrix, against before.
THREAD_SLACK = 4
FD_SLACK = 8
LEAK_WAIT = 20.0
#: File descriptors this process may need: its own ends of the attacks' connections.
FD_NEED = 6000
NORMAL_REQUEST = b"GET / HTTP/1.1\r\nHost: funcwsgi\r\nConnection: close\r\n\r\n"


def raise_fd_limit(need: int = FD_NEED) -> int:
    """Raise this process's descriptor limit (servers started from it inherit it); the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = need if hard == resource.RLIM_INFINITY else min(max(soft, need), hard)
    if wanted > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# -- the client side ---------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    host: str
    port: int


def normal_call(target: Target, budget: float = CALL_BUDGET) -> float | None:
    """Seconds until ``GET /`` on a new connection was answered ``200 hello``; None if not within ``budget``."""
    began = time.perf_counter()
    try:
        with socket.create_connection((target.host, target.port), timeout=budget) as sock:
            sock.sendall(NORMAL_REQUEST)
            answer = b""
            while True:
                left = budget - (time.perf_counter() - began)
                if left <= 0:
                    return None
                sock.settimeout(left)
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
                if answer.endswith(b"hello") and b"\r\n\r\n" in answer:
                    break
    except OSError:
        return None
    took = time.perf_counter() - began
    ok = answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"hello")
    return took if ok and took <= budget else None


def open_connections(target: Target, count: int, wait: float = 5.0) -> list[socket.socket]:
    """``count`` connections opened at once (non-blocking connects); those that connected within ``wait``."""
    pending: dict[socket.socket, None] = {}
    selector = selectors.DefaultSelector()
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex((target.host, target.port))
        pending[sock] = None
        selector.register(sock, selectors.EVENT_WRITE)
    connected = []
    deadline = time.monotonic() + wait
    while pending and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
            sock = key.fileobj  # type: ignore[assignment]
            selector.unregister(sock)
            del pending[sock]
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected.append(sock)
            else:
                sock.close()
    for sock in pending:  # still in the server's accept queue, or refused: kept, they are part of the flood
        connected.append(sock)
    selector.close()
    return connected


def send_all(sock: socket.socket, data: bytes, timeout: float = 5.0) -> bool:
    sock.settimeout(timeout)
    try:
        sock.sendall(data)
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(False)


def read_status(sock: socket.socket, timeout: float) -> int:
    """The status of the first answer on ``sock`` (0: closed without one, -1: nothing within ``timeout``)."""
    sock.settimeout(timeout)
    answer = b""
    try:
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    except TimeoutError:
        if not answer:
            return -1
    except OSError:
        pass
    return status_of(answer)


def reset_on_close(sock: socket.socket) -> None:
    """Make close() send a RST, as a client that crashes or a proxy giving up does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@dataclass
class Held:
    """What an attack holds: its connections, and threads that keep misbehaving until released."""

    sockets: list[socket.socket] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    #: Status of each attack connection's answer (for attacks the server must refuse).
    statuses: Counter[int] = field(default_factory=Counter)
    collect: Callable[[Held], None] | None = None
    notes: list[str] = field(default_factory=list)

    def every(self, period: float, action: Callable[[], None]) -> None:
        def loop() -> None:
            while not self.stop.wait(period):
                action()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        self.threads.append(thread)

    def trickle(self, period: float, data: bytes = b"x") -> None:
        """Send ``data`` on every held connection once per ``period``, as slow clients do."""

        def step() -> None:
            for sock in list(self.sockets):
                try:
                    sock.send(data, socket.MSG_DONTWAIT)
                except OSError:
                    pass

        self.every(period, step)

    def release(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=10)
        for sock in self.sockets:
            try:
                sock.close()
            except OSError:
                pass
        self.sockets.clear()


@dataclass(frozen=True)
class Attack:
    name: str
    what: str
    start: Callable[[Target], Held]
    #: The status the server must refuse the attack's requests with, when it must refuse them.
    refused_with: int | None = None
    #: Seconds the server gets to take in what the attack sent before the normal calls start.
    settle: float = SETTLE


def head(path: str = "/", method: str = "GET", extra: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: funcwsgi\r\n{extra}\r\n".encode()


def slowloris(target: Target) -> Held:
    held = Held(open_connections(target, 300))
    for sock in held.sockets:
        send_all(sock, b"GET / HTTP/1.1\r\nHost: funcwsgi\r\nX-Slow: ")
    held.trickle(1.0)
    return held


def stalled_bodies(target: Target) -> Held:
    held = Held(open_connections(target, 100))
    for sock in held.sockets:
        send_all(sock, head("/echo", "POST", "Content-Length: 1000000\r\n") + b"ab")
    return held


def trickling_bodies(target: Target) -> Held:
    held = Held(open_connections(target, 100))
    for sock in held.sockets:
        send_all(sock, head("/echo", "POST", "Content-Length: 100000\r\n"))
    held.trickle(0.5)
    return held


#: Seconds without a new first answer after which idle-keep-alive's opening calls count as answered all they will.
FIRST_ANSWERS_QUIET = 2.0


def read_together(sockets: list[socket.socket], done: Callable[[bytes], bool], *, quiet: float, seconds: float, size: int) -> dict[socket.socket, bytes]:
    """What each socket sent, all read at once: each until ``done`` with what it sent so far, or closed; all
    until every socket is done, or none sent anything for ``quiet`` seconds, or ``seconds`` have passed."""
    received = dict.fromkeys(sockets, b"")
    selector = selectors.DefaultSelector()
    for sock in sockets:
        selector.register(sock, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    while selector.get_map() and (left := deadline - time.monotonic()) > 0:
        ready = selector.select(timeout=min(quiet, left))
        if not ready:
            break
        for key, _ in ready:
            sock = key.fileobj  # type: ignore[assignment]
            try:
                chunk = sock.recv(size)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            received[sock] += chunk
            if not chunk or done(received[sock]):
                selector.unregister(sock)
    selector.close()
    return received


def idle_keep_alive(target: Target) -> Held:
    """1,000 connections that each made one call and then stay open, idle."""
    held = Held(open_connections(target, 1000))
    request = b"GET / HTTP/1.1\r\nHost: funcwsgi\r\n\r\n"
    for sock in held.sockets:
        send_all(sock, request)
    # The first answers, read all at once: until every connection has one, or none came for
    # FIRST_ANSWERS_QUIET (waitress leaves a few connections unanswered), or 10 s passed.
    heads = read_together(held.sockets, lambda head: b"\r\n" in head, quiet=FIRST_ANSWERS_QUIET, seconds=10.0, size=4096)
    answered = sum(b"\r\n" in head and status_of(head) == 200 for head in heads.values())
    held.notes.append(f"{answered} of {len(held.sockets)} connections got their first answer")
    return held


def connection_flood(target: Target) -> Held:
    """2,000 connections opened at once that never send a byte, and a churn of connect-and-close."""
    held = Held(open_connections(target, 2000, wait=2.0))

    def churn() -> None:
        for _ in range(50):
            try:
                socket.create_connection((target.host, target.port), timeout=0.2).close()
            except OSError:
                pass

    held.every(0.01, churn)
    return held


def refused(count: int, request: bytes) -> Callable[[Target], Held]:
    """``count`` connections each sending ``request`` at once; each answer's status is collected."""

    def start(target: Target) -> Held:
        held = Held(open_connections(target, count))

        def send(sock: socket.socket) -> None:
            send_all(sock, request, timeout=10.0)

        senders = [threading.Thread(target=send, args=(sock,), daemon=True) for sock in held.sockets]
        for thread in senders:
            thread.start()
        held.threads.extend(senders)

        def collect(held: Held) -> None:
            deadline = time.monotonic() + 5.0
            for sock in held.sockets:
                held.statuses[read_status(sock, max(0.01, deadline - time.monotonic()))] += 1

        held.collect = collect
        return held

    return start


#: Seconds without a byte after which a pipelining connection counts as having stopped answering.
PIPELINE_QUIET = 3.0


def pipelining_flood(target: Target) -> Held:
    """4 connections each sending 250 requests in one go, read only after the normal calls."""
    held = Held(open_connections(target, 4))
    burst = b"GET / HTTP/1.1\r\nHost: funcwsgi\r\n\r\n" * 250
    for sock in held.sockets:
        threading.Thread(target=send_all, args=(sock, burst, 30.0), daemon=True).start()

    def collect(held: Held) -> None:
        # All four read at once, until each has its 250 answers, or closed, or every one of them has been
        # silent for PIPELINE_QUIET (werkzeug drops what follows a request): the 15 s deadline is the backstop.
        for sock in held.sockets:
            sock.setblocking(False)
        received = read_together(held.sockets, lambda answers: answers.count(b"HTTP/1.1 200") >= 250, quiet=PIPELINE_QUIET, seconds=15.0, size=1 << 20)
        for answers in received.values():
            held.statuses[200 if answers.count(b"HTTP/1.1 200") == 250 else 0] += 1
        held.notes.append("each connection's 250 answers, in order" if held.statuses[0] == 0 else f"{held.statuses[0]} connection(s) lost answers")

    held.collect = collect
    return held


def early_close(target: Target) -> Held:
    """Calls whose client closes (half with a reset) before the answer, 200 at once and more all along."""
    held = Held()

    def burst(count: int) -> None:
        for index, sock in enumerate(open_connections(target, count)):
            send_all(sock, head("/sleep?s=0.2"))
            if index % 2:
                reset_on_close(sock)
            sock.close()

    burst(200)
    held.every(0.1, lambda: burst(20))
    return held


def expect_continue_never_sent(target: Target) -> Held:
    held = Held(open_connections(target, 100))
    for sock in held.sockets:
        send_all(sock, head("/echo", "POST", "Content-Length: 1000\r\nExpect: 100-continue\r\n"))
    return held


def invalid_chunked(target: Target) -> Held:
    """50 connections with chunk sizes that are not hex (must be refused) and 50 with a chunk that never comes."""
    sockets = open_connections(target, 100)
    chunked = head("/echo", "POST", "Transfer-Encoding: chunked\r\n")
    invalid, stalled = sockets[:50], sockets[50:]
    for sock in invalid:
        threading.Thread(target=send_all, args=(sock, chunked + b"zz\r\nhello\r\n0\r\n\r\n"), daemon=True).start()
    for sock in stalled:
        send_all(sock, chunked + b"ffff\r\nab")
    held = Held(sockets)

    def collect(held: Held) -> None:
        deadline = time.monotonic() + 5.0
        for sock in invalid:
            held.statuses[read_status(sock, max(0.01, deadline - time.monotonic()))] += 1

    held.collect = collect
    return held


def slow_readers(target: Target) -> Held:
    """100 clients asking for 4 MiB each (more than the kernel's socket buffers take) and reading 1 KiB a second."""
    sockets = []
    for _ in range(100):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(5.0)
        try:
            sock.connect((target.host, target.port))
        except OSError:
            sock.close()
            continue
        sockets.append(sock)
    held = Held(sockets)
    for sock in sockets:
        send_all(sock, head("/big?kb=4096"))

    def read_a_little() -> None:
        for sock in list(held.sockets):
            try:
                sock.recv(1024, socket.MSG_DONTWAIT)
            except OSError:
                pass

    held.every(1.0, read_a_little)
    return held


ATTACKS: tuple[Attack, ...] = (
    Attack("slowloris-heads", "300 connections each send half a request head, then one byte a second", slowloris),
    Attack("stalled-bodies", "100 POSTs announce 1 MB and send 2 bytes", stalled_bodies),
    Attack("trickling-bodies", "100 POSTs announce 100 kB and send one byte every 0.5 s", trickling_bodies),
    Attack("idle-keep-alive", "1,000 connections make one call each and stay open, idle", idle_keep_alive),
    Attack("connection-flood", "2,000 connections opened at once that never send, and 50 connect-and-close every 10 ms", connection_flood),
    Attack(
        "huge-head", "50 connections each send a 1 MB request header", refused(50, head(extra="X-Big: " + "a" * 1_000_000 + "\r\n")), 431
    ),
    Attack(
        "many-headers", "50 connections each send 300 request headers",
        refused(50, head(extra="".join(f"X-H{i}: {i}\r\n" for i in range(300)))), 431,
    ),
    Attack("long-url", "50 connections each send a 300 kB URL", refused(50, head("/" + "a" * 300_000)), 414),
    Attack("pipelining-flood", "4 connections each send 250 requests in one go and read only later", pipelining_flood),
    Attack("early-close", "200 calls, then 20 every 100 ms, whose clients close (half with a reset) before the answer", early_close),
    Attack("expect-100-never-sent", "100 POSTs with Expect: 100-continue whose body never comes", expect_continue_never_sent),
    Attack("invalid-chunked", "50 POSTs with chunk sizes that are not hex, 50 with a chunk that never comes", invalid_chunked, 400),
    # 400 MB of answers to write first: the normal calls start once the servers have made them.
    Attack("slow-readers", "100 clients ask for 4 MiB each and read 1 KiB a second", slow_readers, settle=2.0),
)
ATTACK_NAMES = tuple(attack.name for attack in ATTACKS)


# -- the server side -----------------------------------------------------------------


@dataclass
class Served:
    adapter: str
    server: Server
    target: Target

    def serving_pids(self) -> list[int]:
        pids = children(self.server.process.pid) if self.adapter in ("gunicorn", "granian") else [self.server.process.pid]
        return sorted(pids)

    def figures(self) -> dict[str, int]:
        """Threads and descriptors of the serving processes, added up."""
        total = {"threads": 0, "fds": 0}
        for pid in self.serving_pids():
            try:
                figures = process_figures(pid)
            except (OSError, KeyError):
                continue
            total["threads"] += figures["threads"]
            total["fds"] += figures["fds"]
        return total


@contextmanager
def serving(adapter: str, **settings: str) -> Iterator[Served]:
    """``funcwsgi serve`` of ``tests/functions/hostile`` on ``adapter`` with its defaults (plus ``settings``)."""
    raise_fd_limit()
    port = free_port()
    env = base_env(SERVER_ADAPTER=adapter, HANDLER_FOLDER=function_folder("hostile"), SERVER_HOST=HOST, SERVER_PORT=str(port))
    env.update(settings)
    server = Server(SERVE, env, port)
    try:
        server.wait_ready()
        yield Served(adapter, server, Target(HOST, port))
    finally:
        server.stop()


def warm_up(served: Served, concurrent: int = 120) -> None:
    """Calls enough at once for every server thread (and every call thread of the timeout layer, 2 x 50) to exist before the figures are taken."""
    threads = [threading.Thread(target=timed_get, args=(served.target, "/sleep?s=0.1", 10.0)) for _ in range(concurrent)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def get_closing(target: Target, path: str, timeout: float) -> bytes | None:
    """The whole answer to ``GET path`` on a new connection that asks to be closed; None when it failed or took longer than ``timeout``."""
    try:
        with socket.create_connection((target.host, target.port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: funcwsgi\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    except OSError:
        return None
    return answer


def timed_get(target: Target, path: str, timeout: float) -> tuple[int, float]:
    """(status, seconds) of ``GET path`` on a new connection; status 0 when it failed or took longer than ``timeout``."""
    status, took, _ = get_with_headers(target, path, timeout)
    return status, took


def run_attack(served: Served, attack: Attack, calls: int = NORMAL_CALLS, give_up_after_a_miss: bool = False) -> dict[str, Any]:
    """The attack's row; with ``give_up_after_a_miss`` its normal calls stop at the first one not answered in time."""
    began = time.monotonic()
    held = attack.start(served.target)
    try:
        time.sleep(attack.settle)
        latencies = []
        for _ in range(calls):
            latencies.append(normal_call(served.target))
            if latencies[-1] is None and give_up_after_a_miss:
                break
            time.sleep(0.1)
        if held.collect is not None:
            held.collect(held)
    finally:
        held.release()
    recovered = wait_answered(served.target, RECOVERY)
    answered = [seconds for seconds in latencies if seconds is not None]
    result: dict[str, Any] = {
        "attack": attack.name,
        "answered": len(answered) == len(latencies),
        "calls_answered": f"{len(answered)}/{len(latencies)}",
        "worst_ms": round(max(answered) * 1000, 1) if len(answered) == len(latencies) else None,
        "recovered": recovered,
        "seconds": round(time.monotonic() - began, 1),
        "notes": held.notes,
    }
    if attack.refused_with is not None:
        result["statuses"] = {str(status): count for status, count in sorted(held.statuses.items())}
        result["refused_as_expected"] = set(held.statuses) == {attack.refused_with}
    if attack.name == "pipelining-flood":
        result["refused_as_expected"] = None
        result["all_pipelined_answered"] = held.statuses.get(0, 0) == 0
    return result


def wait_answered(target: Target, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if normal_call(target) is not None:
            return True
        time.sleep(0.1)
    return False


def leak_check(served: Served, before: dict[str, int], wait: float = LEAK_WAIT) -> dict[str, Any]:
    """Wait up to ``wait`` seconds until threads and descriptors are back near ``before``; the figures and whether they got there."""
    deadline = time.monotonic() + wait
    while True:
        after = served.figures()
        back = after["threads"] <= before["threads"] + THREAD_SLACK and after["fds"] <= before["fds"] + FD_SLACK
        if back or time.monotonic() > deadline:
            return {"before": before, "after": after, "no_leak": back}
        time.sleep(0.5)


# -- overload: more concurrent calls than threads -----------------------------------------


def run_overload(served: Served, connections: int = 500, seconds: float = 4.0, path: str = "/sleep?s=0.2") -> dict[str, Any]:
    """``connections`` clients call ``path`` one call after another for ``seconds``; probes run meanwhile."""
    stop = threading.Event()
    results: list[tuple[int, float]] = []
    retry_after: Counter[str] = Counter()
    lock = threading.Lock()

    def client() -> None:
        while not stop.is_set():
            status, took, headers = get_with_headers(served.target, path, 30.0)
            with lock:
                results.append((status, took))
                if status == 503:
                    retry_after[headers.get("retry-after", "missing")] += 1
            if status == 503:  # a well-behaved client waits as told before it calls again
                stop.wait(float(headers.get("retry-after", "1")) if headers.get("retry-after", "").isdigit() else 1.0)

    rejected_before = metric_value(served.target, "function_rejected_total")
    clients = [threading.Thread(target=client, daemon=True) for _ in range(connections)]
    for thread in clients:
        thread.start()
    probes: dict[str, list[tuple[int, float]]] = {"/healthz": [], "/metrics": []}
    deadline = time.monotonic() + seconds
    time.sleep(min(1.0, seconds / 3))  # let the queue fill first
    while time.monotonic() < deadline:
        for probe, seen in probes.items():
            seen.append(timed_get(served.target, probe, 5.0))
        time.sleep(0.2)
    stop.set()
    for thread in clients:
        thread.join(timeout=35)
    statuses = Counter(status for status, _ in results)
    admitted = [took for status, took in results if status == 200]
    rejected = metric_value(served.target, "function_rejected_total")
    return {
        "connections": connections,
        "seconds": seconds,
        "path": path,
        "statuses": {str(status): count for status, count in sorted(statuses.items())},
        "admitted_p50_ms": round(percentile(admitted, 0.5) * 1000, 1),
        "admitted_p99_ms": round(percentile(admitted, 0.99) * 1000, 1),
        "admitted_max_ms": round(max(admitted, default=0.0) * 1000, 1),
        "retry_after": dict(retry_after),
        "probes": {
            probe: {
                "answered": all(status == 200 for status, _ in seen) and bool(seen),
                "worst_ms": round(max((took for _, took in seen), default=0.0) * 1000, 1),
            }
            for probe, seen in probes.items()
        },
        "rejected_metric_delta": None if rejected is None else int(rejected - (rejected_before or 0)),
    }


def get_with_headers(target: Target, path: str, timeout: float) -> tuple[int, float, dict[str, str]]:
    began = time.perf_counter()
    answer = get_closing(target, path, timeout)
    took = time.perf_counter() - began
    if answer is None:
        return 0, took, {}
    head_bytes, _, _ = answer.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    return status_of(answer), took, headers


def metric_value(target: Target, name: str) -> float | None:
    answer = get_closing(target, "/metrics", 5)
    found = answer and re.search(rb"^" + name.encode() + rb"(?:\{[^}]*\})? ([0-9.e+]+)$", answer, re.MULTILINE)
    return float(found.group(1)) if found else None


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


# -- the whole matrix ----------------------------------------------------------------------


def run_adapter(
    adapter: str,
    attacks: tuple[Attack, ...] = ATTACKS,
    calls: int = NORMAL_CALLS,
    overload_seconds: float = 4.0,
    log: Callable[[str], None] = print,
    leak_wait: float = LEAK_WAIT,
    give_up_after_a_miss: bool = False,
) -> dict[str, Any]:
    with serving(adapter) as served:
        warm_up(served)
        before = served.figures()
        rows = []
        for attack in attacks:
            row = run_attack(served, attack, calls, give_up_after_a_miss)
            log(f"{adapter:9} {attack.name:22} {'answered' if row['answered'] else 'NOT ANSWERED':13} {row['worst_ms'] or '-':>7} ms  {row.get('statuses', '')}")
            rows.append(row)
        leaks = leak_check(served, before, leak_wait)
        log(f"{adapter:9} leak check: {leaks}")
        result: dict[str, Any] = {"adapter": adapter, "attacks": rows, "leaks": leaks, "alive": served.server.process.poll() is None}
        if overload_seconds:
            result["overload"] = run_overload(served, seconds=overload_seconds)
            log(f"{adapter:9} overload: {result['overload']}")
    return result


def main(argv: list[str] | None = None) -> int:
    from funcwsgi.adapters import HTTP_ADAPTERS

    parser = argparse.ArgumentParser(prog="python -m tests.reliability.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--adapter", action="append", choices=HTTP_ADAPTERS, help="an adapter to run (repeatable; default: all)")
    parser.add_argument("--attack", action="append", choices=ATTACK_NAMES, help="an attack to run (repeatable; default: all)")
    parser.add_argument("--calls", type=int, default=NORMAL_CALLS, help="normal calls during each attack (%(default)s)")
    parser.add_argument("--overload-seconds", type=float, default=4.0, help="length of the overload run; 0 skips it (%(default)s)")
    parser.add_argument("--write", type=Path, help="write the results as JSON to this file")
    args = parser.parse_args(argv)
    attacks = tuple(attack for attack in ATTACKS if not args.attack or attack.name in args.attack)
    began = time.time()
    results = [run_adapter(adapter, attacks, args.calls, args.overload_seconds) for adapter in (args.adapter or HTTP_ADAPTERS)]
    document = {
        "command": "python -m tests.reliability.hostile " + " ".join(argv if argv is not None else sys.argv[1:]),
        "taken": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(began)),
        "machine": f"{os.cpu_count()} cores",
        "call_budget_s": CALL_BUDGET,
        "adapters": results,
    }
    if args.write:
        args.write.write_text(json.dumps(document, indent=1) + "\n")
        print(f"wrote {args.write}")
    failed = [
        f"{result['adapter']} {row['attack']}" for result in results for row in result["attacks"] if not row["answered"]
    ]
    print("every attack: normal calls answered" if not failed else "not answered: " + ", ".join(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
