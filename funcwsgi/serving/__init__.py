"""The one interface between the core and the servers that serve it.

A server (an adapter in :mod:`funcwsgi.adapters`, or the event-loop edge in
:mod:`funcwsgi.eventloop.asgi`) gives each call a :class:`ServerCall`, put in
the call's environ under :data:`SERVER_CALL_KEY`: how the call runs (on a
thread the server lends, or as a task on its event loop), a way to answer
the client at once while the function still runs, whether the client is
still connected, the peer's address, and a place for work after the answer.
The layers, the timeouts and the event-loop code read a call's server
through this module only, and never name a server. A server that gives no
:class:`ServerCall` is served too: the functions below answer for it
(:func:`client_connected` says yes, :func:`peer` reads ``REMOTE_ADDR``,
:func:`after_response` runs the work at once: a test client calling the
WSGI application has no "after").

What the core gives a server is :class:`Core` (the service, as a WSGI and
an ASGI application, with its configuration), the paths answered past every
bound (:func:`exempt_paths`), the refusals a server sends itself
(:data:`BUSY`, :data:`REQUEST_TIMEOUT`) and the counter of refused calls
(:func:`rejected_counter`). docs/architecture.md#the-server-interface
draws it, and says how to add a server.
"""

from __future__ import annotations

import enum
import importlib
import logging
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from ..adapters.specs import ADAPTERS
from ..middleware.reserved import PROBE_PATHS
from ..replies import BUSY as BUSY
from ..replies import REQUEST_TIMEOUT as REQUEST_TIMEOUT
from ..replies import RETRY_AFTER_SECONDS as RETRY_AFTER_SECONDS

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from ..config import Config
    from ..errors import StartupError

log = logging.getLogger("funcwsgi")

#: The environ key of the call's :class:`ServerCall`.
SERVER_CALL_KEY = "funcwsgi.server_call"


class Lent(enum.Enum):
    """What a server lends a call to run on."""

    #: One of the server's own threads: the call blocks it until the function returns.
    THREAD = "thread"
    #: A task on the server's event loop: the call must never block; the deadline cancels it.
    TASK = "task"


THREAD = Lent.THREAD
TASK = Lent.TASK


class ServerCall(Protocol):
    """What a server gives one call (in its environ under :data:`SERVER_CALL_KEY`)."""

    #: What the call runs on.
    lent: Lent
    #: Whether :meth:`answer_now` works for this call (HTTP/1.1 on a socket the server hands over: yes).
    answers_now: bool
    #: Whether the server refuses a malformed HTTP/2 request itself (RFC 9113 sections 8.1.1 and 8.2) and
    #: hands the call its body whole with its ``CONTENT_LENGTH``: the HTTP/2 layer then checks nothing twice.
    checks_http2: bool
    #: Whether the server keeps HTTP's rules for the answers it takes itself (no body for ``HEAD``, none and no content
    #: fields for 1xx, 204 and 304; :func:`funcwsgi.middleware.http_rules.answer_fields`). A server whose calls declare
    #: this, or ``checks_http2``, calls the stack without the layer that would do it again (:func:`funcwsgi.stack.served_stack`).
    keeps_http_rules: bool
    #: Whether the ``start_response`` the server gives the stack is this call's own, which keeps the answer's
    #: :attr:`status` and puts its :attr:`also` field at the end of every head it takes: layers read and set
    #: these instead of wrapping ``start_response`` for every call (the request id, the metrics).
    takes_answer: bool
    #: With ``takes_answer``: the status line of the last head the call took (None before one).
    status: str | None
    #: With ``takes_answer``: a field the call adds at the end of every head it takes (the request id's), or None.
    also: tuple[str, str] | None
    #: Whether the call runs in a context (:mod:`contextvars`) of its own that ends with it (a task of its own, which
    #: the call does not outlive): what a layer sets there for the call needs no reset.
    own_context: bool

    def answer_now(self, status: str, headers: Sequence[tuple[str, str]], body: bytes) -> None:
        """Answer the client with this response now and end the connection, while the function still runs.

        Called from another thread than the call's. What the call sends afterwards is
        discarded. Raises ``OSError`` when the client cannot be reached.
        """

    def client_connected(self) -> bool:
        """Whether the client is still connected (False once it closed or reset its connection)."""

    def peer(self) -> tuple[str, int] | None:
        """The client's address and port, as the server's socket sees them."""

    def after_response(self, work: Callable[[], object]) -> None:
        """Run ``work`` once the response is sent, off the client's time."""

    def thread_stuck(self, extra_threads: int) -> None:
        """The call was answered through :meth:`answer_now` and its thread is stuck in the function:
        the server keeps ``extra_threads`` threads beyond its own number (one per stuck call, bounded
        by the caller), and stops counting this call as in flight."""

    def thread_back(self, extra_threads: int) -> None:
        """The stuck thread of this call came back: ``extra_threads`` more threads are enough now."""


def server_call(environ: WSGIEnvironment) -> ServerCall | None:
    """The call's :class:`ServerCall`, or None when its server gives none."""
    call: ServerCall | None = environ.get(SERVER_CALL_KEY)
    return call


def runs_on_loop(environ: WSGIEnvironment) -> bool:
    """Whether the call runs as a task on an event loop (it must not block)."""
    call = environ.get(SERVER_CALL_KEY)
    return call is not None and call.lent is TASK


def client_connected(environ: WSGIEnvironment) -> bool:
    """Whether the call's client is still connected; True when its server cannot tell."""
    call = environ.get(SERVER_CALL_KEY)
    return True if call is None else call.client_connected()


def peer(environ: WSGIEnvironment) -> tuple[str, int] | None:
    """The client's address and port: the server's word, else ``REMOTE_ADDR``/``REMOTE_PORT``."""
    call = environ.get(SERVER_CALL_KEY)
    if call is not None:
        found: tuple[str, int] | None = call.peer()
        return found
    address = environ.get("REMOTE_ADDR")
    if not address:
        return None
    port = environ.get("REMOTE_PORT", "")
    return address, int(port) if str(port).isdigit() else 0


def after_response(environ: WSGIEnvironment, work: Callable[[], object]) -> None:
    """Run ``work`` once the call's response is sent, in the server's place for it; at once without a server."""
    call = environ.get(SERVER_CALL_KEY)
    if call is not None:
        call.after_response(work)
    else:
        run_after_response((work,))


def run_after_response(works: Iterable[Callable[[], object]]) -> None:
    """Run the work left for after a response; one that fails is logged and the others still run."""
    for work in works:
        try:
            work()
        except Exception:
            log.exception("Work after the response failed")


# -- what the core gives a server -------------------------------------------------


class Core(Protocol):
    """What the core gives a server: :class:`funcwsgi.application.FunctionService`."""

    #: The service's configuration (the ``SERVER_*`` settings a server applies).
    config: Config
    #: Whether the function is async: serve :attr:`asgi` on an event loop, not the WSGI side on threads.
    on_loop: bool
    #: The middleware stack itself (funcwsgi.stack), for a server that keeps HTTP's rules and enters it below its http layer.
    wsgi: WSGIApplication

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """The service as a WSGI application (PEP 3333)."""

    @property
    def asgi(self) -> Any:
        """The same service as an ASGI application."""


# A server's refusals are the runtime's, from funcwsgi/replies.py: BUSY past SERVER_MAX_INFLIGHT (and to
# a connection past SERVER_MAX_CONNECTIONS), REQUEST_TIMEOUT for a head or body that did not arrive in time,
# and the 400s, 414 and 431 of a server that reads the request itself.


class OwnCommandHook(Protocol):
    """What an adapter gives ``funcwsgi:app``'s lookup when its server runs by its own command.

    ``gunicorn funcwsgi:app`` reads none of our settings and runs none of our
    hooks: the app's lazy lookup asks :func:`loaded_by_its_own_command`, which
    finds the hook in the server's row of :mod:`funcwsgi.adapters.specs`.
    """

    def loading_alone(self) -> bool:
        """Whether the server is loading the app without our adapter's settings."""

    def build_app(self, config: Config) -> Core:
        """The app for a server run with its own options only."""

    def startup_failed(self, error: StartupError) -> NoReturn:
        """Report a start-up error as that server wants it (one line, the exit status it stops on)."""


def loaded_by_its_own_command() -> OwnCommandHook | None:
    """The hook of the server loading ``funcwsgi:app`` by its own command, if one is; else None."""
    for spec in ADAPTERS.values():
        if spec.own_command is not None and spec.own_command.running in sys.modules:
            hook: OwnCommandHook = importlib.import_module(spec.own_command.hook)
            if hook.loading_alone():
                return hook
    return None


def exempt_paths(config: Config) -> frozenset[str]:
    """The paths a server answers past its bound on calls in flight: the probes, and ``/metrics`` when served here."""
    if config.server_metrics and not config.server_metrics_port:
        return PROBE_PATHS | {config.server_metrics_path}
    return PROBE_PATHS


def rejected_counter(config: Config) -> Callable[[], None]:
    """Counts a call a server refused with :data:`BUSY` in ``function_rejected_total`` (a no-op without metrics)."""
    if not config.server_metrics:
        return _no_count
    from ..metrics.calls import call_metrics

    return call_metrics(config).reject


def _no_count() -> None:
    pass
