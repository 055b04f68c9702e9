"""kafka: the function served from Kafka topics instead of HTTP (``funcwsgi[kafka]``).

One process consumes ``KAFKA_TOPICS`` in the consumer group ``KAFKA_GROUP_ID``
and serves up to ``SERVER_NUMTHREADS`` partitions at once (see
:mod:`funcwsgi.kafka.consumer`); replicas of the function in the same group
share the partitions. ``SERVER_PORT`` still answers the probes and
``/metrics`` over HTTP. SIGTERM finishes the records in flight, commits them,
leaves the group and exits 0.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from funcwsgi.adapters._signals import StopRequest
from funcwsgi.application import default_app
from funcwsgi.kafka.consumer import KafkaTrigger
from funcwsgi.kafka.probes import ProbeApp, start_probe_server
from funcwsgi.kafka.trigger_metrics import register_trigger_metrics
from funcwsgi.process import start_process, stop_process

if TYPE_CHECKING:
    from funcwsgi.config import Config

log = logging.getLogger("funcwsgi.kafka")


def serve(config: Config) -> int:
    if config.server_workers > 1:
        log.warning("SERVER_WORKERS=%d is ignored by the kafka adapter: run more replicas in the group instead", config.server_workers)
        config = config.replace(server_workers=1)
    service = default_app(config)
    trigger = KafkaTrigger(service, config)
    if config.server_metrics:
        register_trigger_metrics(trigger.status)
    start_process(service)
    metrics_here = config.server_metrics_path if config.server_metrics and not config.server_metrics_port else None
    probes = start_probe_server(ProbeApp(service, trigger.status, metrics_here), config.server_host, config.server_port)
    StopRequest(on_stop=trigger.stop).install(config.server_graceful_timeout)
    try:
        return trigger.run()
    finally:
        probes.shutdown()
        stop_process(service)
