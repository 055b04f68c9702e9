"""gunicorn's worker for async functions: gunicorn's process model, uvicorn's event loop in each worker.

:mod:`funcwsgi.adapters.gunicorn` picks it in ``on_starting`` once the loaded function
turns out to be async (and no other worker class was asked for); imported only
then, so a sync function's server never loads uvicorn.
"""

from __future__ import annotations

import signal
from typing import Any

from uvicorn_worker import UvicornWorker  # type: ignore[import-untyped]  # uvicorn-worker ships no type hints

from funcwsgi.adapters._event_loop_limits import limited_protocol
from funcwsgi.application import FunctionService


class EventLoopWorker(UvicornWorker):  # type: ignore[misc]  # uvicorn-worker is untyped: its class is Any
    """A gunicorn worker that serves the function's ASGI side on one event loop (uvicorn's).

    gunicorn keeps its process model (the arbiter, ``SERVER_WORKERS``, the
    hooks above, recycling); the worker runs uvicorn, which holds every
    connection on the loop. On SIGTERM uvicorn stops accepting and waits up to
    ``SERVER_GRACEFUL_TIMEOUT`` for the calls in flight.
    """

    CONFIG_KWARGS = {"loop": "auto", "http": "auto", "lifespan": "on", "access_log": False, "server_header": False}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.config.timeout_graceful_shutdown = self.cfg.graceful_timeout

    def init_signals(self) -> None:
        super().init_signals()
        # uvicorn re-raises the stop signal once it has drained; with the default action that
        # would kill the worker before gunicorn's worker_exit hook (the function's stop()) runs.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda signum, frame: None)

    def load_wsgi(self) -> None:
        super().load_wsgi()
        loaded: Any = getattr(self, "wsgi", None)
        service = loaded if isinstance(loaded, FunctionService) else getattr(loaded, "service", loaded)
        self.wsgi = service.asgi
        # The slow-client limits the thread worker keeps, kept on the loop too (funcwsgi/adapters/_event_loop_limits.py).
        self.config.http = limited_protocol(service.config)
