"""werkzeug's development server: threads, and with ``SERVER_RELOAD=true`` werkzeug's reloader.

For development only. With the reloader, any change to a file in the
function's folder restarts the serving process; a function that then fails to
load (or whose ``start()`` fails) is shown as a 500 page with the error, and
the next save recovers without a restart.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from werkzeug.serving import WSGIRequestHandler, is_running_from_reloader, make_server, run_simple

from funcwsgi.adapters import InFlight, warn_about_hostile_gaps
from funcwsgi.adapters._signals import StopRequest
from funcwsgi.application import FunctionService, build_service, default_app
from funcwsgi.compat import load_function, resolve
from funcwsgi.errors import StartupError, print_startup_error
from funcwsgi.handler.loader import find_sources
from funcwsgi.process import print_startup_lines, resume_collector, start_process, stop_process
from funcwsgi.replies import BUSY, Reply

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from funcwsgi.config import Config

RELOADER_INTERVAL = 0.5  # seconds between two looks at the files


class QuietRequestHandler(WSGIRequestHandler):
    """No request line per call: funcwsgi's own access log records calls; a PEP 3333 environ; every body closed."""

    #: The calls in flight, whose bodies the handler closes where werkzeug left one open (``serve`` sets it).
    in_flight: InFlight | None = None

    def make_environ(self) -> WSGIEnvironment:
        environ = super().make_environ()
        # werkzeug puts the peer's port in REMOTE_PORT as an int; PEP 3333 wants every CGI variable a str.
        # The one key it makes so is fixed, not every key scanned on every request
        # (tests/adapters/test_http_rules.py checks the whole environ on every adapter).
        port = environ.get("REMOTE_PORT")
        if type(port) is not str and port is not None:
            environ["REMOTE_PORT"] = str(port)
        return environ

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass

    def log_error(self, format: str, *args: Any) -> None:
        if format.startswith("Request timed out"):  # http.server's words for a head that did not come in time
            return  # closed quietly, as the other servers close a silent connection
        super().log_error(format, *args)

    def run_wsgi(self) -> None:
        try:
            super().run_wsgi()
        finally:
            # werkzeug closes the body only after reading what the client sent past its request: a client
            # that sends its next request and then resets the connection makes that read raise, and the
            # close is skipped. The stop after SIGTERM then waited out the whole graceful timeout.
            if self.in_flight is not None:
                self.in_flight.close_left_open()

    def parse_request(self) -> bool:
        # The head was read under the class's timeout (timed_handler); the call that follows is not timed,
        # as werkzeug's server times nothing else.
        parsed = super().parse_request()
        self.connection.settimeout(None)
        return parsed


def timed_handler(config: Config, in_flight: InFlight) -> type[QuietRequestHandler]:
    """The request handler, its head timed: a connection that sends nothing is closed after SERVER_HEADER_TIMEOUT.

    socketserver applies ``timeout`` to the connection's socket as it is set up, so it bounds
    each read of the request line and the header fields (a pause, not the head's total).
    """
    return type("TimedRequestHandler", (QuietRequestHandler,), {"timeout": config.server_header_timeout, "in_flight": in_flight})


def serve(config: Config) -> int:
    if config.server_reload:
        return serve_with_reloader(config)
    service = default_app(config)
    warn_about_hostile_gaps("werkzeug")
    start_process(service)
    tracked = InFlight(service)
    server = make_server(config.server_host, config.server_port, tracked, threaded=True, request_handler=timed_handler(config, tracked))
    # shutdown() waits for serve_forever() to return, so it cannot run in the signal handler,
    # which runs on the very thread that is inside serve_forever().
    stop = StopRequest(on_stop=lambda: threading.Thread(target=server.shutdown, name="funcwsgi-shutdown").start())
    stop.install(config.server_graceful_timeout)
    try:
        server.serve_forever()
        tracked.wait_idle(stop.left())
    finally:
        server.server_close()
        stop_process(service)
    return 0


def serve_with_reloader(config: Config) -> int:
    folder = os.path.abspath(find_sources(config).handler_folder)
    # The first process only watches files and restarts the second, which serves;
    # only the second loads the function.
    app: WSGIApplication = reloaded_app(config) if is_running_from_reloader() else _never_called
    tracked = InFlight(app)  # for its bodies left open; the reloader's restart waits for no call
    resume_collector()  # the watching process never starts serving
    run_simple(
        config.server_host,
        config.server_port,
        tracked,
        use_reloader=True,
        # "stat", not watchdog even when installed: watchdog watches every folder on
        # sys.path (site-packages included), which overflows inotify and loses events.
        reloader_type="stat",
        reloader_interval=RELOADER_INTERVAL,  # type: ignore[arg-type]  # werkzeug sleeps this long: a float works
        extra_files=list(_files_under(folder)),
        threaded=True,
        request_handler=timed_handler(config, tracked),
    )
    return 0


def reloaded_app(config: Config) -> WSGIApplication:
    """The function's app, or, if it cannot load or start, a page showing why."""
    try:
        config = resolve(config)
        service = print_startup_lines(config, lambda: _build(config))
        warn_about_hostile_gaps("werkzeug")
        start_process(service)
        return service
    except StartupError as error:
        return LoadErrorPage(error)


def _build(config: Config) -> FunctionService:
    return build_service(config, load_function(config))


class LoadErrorPage:
    """Development only: shows why the function could not load, until the next save reloads it."""

    def __init__(self, error: StartupError) -> None:
        text = f"funcwsgi could not load the function:\n\n{error}\n"
        if error.user_traceback:
            text += "\n" + error.user_traceback
        text += "\nSave a change in the function's folder to reload.\n"
        self.reply = Reply(500, text)
        print_startup_error(error)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        return self.reply(environ, start_response)


#: What the reloader's outer process would answer; it never serves, the reloaded child does.
_never_called = BUSY


def _files_under(folder: str) -> Iterable[str]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
        for name in files:
            yield os.path.join(root, name)
