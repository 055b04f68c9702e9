"""gunicorn settings read from the runtime's configuration object.

The repository's ``gunicorn.conf.py`` star-imports this module, so
``gunicorn funcwsgi:app`` run next to it serves exactly like the gunicorn
adapter. The environment is parsed once, here, into :data:`runtime_config`.
"""

from __future__ import annotations

from typing import Any

from funcwsgi.config import Config
from funcwsgi.errors import StartupError, report_and_exit

__all__ = ["bind", "worker_class", "workers", "threads", "graceful_timeout", "max_requests", "on_starting", "post_fork", "child_exit"]

# Not named `config`: gunicorn reads that name as its own --config setting.
try:
    runtime_config = Config.from_env()
except StartupError as error:  # gunicorn would print a traceback wall; one line instead
    report_and_exit(error)


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


bind = [_bind(runtime_config.server_host, runtime_config.server_port)]
worker_class = "gthread"
workers = runtime_config.server_workers
threads = runtime_config.server_numthreads
graceful_timeout = max(1, round(runtime_config.server_graceful_timeout))
max_requests = runtime_config.server_max_requests


def on_starting(server: Any) -> None:
    """Print the start-up lines and load the function once, in the master, before serving.

    Workers inherit the loaded function when they fork, so a function that
    cannot load stops the server here with one line and exit status 2,
    instead of failing in every worker.
    """
    from funcwsgi.application import default_app

    default_app()


def post_fork(server: Any, worker: Any) -> None:
    """Per-worker start-up (exporter threads, sockets) in the new worker, before it serves."""
    from funcwsgi.application import default_app
    from funcwsgi.workers import start_worker

    start_worker(default_app())


def child_exit(server: Any, worker: Any) -> None:
    """In the master, once a worker is gone: clean up what it left (metrics files)."""
    from funcwsgi.workers import worker_exited

    worker_exited(worker.pid)
