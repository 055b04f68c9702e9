"""``GET /metrics``: the Prometheus text exposition of the call metrics and of any collector registered."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..replies import Reply
from .calls import LocalCallMetrics, call_metrics
from .multiprocess import multiprocess_dir

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

_lock = threading.Lock()
_own_collectors: list[Any] = []


def register_collector(collector: Any) -> None:
    """Serve ``collector``'s series (read at each scrape, in this process) next to the call metrics.

    For state only the serving process has, such as the Kafka trigger's lag.
    """
    from prometheus_client import REGISTRY

    with _lock:
        _own_collectors.append(collector)
    REGISTRY.register(collector)


class MetricsEndpoint:
    """``GET /metrics``: the Prometheus text exposition of this process, or of all workers."""

    def __init__(self, config: Config) -> None:
        self.metrics = call_metrics(config)  # the mode is chosen before the first scrape

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

        path = multiprocess_dir()
        if path is None:
            if isinstance(self.metrics, LocalCallMetrics):
                self.metrics.register()
            registry = REGISTRY
        else:
            from prometheus_client.multiprocess import MultiProcessCollector

            registry = CollectorRegistry()
            MultiProcessCollector(registry, path)  # type: ignore[no-untyped-call]  # unannotated in prometheus_client
            for collector in _own_collectors:
                registry.register(collector)
        return Reply(200, generate_latest(registry), content_type=CONTENT_TYPE_LATEST)(environ, start_response)

    def __repr__(self) -> str:
        return "MetricsEndpoint()"
