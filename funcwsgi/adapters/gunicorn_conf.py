"""gunicorn settings read from the runtime's configuration object, as a gunicorn configuration module.

Its public name is :mod:`funcwsgi.gunicorn_conf`, which re-exports it:
``gunicorn -c python:funcwsgi.gunicorn_conf funcwsgi:app``, or the
repository's ``gunicorn.conf.py`` that star-imports it, serves exactly like
the gunicorn adapter (``SERVER_ADAPTER=gunicorn funcwsgi serve``): both take
their settings and hooks from :func:`funcwsgi.adapters.gunicorn.gunicorn_settings`.
The environment is parsed once, here, into :data:`runtime_config`.
:func:`funcwsgi.adapters.plain_gunicorn.loading_alone` looks for this module among
the imported ones to know that gunicorn read these settings.
"""

from __future__ import annotations

from typing import Any

from funcwsgi.process import hold_collector

# gunicorn's master imports this module before the settings, the request path and the function:
# held back until the master's when_ready and each worker's start, as `funcwsgi serve` does.
hold_collector()

from funcwsgi.config import Config  # noqa: E402
from funcwsgi.errors import StartupError, report_and_exit  # noqa: E402

# Not named `config`: gunicorn reads that name as its own --config setting.
try:
    runtime_config = Config.from_env()
except StartupError as error:  # gunicorn would print a traceback wall; one line instead
    report_and_exit(error)

from funcwsgi.adapters.gunicorn import gunicorn_settings  # noqa: E402 - after the configuration is known to be valid

_settings: dict[str, Any] = gunicorn_settings(runtime_config)
# bind, worker_class, workers, threads, graceful_timeout, max_requests, loglevel,
# proc_name, worker_tmp_dir, control_socket_disable and the hooks on_starting, when_ready, pre_fork, post_fork,
# post_worker_init, worker_exit, child_exit.
globals().update(_settings)
__all__ = sorted(_settings)
