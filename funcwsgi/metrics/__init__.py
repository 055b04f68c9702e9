"""Prometheus metrics of the calls, and the ``/metrics`` endpoint that serves them.

The names are the ones Kubeless and every Kyma Python runtime expose, so
existing dashboards keep working: ``function_calls_total``,
``function_failures_total`` and ``function_duration_seconds``, each labelled
``method``; ``function_rejected_total`` counts the calls the server refused
with 503 under overload (they never reached the function), and
``function_queueing_delay_seconds`` how long calls waited to start. With more than one worker process prometheus_client's
multiprocess mode is used: each worker writes its own files in a directory
made fresh when the server starts, and a scrape adds them up.

:mod:`funcwsgi.middleware.call_metrics` is the layer that counts a call; here are
what it counts into (:mod:`.calls`), the multiprocess directory
(:mod:`.multiprocess`), the ``/metrics`` answer (:mod:`.endpoint`) and the
metrics served on a port of their own (:mod:`.port`).
"""
