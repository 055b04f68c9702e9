"""Serving a function from Kafka: the consumer loop plus the HTTP probes, until SIGTERM."""

from __future__ import annotations

import logging
import signal
from typing import Any

from ..application import FunctionService
from ..workers import start_worker
from .consumer import KafkaTrigger
from .probes import ProbeApp, start_probe_server

log = logging.getLogger("funcwsgi.kafka")


def serve(service: FunctionService) -> int:
    """Consume the configured topics with ``service``; return the exit status."""
    config = service.config
    trigger = KafkaTrigger(service, config)
    probes = start_probe_server(ProbeApp(service, trigger.status), config.server_host, config.server_port)

    def stop(signum: int, frame: Any) -> None:
        log.info("Received %s: finishing the records in flight", signal.Signals(signum).name)
        trigger.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    start_worker(service)
    try:
        return trigger.run()
    finally:
        probes.shutdown()


def main() -> None:
    """Until the adapters land: serve the function the environment names from Kafka."""
    import sys

    from ..application import default_app
    from ..errors import StartupError, report_and_exit

    service = default_app()
    try:
        sys.exit(serve(service))
    except StartupError as error:
        report_and_exit(error)
