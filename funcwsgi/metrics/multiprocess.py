"""The directory where each worker process writes its metric values, for a scrape to add up."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile

from ..process import on_worker_exit

log = logging.getLogger("funcwsgi.metrics")

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"

_multiprocess_dir: str | None = None


def multiprocess_dir() -> str | None:
    return _multiprocess_dir


def use_multiprocess_dir() -> None:
    """Point prometheus_client at a fresh directory before any metric value exists.

    prometheus_client reads the directory from the environment (the workers
    inherit it across fork), so this is the one place the runtime writes to
    ``os.environ``. A directory the operator named is emptied instead of made.
    """
    global _multiprocess_dir
    given = os.environ.get(MULTIPROCESS_ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        for name in os.listdir(given):  # what glob's "*.db" matches, without importing glob at every start
            if name.endswith(".db") and not name.startswith("."):
                os.remove(os.path.join(given, name))
        path = given
    else:
        path = tempfile.mkdtemp(prefix="funcwsgi-metrics-")
        atexit.register(_remove_in, os.getpid(), path)
        os.environ[MULTIPROCESS_ENV] = path
    from prometheus_client import values

    # The value class is chosen when prometheus_client is imported, which the
    # function's own module may already have done: choose again.
    values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]  # unannotated in prometheus_client
    _multiprocess_dir = path
    on_worker_exit(_forget_worker)
    log.debug("Metrics of all worker processes are collected in %s", path)


def _remove_in(owner: int, path: str) -> None:
    """Remove the directory at exit, in the process that made it (not in a forked worker)."""
    if os.getpid() == owner:
        shutil.rmtree(path, ignore_errors=True)


def _forget_worker(pid: int) -> None:
    """A worker ended: drop its live-gauge files. Its counter and histogram files stay,
    so the totals never go down (Prometheus would read a decrease as a reset)."""
    from prometheus_client import multiprocess

    if _multiprocess_dir is not None:
        multiprocess.mark_process_dead(pid, _multiprocess_dir)  # type: ignore[no-untyped-call]  # unannotated in prometheus_client
