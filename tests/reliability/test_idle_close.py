"""Behind a proxy, no call is lost to an idle close (docs/deployment.md#idle-connections-behind-the-platforms-proxy).

A real nginx pools kept-alive connections to the function, as every platform's
proxy does. Were the runtime to close an idle pooled connection as nginx reuses
it, nginx's POST would meet the close and its caller a 502 (nginx, Envoy and
Go's transport retry no POST). The runtime's default ``SERVER_KEEPALIVE_TIMEOUT``
outlives each platform proxy's idle timeout (the table in docs/deployment.md),
so the proxy is always the side that closes.

Time is scaled to keep the test short: nginx's ``keepalive_timeout`` of
:data:`PROXY_SECONDS` stands for a proxy's idle timeout, and the runtime's
keep-alive timeout is the default in the same proportion to the tightest proxy of
the table. Bursts of concurrent POSTs are separated by idle gaps around both
timeouts. Another serving path (a new worker) is one more entry of :data:`PATHS`.
"""

from __future__ import annotations

import http.client
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from funcwsgi.config import Config

from ..support.paths import REPO, function_folder
from ..support.polling import wait_for
from ..support.ports import free_port
from ..support.processes import SERVE, Server, base_env, debian_tool
from .h2_client import RawH2

pytestmark = pytest.mark.slow("bursts of calls through nginx with the idle gaps of the scenario between them, then nginx's idle timeout waited out")

#: nginx's keep-alive timeout for its idle upstream connections, standing for a platform proxy's.
PROXY_SECONDS = 1.5
#: POSTs sent at once in each burst.
BURST = 32
#: The idle gaps between bursts, as fractions of the keep-alive timeout the runtime had before (30 s against
#: nginx's 60 s: half of the proxy's), where the issue lost calls, and of the proxy's own.
GAPS_OF_THE_OLD_TIMEOUT = (0.95, 1.0, 1.05)
GAPS_OF_THE_PROXY_TIMEOUT = (0.9, 1.1)
BODY = b"x" * 512
#: The head timeout the served paths get: a connection that sends nothing is closed this soon.
HEADER_SECONDS = 1.0
#: How late a server's sweep may find a deadline past (the workers and nodejs26 sweep every 0.25 s; waitress every second).
SWEEP_SLACK = 1.5
DEPLOYMENT_DOC = REPO / "docs" / "deployment.md"

#: The serving paths: (name, command, settings). The sync function on gunicorn takes the default worker.
PATHS = {
    "gunicorn": (SERVE, "handler", {"SERVER_ADAPTER": "gunicorn"}),
    "gunicorn-event-loop": (SERVE, "handler_async", {"SERVER_ADAPTER": "gunicorn"}),
    "granian": (SERVE, "handler", {"SERVER_ADAPTER": "granian"}),
    "waitress": (SERVE, "handler", {"SERVER_ADAPTER": "waitress"}),
    "werkzeug": (SERVE, "handler", {"SERVER_ADAPTER": "werkzeug"}),
    "nodejs26": ([str(REPO / "nodejs26" / "bin" / "serve")], "handler", {"SERVER_HTTP2": "true"}),
}
#: Paths that close their connection after every answer, saying so (Connection: close): nginx pools none of them.
#: granian, whose one timer for a head also times an idle connection, keeps none alive unless
#: SERVER_KEEPALIVE_TIMEOUT is set (docs/servers.md#the-other-adapters).
NOT_KEPT_ALIVE = {"werkzeug", "granian"}
#: Paths that serve h2c with these settings (Knative's queue-proxy speaks it to a port named h2c).
H2C = {"gunicorn", "gunicorn-event-loop", "nodejs26"}


def proxy_idle_timeouts() -> dict[str, float]:
    """docs/deployment.md's table: each platform proxy's idle timeout for its upstream connections, in seconds."""
    text = DEPLOYMENT_DOC.read_text()
    rows = re.findall(r"^\| (?P<proxy>[^|]+?) \| [^|]*? \| (?P<seconds>[\d,]+) s \|", text, re.MULTILINE)
    assert rows, "docs/deployment.md has no table of the proxies' idle timeouts"
    return {proxy: float(seconds.replace(",", "")) for proxy, seconds in rows}


def scaled_keepalive() -> float:
    """The default SERVER_KEEPALIVE_TIMEOUT, in the proportion it has to the tightest proxy, against nginx's PROXY_SECONDS."""
    tightest = max(proxy_idle_timeouts().values())
    return Config.from_env({}).server_keepalive_timeout * PROXY_SECONDS / tightest


def test_the_default_outlives_every_platform_proxys_idle_timeout() -> None:
    default = Config.from_env({}).server_keepalive_timeout
    shorter = {proxy: seconds for proxy, seconds in proxy_idle_timeouts().items() if seconds >= default}
    assert not shorter, f"SERVER_KEEPALIVE_TIMEOUT={default:g} s does not outlive {shorter}"


class Nginx:
    """nginx in front of 127.0.0.1:``upstream``, pooling up to 64 idle connections to it for ``keepalive`` seconds."""

    def __init__(self, folder: Path, upstream: int, keepalive: float) -> None:
        binary = debian_tool("nginx", "nginx-light")
        self.port = free_port()
        self.folder = folder
        temp = " ".join(f"{kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        config = folder / "nginx.conf"
        config.write_text(
            f"daemon off; worker_processes 1; pid {folder / 'nginx.pid'}; error_log {folder / 'error.log'} info;\n"
            "events { worker_connections 1024; }\n"
            f"http {{ access_log off; {temp}\n"
            f"  upstream function {{ server 127.0.0.1:{upstream}; keepalive 64; keepalive_timeout {int(keepalive * 1000)}ms; }}\n"
            f"  server {{ listen 127.0.0.1:{self.port}; location / {{\n"
            "    proxy_pass http://function; proxy_http_version 1.1; proxy_set_header Connection \"\"; }\n"
            "  }\n}\n"
        )
        self.process = subprocess.Popen([binary, "-c", str(config), "-p", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for(self.listening, 10, "nginx listening")

    def listening(self) -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def errors(self) -> str:
        path = self.folder / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def post(port: int) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/", body=BODY, headers={"Content-Type": "application/octet-stream"})
        response = connection.getresponse()
        body = response.read()
        return response.status if body == str(len(BODY)).encode() else -response.status
    finally:
        connection.close()


def bursts(port: int, gaps: list[float]) -> list[int]:
    """A burst of BURST POSTs at once, then each idle gap and another burst: every status (negative: a wrong body)."""
    statuses: list[int] = []
    with ThreadPoolExecutor(BURST) as pool:
        for gap in [0.0, *gaps]:
            # The idle gap is the scenario itself (nothing is awaited): the pooled connections sit idle.
            time.sleep(gap)
            statuses.extend(pool.map(post, [port] * BURST))
    return statuses


@pytest.fixture(scope="module", params=list(PATHS))
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, Server]]:
    """The function on one serving path, its keep-alive timeout the default scaled as nginx's is (module docstring)."""
    name = request.param
    command, module, settings = PATHS[name]
    port = free_port()
    # A path that keeps no connection alive by default is served at that default: unset.
    keepalive = {} if name in NOT_KEPT_ALIVE else {"SERVER_KEEPALIVE_TIMEOUT": f"{scaled_keepalive():g}"}
    env = base_env(
        HANDLER_FOLDER=function_folder("idle_close"), HANDLER_MODULE_NAME=module, SERVER_HOST="127.0.0.1", SERVER_PORT=str(port),
        SERVER_NUMTHREADS="8", SERVER_HEADER_TIMEOUT=f"{HEADER_SECONDS:g}", **keepalive, **settings,
    )
    with Server(command, env, port).started() as server:
        yield name, server


@pytest.fixture
def nginx(served: tuple[str, Server], tmp_path: Path) -> Iterator[Nginx]:
    proxy = Nginx(tmp_path, served[1].port, PROXY_SECONDS)
    try:
        yield proxy
    finally:
        proxy.stop()


#: TCP states as /proc/net/tcp shows them.
ESTABLISHED, TIME_WAIT = "01", "06"


def sockets_on(port: int, state: str) -> int:
    """This host's TCP sockets whose local port is ``port``, in ``state``.

    On loopback both ends are here: the side on the function's port is the runtime's. The side
    that closes first waits in TIME-WAIT, so TIME-WAIT sockets on that port are the runtime's closes.
    """
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                count += int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state
    return count


def test_the_proxy_closes_the_idle_pooled_connections_and_no_call_is_lost(served: tuple[str, Server], nginx: Nginx) -> None:
    name, server = served
    old_keepalive = PROXY_SECONDS / 2  # 30 s against nginx's 60 s, the default before
    gaps = [old_keepalive * f for f in GAPS_OF_THE_OLD_TIMEOUT] + [PROXY_SECONDS * f for f in GAPS_OF_THE_PROXY_TIMEOUT]
    closed_before = sockets_on(server.port, TIME_WAIT)  # closes by the tests before this one, on the same server
    statuses = bursts(nginx.port, gaps)
    lost = len([status for status in statuses if status != 200])
    assert lost == 0, f"{name}: {lost} of {len(statuses)} calls lost ({sorted(set(statuses))})\n{nginx.errors()[-2000:]}\n{server.describe()}"
    if name in NOT_KEPT_ALIVE:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/")
        assert connection.getresponse().getheader("Connection") == "close", f"{name} keeps connections alive: check who closes them"
        connection.close()
        return
    assert sockets_on(server.port, ESTABLISHED) > 0, f"{name}: nginx pools no connection to the function: the test shows nothing"
    # Then the pool idles until nginx lets its connections go: nginx, not the runtime, must have closed each.
    wait_for(lambda: sockets_on(server.port, ESTABLISHED) == 0, PROXY_SECONDS + SWEEP_SLACK + 2, f"{name}: nginx's idle connections closed")
    closed = sockets_on(server.port, TIME_WAIT) - closed_before
    assert closed == 0, f"{name}: the runtime closed {closed} pooled connections before nginx"


def test_a_connection_that_sends_nothing_is_still_closed_at_the_header_timeout(served: tuple[str, Server]) -> None:
    name, server = served
    with socket.create_connection(("127.0.0.1", server.port)) as silent:
        silent.settimeout(HEADER_SECONDS + SWEEP_SLACK + 2)
        began = time.monotonic()
        assert silent.recv(1) == b"", f"{name}: the silent connection got an answer"
        took = time.monotonic() - began
    assert took < HEADER_SECONDS + SWEEP_SLACK, f"{name}: a silent connection was closed after {took:.1f} s"


def test_an_idle_h2c_connection_is_ended_with_a_goaway_after_the_keepalive_timeout(served: tuple[str, Server]) -> None:
    name, server = served
    if name not in H2C:
        pytest.skip(f"{name} serves no h2c here")
    keepalive = scaled_keepalive()
    with RawH2("127.0.0.1", server.port, timeout=keepalive + SWEEP_SLACK + 2) as client:
        assert client.answer(client.get("/")).status == 200
        began = time.monotonic()
        client.pump(lambda: client.goaway is not None or client.closed)
        idle = time.monotonic() - began
    # A GOAWAY (NO_ERROR) tells the client that no stream was lost: it sends any it had begun again, elsewhere.
    assert client.goaway == 0, f"{name}: the idle connection ended without a GOAWAY (closed: {client.closed}) after {idle:.1f} s"
    assert keepalive - 0.1 <= idle < keepalive + SWEEP_SLACK, f"{name}: the idle connection was ended after {idle:.1f} s (keep-alive {keepalive:g} s)"
