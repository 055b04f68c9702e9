"""Running one call, whatever protocol carried it: the edge's half that knows WSGI and the threads.

A connection protocol (HTTP/1.1 in :mod:`.http1`, HTTP/2 in :mod:`.http2`)
reads a request and hands the :class:`CallRunner` an :class:`Exchange`: the
request's head and body, and the way to send its answer. The runner decides
where the call runs and never sees a byte of framing:

- a plain function runs on a thread of :class:`~.threads.CallThreads`; the
  answer goes back to the loop with one ``call_soon_threadsafe`` when the
  body is a list (a streamed body, chunk by chunk, waiting while the client
  has more than :data:`OUTBOX_LIMIT` bytes to take);
- an ``async def`` function runs as a task on the loop, the stack in the
  task's greenlet (:mod:`.loop_calls`).

Each threaded call gets an :class:`EdgeCall`, its
:class:`~funcwsgi.serving.ServerCall`. Everything an exchange is asked is
asked on the loop's thread; the runner is the one place that hops threads.
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from itertools import starmap
from operator import add, itemgetter
from typing import IO, TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote_to_bytes

from funcwsgi.config import TOKEN
from funcwsgi.environ import CONFIG_KEY, HEADER_KEYS, header_key
from funcwsgi.middleware.http_rules import agreed_length, answer_fields, interim_answer
from funcwsgi.middleware.server_errors import failure_logged
from funcwsgi.replies import BODILESS_CODES, BUSY, STATUS_LINES
from funcwsgi.serving import SERVER_CALL_KEY, THREAD, Lent, exempt_paths, rejected_counter, run_after_response
from funcwsgi.serving.admission import admission_for
from funcwsgi.stack import served_stack

from .threads import CallThreads

if TYPE_CHECKING:
    from funcwsgi.serving import Core

log = logging.getLogger("funcwsgi")

#: Response bytes one call may leave for a slow client before its thread waits (waitress keeps 16 MiB).
OUTBOX_LIMIT = 16 * 1024 * 1024
#: Threads for /healthz, /health/* and /metrics, apart from the calls' threads.
PROBE_THREADS = 2
PROBE_METHODS = frozenset({"GET", "HEAD"})
#: The 503 past the bounds; the connection closes after it, as after every refusal.
CLOSING_BUSY = BUSY.with_headers(("Connection", "close"))

#: A byte looked for in bytes as its int: ``b"%" in path`` first tries the bytes as an int, and
#: formats and clears a TypeError, about 4,000 instructions each time (`python -m bench.edge_calls --count`).
PERCENT = ord("%")

#: The status lines the runtime makes itself (``"200 OK"``): well-formed, found at once (their hashes are cached).
STATUS_LINES_MADE = frozenset(STATUS_LINES.values())

#: Response fields :func:`check_head` found well-formed (pairs of str): answers repeat most of their fields, which need
#: no second look then. Bounded; started again when full.
CHECKED_FIELDS: set[tuple[str, str]] = set()
CHECKED_FIELDS_LIMIT = 1024
_all_checked = CHECKED_FIELDS.issuperset
#: A head's field names joined by ":" (:func:`check_head`), each a token (RFC 9110 section 5.1), checked in one match.
_token_names = re.compile(f"{TOKEN.pattern}(?::{TOKEN.pattern})*").fullmatch
_names = itemgetter(0)

#: Every call's SERVER_PROTOCOL by its HTTP version, made once.
PROTOCOLS = {"1.0": "HTTP/1.0", "1.1": "HTTP/1.1", "2": "HTTP/2"}
#: The keys :func:`make_environ` sets on every call; a base environ holds them too (see :func:`roomy`).
CALL_KEYS = ("REQUEST_METHOD", "PATH_INFO", "QUERY_STRING", "RAW_URI", "REQUEST_URI", "SERVER_PROTOCOL", "SERVER_NAME", "SERVER_PORT", "wsgi.input")
#: The address entries of a connection whose transport told no address (PEP 3333 requires a server's name and port).
NO_ADDRESS = {"SERVER_NAME": "localhost", "SERVER_PORT": "80"}
#: Entries a :func:`roomy` table is made for: 22 make a table of 64 slots, which a copy fills with 20 keys more
#: (the request's fields, the layers' keys) before it grows; more entries would leave less room, fewer a smaller table.
ROOMY_ENTRIES = 22

Headers = list[tuple[str, str]]
Answer = tuple[str, Headers, bytes]


class Exchange(Protocol):
    """One request and its answer, as a connection protocol hands it to the runner (on the loop)."""

    method: str
    target: bytes  # as sent: origin-form, or the path of an absolute-form target
    http_version: str  # "1.0", "1.1" or "2"
    headers: list[tuple[bytes, bytes]]  # names lower-cased, in the order sent
    peer: tuple[str, int] | None
    #: The environ's address entries of every call of the exchange's connection (:func:`address_fields`), never changed.
    address: dict[str, str]
    #: Set on the loop once the client closed or reset its connection (HTTP/2: its stream).
    client_gone: bool
    #: The client will get no body it declared (past the body limit): the call is answered and the connection ends.
    body_skipped: bool

    def body(self) -> IO[bytes]:
        """The request's body, whole (a call starts once it has arrived)."""

    def respond(self, status: str, headers: Headers, chunks: Iterable[bytes], end: bool) -> None:
        """Send the head (the first time) and ``chunks``; ``end``: the answer is complete."""

    def pending(self) -> int:
        """Answer bytes the client has not taken yet."""

    def on_drained(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (once) when :meth:`pending` is low again, or the exchange ended."""

    def abort(self, answer: Answer | None) -> None:
        """End the exchange now: ``answer`` first if no head went out yet."""

    def finished(self) -> None:
        """The call is over: the protocol may read or serve what comes next."""

    async def disconnected(self) -> None:
        """Return once :attr:`client_gone`."""


class CallStarter(Protocol):
    """Starts an exchange's call (on the loop): :class:`~.loop_calls.LoopCalls`."""

    def start(self, exchange: Exchange) -> None: ...


#: How a streamed answer's pieces are sent: (exchange, status, headers, chunk, end), from the call's thread or greenlet.
Sender = Callable[[Exchange, str, Headers, bytes, bool], None]


class ExchangeCall:
    """What every call the edge runs is given of its exchange (the client's presence, its address, work for after the
    answer), and how the stack's answer is taken, HTTP's rules kept as the http layer keeps them elsewhere (the edge's
    calls enter the stack below it): no body for ``HEAD``, none and no content fields for 1xx, 204 and 304.

    One object per call for both: ``start_response`` and ``write`` are its bound methods, not closures.
    A probe's call on a thread is taken by a plain one, which is no :class:`~funcwsgi.serving.ServerCall` of its environ.
    """

    __slots__ = ("exchange", "later", "send", "status", "headers", "bodiless", "streamed", "also")
    checks_http2 = True  # http2.py resets a malformed stream and starts a call once its body is whole
    keeps_http_rules = True  # start_response and call_wsgi below
    #: The stack's start_response is the call's own: the layers read its ``status`` and set its ``also`` field
    #: rather than wrap it for every call (a probe's plain one is in no environ: the layers wrap it as on any server).
    takes_answer = True
    own_context = False  # a thread's context is the thread's: its calls reset what they set
    #: Whether the call was answered through ``answer_now`` (:class:`EdgeCall`): what it sends later never reaches the wire.
    answered = False

    def __init__(self, exchange: Exchange, send: Sender) -> None:
        self.exchange = exchange
        self.later: list[Callable[[], object]] | None = None
        #: How the pieces of a streamed answer go out.
        self.send = send
        #: The answer's status line once the stack started it (its ``headers`` and ``bodiless`` are set with it).
        self.status: str | None = None
        self.bodiless = False
        self.streamed = False
        #: A field every head the call takes gets at its end (the request id's), or None.
        self.also: tuple[str, str] | None = None

    def client_connected(self) -> bool:
        return not self.exchange.client_gone

    def peer(self) -> tuple[str, int] | None:
        return self.exchange.peer

    def after_response(self, work: Callable[[], object]) -> None:
        if self.later is None:
            self.later = []
        self.later.append(work)

    def start_response(self, status: str, headers: Headers, exc_info: Any = None) -> Callable[[bytes], None]:
        if exc_info is not None:
            try:
                if self.streamed:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        status = check_head(status, headers, self.also)
        if self.also is not None:
            headers.append(self.also)  # to the list given, as a layer's start_response appends to it
        if status[:3] in BODILESS_CODES:  # the rules' own case (answer_fields): most answers need no call for them
            headers, self.bodiless = answer_fields(status, headers, True)
        else:
            self.bodiless = self.exchange.method == "HEAD"
        self.status = status
        self.headers: Headers = headers
        return self.write

    def write(self, chunk: bytes) -> None:
        if self.answered:
            raise OSError("the call was answered already")
        self.streamed = True
        self.send(self.exchange, self.status, self.headers, chunk, False)  # type: ignore[arg-type]  # started before any write


class EdgeCall(ExchangeCall):
    """What the edge gives a call on a thread (:class:`funcwsgi.serving.ServerCall`)."""

    __slots__ = ("runner", "stuck", "answered")
    lent: Lent = THREAD
    answers_now = True

    def __init__(self, exchange: Exchange, runner: CallRunner) -> None:
        super().__init__(exchange, runner.send_from_thread)
        self.runner = runner
        self.stuck = False
        self.answered = False

    def answer_now(self, status: str, headers: Sequence[tuple[str, str]], body: bytes) -> None:
        # The loop serialises this with the function's own answer: whichever reaches it first goes out.
        if self.exchange.client_gone:
            raise OSError("the client has gone")
        self.answered = True  # before the hop: the call's own answer, whenever it comes, is dropped
        self.runner.call_on_loop(self.exchange.abort, (status, list(headers), body))

    def thread_stuck(self, extra_threads: int) -> None:
        self.stuck = True
        self.runner.threads.keep_extra(extra_threads)
        self.runner.call_on_loop(self.runner.uncount, 1)

    def thread_back(self, extra_threads: int) -> None:
        self.stuck = False
        self.runner.threads.keep_extra(extra_threads)
        self.runner.call_on_loop(self.runner.uncount, -1)


class CallRunner:
    """Runs each exchange's call: plain functions on the threads, ``async def`` ones as tasks; admission first."""

    def __init__(self, service: Core, threads: int, loop: asyncio.AbstractEventLoop, send_timeout: float) -> None:
        config = service.config
        self.service = service
        #: What a call runs: the stack without its http and http2 layers, whose work the edge does itself (:class:`ExchangeCall`:
        #: HTTP's rules, and every HTTP/2 stream checked before its call starts, a probe's too), called inline
        #: (funcwsgi.stack.served_stack); the configuration the service's own __call__ puts in is in the base environ.
        self.call_stack = served_stack(service.wsgi, ExchangeCall)
        self.loop = loop
        self.call_on_loop = loop.call_soon_threadsafe
        self.send_timeout = send_timeout
        self.on_loop = service.on_loop
        self.threads = CallThreads(threads, "funcwsgi-call")
        self.probe_threads = CallThreads(PROBE_THREADS, "funcwsgi-probe")
        self.admission = admission_for(config, threads)
        self.max_inflight = config.max_inflight
        self.exempt = frozenset(path.encode() for path in exempt_paths(config))
        self.rejected = rejected_counter(config)
        self.inflight = 0  # calls admitted and not answered, stuck ones excepted
        self.calls = 0  # calls started, for gunicorn's max_requests
        self.max_calls = sys.maxsize  # then the worker stops accepting (on_exit) and is recycled
        self.exit_status: int | None = None  # set when a function called sys.exit()
        #: Stops the worker accepting (a function called sys.exit(), or max_calls were started).
        self.on_exit: Callable[[], None] = lambda: None
        self.base_environ: dict[str, Any] = roomy({
            "SCRIPT_NAME": "",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.input_terminated": True,
            CONFIG_KEY: config,
            **dict.fromkeys(CALL_KEYS, ""),
        })
        #: What the protocols call once an exchange's request is complete: :meth:`start_on_threads`, or the loop's
        #: starter itself once :attr:`loop_calls` is set (no frame of the runner's in between: every call passes here;
        #: each starter counts its calls in :attr:`calls`).
        self.start: Callable[[Exchange], None] = self.start_on_threads
        self._loop_calls: CallStarter | None = None

    @property
    def loop_calls(self) -> CallStarter | None:
        """Runs async def functions' calls on the loop (.loop_calls, set by the edge); None: plain functions, on the threads."""
        return self._loop_calls

    @loop_calls.setter
    def loop_calls(self, starter: CallStarter | None) -> None:
        self._loop_calls = starter
        self.start = self.start_on_threads if starter is None else starter.start

    # -- on the loop -------------------------------------------------------------------

    def start_on_threads(self, exchange: Exchange) -> None:
        """The exchange's request is complete: run its call on a thread (or refuse it past the bounds)."""
        self.calls += 1
        if self.calls == self.max_calls:
            self.on_exit()
        path = exchange.target.split(b"?", 1)[0]
        if path in self.exempt and exchange.method in PROBE_METHODS:
            self.probe_threads.submit(lambda: self.run_thread(exchange, False, 0.0))
            return
        busy = self.inflight
        if (self.max_inflight and busy >= self.max_inflight) or not self.admission.admit(busy):
            self.refuse(exchange)
            return
        self.inflight += 1
        arrived = time.monotonic()
        self.threads.submit(lambda: self.run_thread(exchange, True, arrived))

    def refuse(self, exchange: Exchange) -> None:
        self.rejected()
        self.answer_busy(exchange)

    def answer_busy(self, exchange: Exchange) -> None:
        """The 503 past the bounds (counted by the caller), and the exchange ends."""
        exchange.abort((BUSY.status, list(CLOSING_BUSY.headers), b"" if exchange.method == "HEAD" else BUSY.body))
        exchange.finished()

    def function_exited(self, code: object) -> None:
        """A function's sys.exit(): the worker stops as on SIGTERM (the other calls finish) and exits with the status asked for."""
        # Its caller's connection was closed; the master starts a new worker.
        self.exit_status = code if isinstance(code, int) else (0 if code is None else 1)
        log.warning("The function called sys.exit(%r): the worker stops", code)
        self.on_exit()

    def uncount(self, change: int) -> None:
        self.inflight -= change

    def answered(self, exchange: Exchange, call: EdgeCall | None, answer: tuple[str, Headers, Iterable[bytes]] | None) -> None:
        """On the loop, once per threaded call: its answer (None: it was aborted or streamed) and its end."""
        if call is not None and not call.stuck:  # a probe is not counted; a stuck call was uncounted already
            self.inflight -= 1
        if answer is not None:
            exchange.respond(answer[0], answer[1], answer[2], True)
        exchange.finished()

    # -- on a thread ---------------------------------------------------------------------

    def run_thread(self, exchange: Exchange, admitted: bool, arrived: float) -> None:
        """A plain function's call, on one of the threads; ends with one hand-off to the loop."""
        call = EdgeCall(exchange, self) if admitted else None  # a probe's is no ServerCall
        if exchange.client_gone:  # it gave up while the call waited for a thread: nobody to answer
            self.call_on_loop(self.answered, exchange, call, None)
            return
        started = time.monotonic()
        if admitted and not self.admission.start(started - arrived):
            # It waited past SERVER_QUEUE_TARGET after all: its caller gets the 503 now.
            self.rejected()
            self.call_on_loop(self.answered, exchange, call, (BUSY.status, list(CLOSING_BUSY.headers), [BUSY.body]))
            return
        environ = self.environ(exchange)
        if call is not None:
            environ[SERVER_CALL_KEY] = call
        answer: tuple[str, Headers, Iterable[bytes]] | None = None
        try:
            taken = ExchangeCall(exchange, self.send_from_thread) if call is None else call
            body = self.call_wsgi(taken, environ)
            if body is not None and not taken.answered:  # else the watchdog's 408 went out in its place
                answer = (taken.status, taken.headers, body)  # type: ignore[assignment]  # started: status is set
        except OSError:
            self.call_on_loop(exchange.abort, None)  # the client left, or stopped reading, mid-answer
        except SystemExit as ended:
            self.call_on_loop(exchange.abort, None)
            self.call_on_loop(self.function_exited, ended.code)
        except BaseException as error:
            if not failure_logged(environ, error):  # else its body failed mid-answer: the errors layer logged it
                log.exception("The call failed outside the function's stack")
            self.call_on_loop(exchange.abort, None)
        finally:
            if admitted:
                self.admission.finished(time.monotonic() - started)
            self.call_on_loop(self.answered, exchange, call, answer)
        if call is not None and call.later:
            run_after_response(call.later)

    def call_wsgi(self, answer: ExchangeCall, environ: dict[str, Any]) -> list[bytes] | None:
        """The stack's answer, taken by ``answer`` (the call): its body returned whole when it is a list (its status
        and fields are ``answer``'s), else streamed with ``answer.send`` (None)."""
        body = self.call_stack(environ, answer.start_response)
        if type(body) is list and not answer.streamed:  # nothing to close
            if answer.status is None:
                raise RuntimeError("the application did not call start_response")
            return [] if answer.bodiless else body
        self.stream(answer, body)
        return None

    def stream(self, answer: ExchangeCall, body: Iterable[bytes]) -> None:
        """A streamed answer's body, sent piece by piece with ``answer.send`` (its head with the first), then closed.

        The errors layer took its first chunk already (a failure before it is its ``500``); a failure after it is
        raised here, and the connection closes. A bodiless answer's body is not run, as the http layer runs none.
        """
        try:
            # Not started yet (a body that starts its answer as it runs), or started with a body: not HEAD, 1xx, 204, 304.
            if answer.status is None or not answer.bodiless:
                for chunk in body:
                    if answer.bodiless:
                        break  # a body that started its answer as it ran
                    if chunk:
                        answer.write(chunk)
            if answer.status is None:
                raise RuntimeError("the application did not call start_response")
            answer.send(answer.exchange, answer.status, answer.headers, b"", True)
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()

    def send_from_thread(self, exchange: Exchange, status: str, headers: Headers, chunk: bytes, end: bool) -> None:
        """One piece of a streamed answer; waits (``SERVER_SEND_TIMEOUT`` at most) while the client is behind."""
        if end:
            self.call_on_loop(exchange.respond, status, headers, (chunk,), True)
            return
        drained = threading.Event()
        self.call_on_loop(self.respond_and_watch, exchange, status, headers, chunk, drained)
        if not drained.wait(self.send_timeout):
            self.call_on_loop(exchange.abort, None)
            raise OSError("the client took nothing of the answer for SERVER_SEND_TIMEOUT")
        if exchange.client_gone:
            raise OSError("the client has gone")

    def respond_and_watch(self, exchange: Exchange, status: str, headers: Headers, chunk: bytes, drained: threading.Event) -> None:
        exchange.respond(status, headers, (chunk,), False)
        if exchange.pending() > OUTBOX_LIMIT:
            exchange.on_drained(drained.set)
        else:
            drained.set()

    def environ(self, exchange: Exchange) -> dict[str, Any]:
        """The call's WSGI environ (PEP 3333), built on its thread."""
        return make_environ(self.base_environ, exchange)

    def shutdown(self) -> None:
        self.threads.shutdown()
        self.probe_threads.shutdown()


def roomy(base: dict[str, Any]) -> dict[str, Any]:
    """``base`` in a table its copies, every call's environ, fill without growing.

    ``dict.copy()`` clones the table of the dict it copies, and a table grows (a new one, every key
    moved) when two thirds of it are in use: a call's environ, copied from a base of about 20 keys,
    grew twice (about 1,600 instructions a call, ``python -m bench.edge_calls --count``). Keys added and
    deleted again leave the table at the size they needed; a copy clones it as long as no more than a
    third of its entries are deleted ones, so the base holds :data:`CALL_KEYS` (real keys, their values
    replaced on every call) rather than more fillers. Only the speed depends on this, never what a copy holds.
    """
    table = dict(base)
    fillers = range(max(0, ROOMY_ENTRIES - len(table)))
    for filler in fillers:
        table[str(filler)] = None
    for filler in fillers:
        del table[str(filler)]
    return table


def make_environ(base: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """A call's WSGI environ (PEP 3333): ``base`` (what every call of the worker shares) and the exchange's request."""
    environ = base.copy()  # a copy clones the base's table; a dict display ({**base, ...}) costs more (inserts, resizes)
    target = exchange.target
    path, mark, query = target.partition(b"?")
    environ["REQUEST_METHOD"] = exchange.method
    environ["RAW_URI"] = environ["REQUEST_URI"] = uri = target.decode("latin-1")
    if PERCENT in path:
        environ["PATH_INFO"] = unquote_to_bytes(path).decode("latin-1")
    else:  # a target without a query is its path: decoded once
        environ["PATH_INFO"] = path.decode("latin-1") if mark else uri
    environ["QUERY_STRING"] = query.decode("latin-1") if query else ""
    version = exchange.http_version
    environ["SERVER_PROTOCOL"] = PROTOCOLS.get(version) or "HTTP/" + version
    environ.update(exchange.address)
    known = HEADER_KEYS.get
    for raw_name, raw_value in exchange.headers:
        key = known(raw_name) or header_key(raw_name)
        if key in environ:
            environ[key] += ("; " if key == "HTTP_COOKIE" else ",") + raw_value.decode("latin-1")
        else:
            environ[key] = raw_value.decode("latin-1")
    environ["wsgi.input"] = io.BytesIO() if exchange.body_skipped else exchange.body()
    return environ


def address_fields(server: tuple[str, int] | None, peer: tuple[str, int] | None) -> dict[str, str]:
    """The environ's address entries (PEP 3333) of a connection's calls: made once, when it opens, not for every call."""
    fields = {"SERVER_NAME": str(server[0]), "SERVER_PORT": str(server[1])} if server else dict(NO_ADDRESS)
    if peer is not None:
        fields["REMOTE_ADDR"], fields["REMOTE_PORT"] = peer[0], str(peer[1])
    return fields


def check_head(status: str, headers: Headers, also: tuple[str, str] | None = None) -> str:
    """What PEP 3333 and RFC 9110 require of a response head, checked on the call's thread: raised to the stack (its 500).

    The status too, as the loop writes it: three digits, 200 or more (a ``1xx`` is interim, RFC 9110
    section 15.2), then a space and a reason or nothing; the status line is returned as it goes out
    (``"204"`` as ``"204 "``: RFC 9112 section 4 keeps the space before an empty reason). A status the
    loop could not write would cost the connection instead of answering 500. Each field's name is a
    token (RFC 9110 section 5.1), a ``Content-Length`` is ``1*DIGIT`` and several agree (section 8.6).
    The head's text is checked at once, in C (its fields joined), rather than field by field. Every answer
    passes here, and most repeat a status the runtime makes and fields seen before (the text type, the
    same lengths): those pass after a set's lookup each (:data:`CHECKED_FIELDS`; a full check cost
    about 6,000 instructions). ``also``: one more field, new on every call (the request id's), checked alone.
    """
    if also is not None:
        text = also[0] + also[1]
        if not text.isascii() or "\r" in text or "\n" in text or "\0" in text:
            check_fields(text, [also])  # raises for what is wrong with it
    try:
        if status in STATUS_LINES_MADE and _all_checked(headers):
            return status
    except TypeError:  # a field that is no tuple (a list, say): checked below
        pass
    try:  # each field a (name, value) pair of str, as the loop unpacks them, joined in C
        text = status + "".join(starmap(add, headers))
    except TypeError:
        raise ValueError("a response field is not a (name, value) pair of str (PEP 3333)") from None
    if status not in STATUS_LINES_MADE:
        code = status[:3]
        if not (code.isdecimal() and code.isascii() and status[3:4] in ("", " ")):
            raise ValueError(f"the response status {status[:40]!r} is not three digits and a reason phrase (PEP 3333)")
        if code < "200":
            raise interim_answer(status)
        if len(status) == 3:
            status += " "  # "HTTP/1.1 204 \r\n": the space stays when the reason is empty (RFC 9112 section 4)
    check_fields(text, headers)
    check_names(headers)
    if len(CHECKED_FIELDS) + len(headers) > CHECKED_FIELDS_LIMIT:
        CHECKED_FIELDS.clear()
    try:
        CHECKED_FIELDS.update(field for field in headers if type(field) is tuple)  # pairs of str, as checked
    except TypeError:  # not kept: an unhashable part
        pass
    return status


def check_names(headers: Headers) -> None:
    """Each field's name a token (RFC 9110 section 5.1); each ``Content-Length`` ``1*DIGIT``, all of one value (section 8.6)."""
    names = ":".join(map(_names, headers))
    if headers and _token_names(names) is None:
        broken = next(name for name, _ in headers if _token_names(name) is None)
        raise ValueError(f"the response field name {broken[:40]!r} is not a token (RFC 9110 section 5.1)")
    if "content-length" in names.lower():
        length = None
        for name, value in headers:
            if name.lower() == "content-length":
                length = agreed_length(value, length)


def check_fields(text: str, headers: Headers) -> None:
    """``text``, a status or fields joined: latin-1, no line break or NUL (``headers``: the fields, to name the one at fault)."""
    if not text.isascii():
        try:
            text.encode("latin-1")
        except UnicodeEncodeError:
            raise ValueError("a response status or field is not latin-1 (PEP 3333)") from None
    if "\r" in text or "\n" in text or "\0" in text:
        broken = next((name for name, value in headers if any(bad in name + value for bad in "\r\n\0")), None)
        raise ValueError("the response status holds a line break or NUL" if broken is None else f"the response field {broken!r} holds a line break or NUL")
