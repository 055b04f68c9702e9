"""HTTP servers that serve a funcwsgi application, behind one interface.

Each adapter is a module here with one function, ``serve(config) -> int``:
it loads the function (printing the start-up lines once), runs
:func:`funcwsgi.process.start_process` in every process before it serves,
serves until SIGTERM or SIGINT, lets in-flight calls finish within
``SERVER_GRACEFUL_TIMEOUT``, runs :func:`funcwsgi.process.stop_process`
and returns the exit status. :func:`load_adapter` is the one place that
turns ``SERVER_ADAPTER`` into a module, by the table of
:mod:`funcwsgi.adapters.specs`; servers are imported only then, so a
missing optional server is a one-line error naming the extra to install.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from funcwsgi.bodies import ClosingBody
from funcwsgi.errors import StartupError

from .specs import ADAPTERS, HTTP_ADAPTERS, AdapterSpec

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from funcwsgi.config import Config


class Adapter(Protocol):
    def serve(self, config: Config) -> int: ...


def load_adapter(name: str) -> Adapter:
    """The adapter module for ``name`` (already validated by the configuration)."""
    spec = ADAPTERS[name]
    if importlib.util.find_spec(spec.server) is None:
        install = f"pip install 'funcwsgi[{spec.extra}]'" if spec.extra else f"pip install {spec.server}"
        raise StartupError(f"SERVER_ADAPTER={name!r} needs the {spec.server} server, which is not installed: {install}")
    module: Adapter = importlib.import_module(spec.module)
    return module


log = logging.getLogger("funcwsgi")


def warn_about_hostile_gaps(name: str) -> None:
    """At start-up: say which hostile clients stop this server answering everyone else, and what does not stop."""
    gaps = ADAPTERS[name].hostile_gaps
    if gaps:
        log.warning(
            "SERVER_ADAPTER=%s stops answering other callers, whatever its settings, while clients do this: %s; "
            "SERVER_ADAPTER=gunicorn keeps answering (docs/servers.md#slow-and-hostile-clients)",
            name,
            ", ".join(gaps),
        )


def host_port(host: str, port: int) -> str:
    """``host:port``, with IPv6 addresses in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class InFlight:
    """Counts calls until their response is closed, so a server without its own drain can wait for them.

    A server that runs each call on a thread of its own, and may fail to close a body it was given,
    calls :meth:`close_left_open` on that thread when the call is over.
    """

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app
        self.count = 0
        self.changed = threading.Condition()
        self.on_this_thread = threading.local()

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        with self.changed:
            self.count += 1
        try:
            body = self.app(environ, start_response)
        except BaseException:
            self.finished()
            raise
        closing = ClosingBody(body, self.finished)
        self.on_this_thread.body = closing
        return closing

    def finished(self) -> None:
        with self.changed:
            self.count -= 1
            if not self.count:
                self.changed.notify_all()

    def close_left_open(self) -> None:
        """Close the body of this thread's last call if its server did not, as PEP 3333 says it must.

        Closing takes the call off the count, where a body left open would hold a stop for the whole
        graceful timeout, and ends it for the layers that end a call on its close (the cancellation's
        watch; a streamed body's access record, metrics and span).
        """
        body: ClosingBody | None = getattr(self.on_this_thread, "body", None)
        self.on_this_thread.body = None
        if body is not None and not body.closed:
            body.close()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no call is in flight; False if some still were after ``timeout`` seconds."""
        with self.changed:
            return self.changed.wait_for(lambda: self.count <= 0, timeout)


__all__ = ["ADAPTERS", "HTTP_ADAPTERS", "Adapter", "AdapterSpec", "InFlight", "host_port", "load_adapter", "warn_about_hostile_gaps"]
