"""funcwsgi's gunicorn worker: gthread, with every request read on the event loop before a thread sees it.

gunicorn's ``gthread`` worker hands a connection to a thread as soon as it
is readable, and the thread then blocks until the whole head has arrived:
fifty clients that send half a head (the default fifty threads) stop the
service. This worker reads each request on the worker's event loop instead
(:mod:`funcwsgi.adapters._requests`), head and body, and gives it to a thread only
when it is complete, so slow and stalled clients cost a connection, never a
function thread. Around that:

- ``SERVER_HEADER_TIMEOUT`` bounds the time a whole head may take and
  ``SERVER_BODY_TIMEOUT`` a pause in the body: then ``408`` and close.
  An idle keep-alive connection is closed quietly after
  ``SERVER_KEEPALIVE_TIMEOUT``. Responses are written by the thread with
  ``SERVER_SEND_TIMEOUT`` on the socket.
- ``SERVER_MAX_CONNECTIONS`` bounds the open connections. At the bound the
  connection that has waited longest without a complete request (an idle
  keep-alive one, a slow head, a stalled body) is closed to make room, so a
  flood of connections that never send cannot lock out new callers; when
  every connection has a call, the worker stops accepting and the kernel's
  listen backlog holds the rest until one closes.
- Admission (:mod:`funcwsgi.serving.admission`): a call waits for a thread while its
  predicted wait stays under ``SERVER_QUEUE_TARGET``; otherwise the loop
  answers ``503`` with ``Retry-After`` at once, as it does past
  ``SERVER_MAX_INFLIGHT`` (a memory guard), counted in
  ``function_rejected_total``. A call that waited past the target anyway is
  answered the same ``503`` when it reaches a thread. The probes and
  ``/metrics`` run on a small pool of their own, so they answer under any load.
- Pipelined requests that arrived with a call are served one after the
  other without waiting for the socket to become readable again.
- A call whose client closed its connection while the call waited for a
  thread is dropped before the function runs.

Each call gets a :class:`~funcwsgi.adapters._socket_call.SocketCall`
(:mod:`funcwsgi.serving`): the timeout layer answers through it and asks for
a thread in place of each stuck one (:mod:`funcwsgi.timeouts.watchdog`).
The worker
leaves new connections to the next worker once it is being recycled, and
ends with the status a function passed to ``sys.exit()`` once the other
calls are done.
"""

from __future__ import annotations

import errno
import logging
import os
import selectors
import socket
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from functools import partial
from typing import IO, Any

from gunicorn import http
from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import TConn, ThreadWorker
from h2.settings import SettingCodes, Settings

from funcwsgi.adapters._gunicorn_config import SettingsReadOnce
from funcwsgi.adapters._lending_pool import LendingPool
from funcwsgi.adapters._outbox import SpillingSocket, send_some
from funcwsgi.adapters._requests import OVERLOADED, REQUEST_TIMEOUT, SWEEP_SECONDS, Limits, PendingRequest, Ready, Refusal
from funcwsgi.adapters._socket_call import SocketCall
from funcwsgi.adapters.gunicorn import WORKER_BOOT_ERROR
from funcwsgi.config import Config
from funcwsgi.serving import SERVER_CALL_KEY, exempt_paths, rejected_counter, run_after_response
from funcwsgi.serving.admission import admission_for

log = logging.getLogger("funcwsgi")

#: Threads for /healthz, /health/* and /metrics, apart from the calls' threads.
PROBE_THREADS = 2
ACCEPTS_PER_EVENT = 64
READ_SIZE = 65536
#: What an HTTP/2 connection opens with when the client knows the server speaks it (RFC 9113, 3.4).
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class Connection(TConn):  # type: ignore[misc]  # gunicorn is untyped: its classes are Any
    """A client connection and the request being read on it."""

    def __init__(self, cfg: Any, sock: socket.socket, client: Any, server: Any) -> None:
        super().__init__(cfg, sock, client, server)
        self.request: PendingRequest | None = None
        self.deadline = 0.0
        self.kept_alive = False  # waiting for the next request after one was answered
        self.admitted = False  # counted in the calls in flight
        self.leftover = b""
        self.buffered = True
        self.outbox: IO[bytes] | None = None  # response bytes the client has not taken yet
        self.keep_after_sending = False
        self.opening: bytes | None = None  # the first bytes, until they show whether the client speaks HTTP/2
        self.stuck = False  # its call timed out and its thread is still in the function
        self.arrived = 0.0  # when its request was complete: its wait for a thread runs from here


class FunctionWorker(ThreadWorker):  # type: ignore[misc]  # gunicorn is untyped: its classes are Any
    """gthread reading whole requests on its loop; see the module's documentation."""

    exit_status: int | None = None  # set when the function called sys.exit()
    wsgi: Any  # gunicorn's, wrapped in load_wsgi()
    alive: bool

    def __init__(self, age: int, ppid: int, sockets: Any, app: Any, timeout: float, cfg: Any, log: Any) -> None:
        super().__init__(age, ppid, sockets, app, timeout, SettingsReadOnce(cfg), log)

    def load_wsgi(self) -> None:
        if self.cfg.is_ssl:
            # The loop reads requests off the socket itself: it cannot read them through TLS.
            print("funcwsgi: error: gunicorn's certfile/keyfile are not supported: terminate TLS in front of the function", file=sys.stderr)
            sys.exit(WORKER_BOOT_ERROR)
        super().load_wsgi()
        service_config = getattr(self.wsgi, "config", None)
        config = service_config if isinstance(service_config, Config) else Config.from_env()
        self.runtime = config
        self.connection_limit = config.server_max_connections
        self.full = False  # every connection has a call: accepting waits until one closes (worker_connections)
        self.held: list[tuple[socket.socket, Any, Any]] = []  # accepted when it was full, unread until one closes
        self.max_inflight = config.max_inflight
        self.admission = admission_for(config, self.cfg.threads)
        self.limits = Limits(request_line=self.cfg.limit_request_line or 8190, body=config.server_max_body_size)
        self.probe_paths = frozenset(path.encode() for path in exempt_paths(config))
        # Read once: every read of a gunicorn setting fails a normal attribute lookup before its
        # Config.__getattr__ answers, and these were read for each request and each connection.
        self.h2_prior_knowledge = "h2" in self.cfg.http_protocols and self.cfg.http2_cleartext in ("prior-knowledge", "both")
        self.h2_upgrade = "h2" in self.cfg.http_protocols and self.cfg.http2_cleartext in ("upgrade", "both")
        self.waiting: OrderedDict[Connection, None] = OrderedDict()
        self.sending: dict[Connection, None] = {}
        self.inflight = 0
        self.stuck_calls = 0
        self.next_sweep = 0.0
        self.probe_pool = LendingPool(PROBE_THREADS, "funcwsgi-probe")
        self.rejected = rejected_counter(config)
        self.current = threading.local()  # the connection a thread serves
        self.wsgi = CallsOnThreads(self.wsgi, self)

    # -- threads lent to the calls -------------------------------------------------

    def get_thread_pool(self) -> LendingPool:
        """The calls' threads: gunicorn's documented place to make the pool; this one keeps a thread
        more for each call stuck past its deadline (:class:`LendingPool`)."""
        self.lending = LendingPool(self.cfg.threads, "funcwsgi-call")
        return self.lending

    def call_stuck(self, conn: Connection, extra_threads: int) -> None:
        """A call timed out and its thread is stuck (from the watchdog's thread): another thread takes its place."""
        self.lending.keep_extra(extra_threads)
        self.method_queue.defer(self._mark_stuck, conn, True)

    def call_back(self, conn: Connection, extra_threads: int) -> None:
        self.lending.keep_extra(extra_threads)
        self.method_queue.defer(self._mark_stuck, conn, False)

    def _mark_stuck(self, conn: Connection, stuck: bool) -> None:
        """On the loop: a stuck call counts neither in flight nor among the connections a stop waits for."""
        if conn.stuck == stuck:
            return
        conn.stuck = stuck
        change = -1 if stuck else 1
        self.stuck_calls -= change
        self.nr_conns += change

    # -- the event loop: accepting, reading, dispatching ----------------------------

    @property
    def worker_connections(self) -> int:
        """gthread accepts while ``nr_conns`` is under this: always, but when every connection has a call.

        At ``SERVER_MAX_CONNECTIONS`` :meth:`accept` first closes a connection waiting without a
        complete request; when there is none, the kernel's listen backlog holds the next ones.
        """
        return self.nr_conns if self.full else 1 << 62

    @worker_connections.setter
    def worker_connections(self, value: int) -> None:
        pass  # gthread's own bound is replaced by SERVER_MAX_CONNECTIONS, above

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        # gthread waits up to a second; the deadlines here are looked at every SWEEP_SECONDS.
        super().wait_for_and_dispatch_events(min(timeout, SWEEP_SECONDS))

    def accept(self, listener: socket.socket) -> None:
        # A worker on its way out (recycled after SERVER_MAX_REQUESTS calls) leaves new
        # connections in the listening socket's queue for the next worker (gunicorn issue 3038).
        server = listener.getsockname()
        for _ in range(ACCEPTS_PER_EVENT):
            if not self.alive:
                return
            try:
                sock, client = listener.accept()
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                    raise
                return
            if self.nr_conns >= self.connection_limit and not self._evict_one():
                # Every connection has a call: this one waits unread, and the kernel's listen backlog
                # holds the next ones (gthread stops accepting), until a connection closes.
                self.full = True
                self.held.append((sock, client, server))
                return
            self._let_in(sock, client, server)

    def _let_in(self, sock: socket.socket, client: Any, server: Any) -> None:
        self.nr_conns += 1
        conn = Connection(self.cfg, sock, client, server)
        if self.h2_prior_knowledge and negotiation.prior_knowledge_allowed(self.cfg, client):
            conn.opening = b""  # HTTP/2 or not: the first bytes tell
        self._wait_for_request(conn, PendingRequest(self.limits), time.monotonic() + self.runtime.server_header_timeout)

    def _wait_for_request(self, conn: Connection, request: PendingRequest, deadline: float) -> None:
        """Put ``conn`` on the loop until ``request`` is complete."""
        conn.request = request
        conn.deadline = deadline
        self.waiting[conn] = None
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_client_socket_readable, conn))

    def on_client_socket_readable(self, conn: Connection, client: socket.socket) -> None:
        if conn not in self.waiting:  # read only while the connection is the loop's
            return
        try:
            data = conn.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close_waiting(conn)
            return
        if conn.opening is not None:
            data = self._opening(conn, data)
            if not data:
                return
        self._advance(conn, data)

    def _opening(self, conn: Connection, data: bytes) -> bytes:
        """The first bytes of a connection that may speak HTTP/2: held until they tell; then, HTTP/1.1's bytes."""
        opening = conn.opening + data if conn.opening else data
        if PREFACE.startswith(opening):  # a part of the preface: wait for the rest
            conn.opening = opening
            return b""
        conn.opening = None
        if opening.startswith(PREFACE):
            self._serve_http2(conn, opening)
            return b""
        return opening

    def _serve_http2(self, conn: Connection, received: bytes) -> None:
        """An HTTP/2 connection: a thread serves it with gunicorn's own HTTP/2, one stream after another."""
        self._unwait(conn)
        if conn.request is not None:
            conn.request.close()
            conn.request = None
        if self.max_inflight and self.inflight - self.stuck_calls >= self.max_inflight:
            self.rejected()
            self._close(conn)  # HTTP/2 has no 503 before its first stream; the client retries elsewhere
            return
        self.inflight += 1
        conn.admitted = True
        conn.parser = announcing_its_limits(http.get_parser(self.cfg, conn.sock, conn.client, http2_connection=True))
        conn.is_http2 = True
        conn.initialized = True
        conn.leftover = received  # the preface and what came with it: the thread hands them over
        self._submit(self.tpool, conn)

    def _advance(self, conn: Connection, data: bytes) -> None:
        """Feed what arrived to the connection's request; dispatch, refuse or keep waiting."""
        request = conn.request
        assert request is not None
        outcome = request.feed(data)
        now = time.monotonic()
        if outcome is None:
            if conn.kept_alive and request.started:  # the next request began: its head has a deadline
                conn.kept_alive = False
                conn.deadline = now + self.runtime.server_header_timeout
            if request.head_complete:
                conn.deadline = now + self.runtime.server_body_timeout  # a pause in the body, from now
                if request.wants_continue():
                    request.continue_sent = True
                    self._send_quietly(conn.sock, b"HTTP/1.1 100 Continue\r\n\r\n")
            return
        if isinstance(outcome, Refusal):
            self._unwait(conn)
            self._refuse(conn, outcome)
            return
        self._dispatch(conn, outcome)

    def _dispatch(self, conn: Connection, ready: Ready) -> None:
        request = conn.request
        assert request is not None
        self._unwait(conn)
        if request.is_probe(self.probe_paths):
            pool = self.probe_pool
        else:
            busy = self.inflight - self.stuck_calls
            if (self.max_inflight and busy >= self.max_inflight) or not self.admission.admit(busy):
                request.close()
                self._refuse(conn, OVERLOADED)
                return
            self.inflight += 1
            conn.admitted = True
            conn.arrived = time.monotonic()
            pool = self.tpool
        conn.buffered = ready.buffered
        self._submit(pool, conn)

    def _submit(self, pool: LendingPool, conn: Connection) -> None:
        future = pool.submit(self.handle, conn)
        # As gthread's own enqueue_req: the end of a call is handled on the loop's thread.
        future.add_done_callback(lambda done: self.method_queue.defer(self.finish_request, conn, done))

    def _unwait(self, conn: Connection) -> None:
        del self.waiting[conn]
        self._unregister(conn)

    def _unregister(self, conn: Connection) -> None:
        # Not registered, or its socket closed already: nothing to take off the poller.
        try:
            self.poller.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass

    def _close_waiting(self, conn: Connection) -> None:
        self._unwait(conn)
        self._close(conn)

    def _close(self, conn: Connection) -> None:
        if conn.outbox is not None:
            conn.outbox.close()
            conn.outbox = None
        if conn.request is not None:
            conn.request.close()
            conn.request = None
        if not conn.stuck:  # a stuck call's connection was uncounted already
            self.nr_conns -= 1
        self.full = False
        conn.close()
        if self.held:
            self._let_in(*self.held.pop(0))

    def _refuse(self, conn: Connection, refusal: Refusal) -> None:
        if refusal is OVERLOADED:
            self.rejected()
        self._send_quietly(conn.sock, refusal.wire)
        self._close(conn)

    @staticmethod
    def _send_quietly(sock: socket.socket, data: bytes) -> None:
        try:
            sock.send(data, socket.MSG_DONTWAIT)
        except OSError:
            pass

    def _evict_one(self) -> bool:
        """Close the connection that has waited longest without a complete request.

        One with bytes the loop has not read yet is passed over: a loop behind a burst would
        otherwise take a caller whose request has arrived for a silent one and drop it unanswered.
        """
        for conn in self.waiting:
            if _unread(conn.sock):
                continue
            self._close_waiting(conn)
            return True
        return False

    def murder_keepalived(self, force: bool = False) -> None:
        """Runs on the loop every turn: connections past their deadline closed; all that wait, once stopping."""
        now = time.monotonic()
        if not self.alive:
            # Stopping: what waits for a request is closed (a request half-read is not served),
            # calls and responses on their way out are waited for.
            for conn in list(self.waiting):
                self._close_waiting(conn)
        if now < self.next_sweep and not force:
            return
        self.next_sweep = now + SWEEP_SECONDS
        for conn in [conn for conn in self.sending if force or conn.deadline <= now]:
            self._stop_sending(conn)  # a client that stopped reading
            self._close(conn)
        late = [conn for conn in self.waiting if conn.deadline <= now]
        for conn in late:
            started = conn.request is not None and conn.request.started
            self._unwait(conn)
            if started:
                self._refuse(conn, REQUEST_TIMEOUT)
            else:  # an idle connection: a 408 here could be read as the answer to the next request
                self._close(conn)

    # -- on a thread ---------------------------------------------------------------

    def handle(self, conn: Connection) -> bool:
        self.current.conn = conn
        try:
            if conn.is_http2:
                return self._handle_http2(conn)
            return self._handle_http1(conn)
        finally:
            self.current.conn = None

    def _handle_http2(self, conn: Connection) -> bool:
        """An HTTP/2 connection opened with the preface, served by gunicorn to its end."""
        conn.sock.setblocking(True)
        h2_conn = conn.parser
        received, conn.leftover = conn.leftover, b""
        try:
            h2_conn.initiate_connection()
            # The requests in what the loop read wait where gunicorn keeps those it read ahead.
            h2_conn.pending_requests.extend(h2_conn.receive_data(received))
        except Exception as error:  # a malformed opening: gunicorn has sent its GOAWAY
            log.debug("HTTP/2 connection refused at its opening: %s", error)
            return False
        served: bool = super().handle(conn)
        return served

    def _handle_http1(self, conn: Connection) -> bool:
        request = conn.request
        assert request is not None
        conn.request = None
        if _client_gone(conn.sock):  # it gave up while the call waited for a thread: nobody to answer
            request.close()
            return False
        started = time.monotonic()
        if conn.admitted and not self.admission.start(started - conn.arrived):
            # It waited past SERVER_QUEUE_TARGET after all (the calls ahead of it were slower than
            # predicted): its caller gets the 503 now rather than a call it may have given up on.
            request.close()
            self.rejected()
            self._send_quietly(conn.sock, OVERLOADED.wire)
            return False
        # Reads of a body that was not waited for, and every write, block at most this long.
        conn.sock.settimeout(self.runtime.server_send_timeout if conn.buffered else self.runtime.server_body_timeout)
        conn.initialized = True
        parser = http.RequestParser(self.cfg, conn.sock, conn.client)
        parser.unreader = request.unreader(conn.sock)
        conn.parser = parser
        sock = conn.sock
        # A response the client is slow to take is left to the loop; not an Upgrade: h2c, whose
        # HTTP/2 connection this thread then serves to its end.
        writer = SpillingSocket(sock)
        if not (self.h2_upgrade and b"h2c" in request.head_bytes().lower()):
            conn.sock = writer
        try:
            try:
                keepalive = bool(super().handle(conn))
            except SystemExit as ended:
                # Left to gthread, a function's sys.exit() would end only this pool thread and
                # leave its caller's connection open, unanswered, for good: the connection is
                # closed, the worker stops as on SIGTERM (the other calls finish) and exits with
                # the status asked for; the master starts a new one.
                code = ended.code
                self.exit_status = code if isinstance(code, int) else (0 if code is None else 1)
                log.warning("The function called sys.exit(%r): worker %s stops", code, os.getpid())
                self.alive = False
                keepalive = False
            if keepalive and conn.is_http2:  # upgraded (Upgrade: h2c), served, and done
                keepalive = False
            if keepalive:
                rest = _leftover(parser) if conn.buffered else None
                if rest is None or len(rest) != request.leftover_length:
                    # gunicorn's parser ended the request elsewhere than the loop did (or failed in its
                    # body): what follows cannot be told apart from the body, so nothing of it is served.
                    keepalive = False
                else:
                    conn.leftover = rest
        finally:
            if conn.admitted:
                self.admission.finished(time.monotonic() - started)
            conn.sock = sock
            conn.outbox = writer.take()
            parser.unreader.close()
            request.close()
        return keepalive

    def handle_request(self, req: Any, conn: Connection) -> bool:
        try:
            keepalive: bool = super().handle_request(req, conn)
        finally:
            self._after_call()
        return keepalive

    def handle_http2_request(self, req: Any, conn: Connection, h2_conn: Any) -> None:
        try:
            super().handle_http2_request(req, conn, h2_conn)
        finally:
            self._after_call()

    def _after_call(self) -> None:
        """The response is sent: the work the call left for after it."""
        call = getattr(self.current, "call", None)
        if call is not None:
            self.current.call = None
            if call.later:
                run_after_response(call.later)

    def finish_request(self, conn: Connection, future: Future[bool]) -> None:
        """On the loop, when a thread is done with a connection: back to the loop for the next request, or closed."""
        if conn.admitted:
            conn.admitted = False
            self.inflight -= 1
        if conn.stuck:  # its call came back after its 408: the connection is done
            self._mark_stuck(conn, False)
        keepalive = False
        if not future.cancelled():
            try:
                keepalive = future.result()
            except Exception:
                keepalive = False
        if conn.outbox is not None and conn.sock.fileno() >= 0:
            # The client has not taken the whole response yet: the loop sends the rest.
            conn.keep_after_sending = keepalive
            self._send_on_loop(conn)
            return
        self._after_response(conn, keepalive)

    def _after_response(self, conn: Connection, keepalive: bool) -> None:
        """The response is sent: wait for the next request, or close."""
        if not (keepalive and self.alive):
            self._close(conn)
            return
        try:
            conn.sock.setblocking(False)
            conn.kept_alive = True
            request = PendingRequest(self.limits)
            leftover, conn.leftover = conn.leftover, b""
            self._wait_for_request(conn, request, time.monotonic() + self.runtime.server_keepalive_timeout)
            if leftover:  # pipelined: the next request is already here
                self._advance(conn, leftover)
        except (OSError, ValueError):
            if conn in self.waiting:
                self._unwait(conn)
            self._close(conn)

    def _send_on_loop(self, conn: Connection) -> None:
        try:
            conn.sock.setblocking(False)
            conn.deadline = time.monotonic() + self.runtime.server_send_timeout
            self.sending[conn] = None
            self.poller.register(conn.sock, selectors.EVENT_WRITE, partial(self.on_client_socket_writable, conn))
        except (OSError, ValueError):
            self.sending.pop(conn, None)
            self._close(conn)

    def on_client_socket_writable(self, conn: Connection, client: socket.socket) -> None:
        if conn not in self.sending or conn.outbox is None:
            return
        try:
            done = send_some(conn.sock, conn.outbox)
        except OSError:
            self._stop_sending(conn)
            self._close(conn)
            return
        conn.deadline = time.monotonic() + self.runtime.server_send_timeout  # it reads: more time
        if done:
            self._stop_sending(conn)
            self._after_response(conn, conn.keep_after_sending)

    def _stop_sending(self, conn: Connection) -> None:
        del self.sending[conn]
        self._unregister(conn)
        if conn.outbox is not None:
            conn.outbox.close()
            conn.outbox = None

    def run(self) -> None:
        try:
            super().run()
        finally:
            self.probe_pool.shutdown(wait=False)
        if self.exit_status is not None:
            sys.exit(self.exit_status)


def announcing_its_limits(connection: Any) -> Any:
    """gunicorn's HTTP/2 connection, its limits in the first SETTINGS frame the client reads.

    gunicorn 27.0.1 queues its limits as an update of h2's settings, then has h2
    open the connection with a SETTINGS frame of h2's defaults (100 streams): the
    client reads that frame last and keeps h2's defaults. h2 opens with its
    ``local_settings``, so they start at gunicorn's values here, and both frames
    say the same.
    """
    limits = {
        SettingCodes.MAX_CONCURRENT_STREAMS: connection.max_concurrent_streams,
        SettingCodes.INITIAL_WINDOW_SIZE: connection.initial_window_size,
        SettingCodes.MAX_FRAME_SIZE: connection.max_frame_size,
        SettingCodes.MAX_HEADER_LIST_SIZE: connection.max_header_list_size or connection.h2_conn.DEFAULT_MAX_HEADER_LIST_SIZE,
    }
    connection.h2_conn.local_settings = Settings(client=False, initial_values=limits)
    return connection


def _unread(sock: socket.socket) -> bool:
    """Bytes have arrived on ``sock`` that nobody has read yet."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except OSError:
        return False


def _client_gone(sock: socket.socket) -> bool:
    """The client closed or reset its connection (the socket is still non-blocking here, as on the loop).

    A client that only shut its sending side would be taken for gone too; nginx
    counts such a client as gone as well (its 499).
    """
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def _leftover(parser: Any) -> bytes | None:
    """The bytes after the request just served (the next pipelined ones), or None when the connection cannot be reused.

    The body the function did not read is skipped first, from what the loop
    buffered; nothing is read from the socket here.
    """
    message = parser.mesg
    try:
        while message.body.read(READ_SIZE):
            pass
    except Exception:
        return None
    rest: bytes = parser.unreader.rest()
    return rest


class StreamCall(SocketCall):
    """A call on an HTTP/2 stream: its connection carries other streams, so it is never answered
    by writing to the socket; the timeout layer answers it through its response."""

    __slots__ = ()
    answers_now = False

    def answer_now(self, status: str, headers: Any, body: bytes) -> None:
        raise OSError("an HTTP/2 stream is answered through its response")


class CallsOnThreads:
    """The service, each call given its :class:`SocketCall` (what this server gives a call)."""

    def __init__(self, app: Any, worker: FunctionWorker) -> None:
        self.app = app
        self.worker = worker
        self.config = getattr(app, "config", None)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        worker = self.worker
        current = worker.current
        conn = current.conn
        if conn.is_http2:
            # gunicorn marks a stream with HTTP_VERSION, which reads as a request header the client never sent.
            environ.pop("HTTP_VERSION", None)
            environ["SERVER_PROTOCOL"] = "HTTP/2"  # gunicorn says HTTP/2.0; RFC 9113 names it HTTP/2, as granian does
            call: SocketCall = StreamCall(environ["gunicorn.socket"], conn.client, worker, conn)
        else:
            call = SocketCall(environ["gunicorn.socket"], conn.client, worker, conn)
        environ[SERVER_CALL_KEY] = current.call = call
        return self.app(environ, start_response)
