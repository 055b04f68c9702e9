"""What each server can do, as data: the table the configuration reads.

:mod:`funcwsgi.config` checks ``SERVER_ADAPTER``, ``SERVER_HTTP2`` and
``SERVER_MAX_REQUESTS`` against this table, so adding a server or a feature
to one is a row here, not a rule in the configuration. This module imports
nothing of the runtime: it is the one adapter module the core may import
(tests/test_imports.py), the configuration to check settings against it and
the server interface (:mod:`funcwsgi.serving`) to find a server run by its
own command.
"""

from __future__ import annotations

from typing import NamedTuple

#: Longest request head any server is let accept: Node's default is 16 KiB, nginx's 4 x 8 KiB. Here, not with the
#: edge worker's bounds, so that granian's adapter reads it without importing gunicorn's package.
HEAD_LIMIT = 64 * 1024


# NamedTuples, not frozen dataclasses: dataclasses compiles six generated methods for each at every
# start, about 4 million instructions a class; a NamedTuple costs a tenth of that (issue 44).
class OwnCommand(NamedTuple):
    """A server that can also be run by its own command, loading ``funcwsgi:app`` as any WSGI app."""

    #: A module in ``sys.modules`` only when that server is loading the app (its master process's module).
    running: str
    #: The adapter module that builds ``funcwsgi:app`` then: ``loading_alone()``, ``build_app(config)``
    #: and ``startup_failed(error)`` (:class:`funcwsgi.serving.OwnCommandHook`).
    hook: str


class AdapterSpec(NamedTuple):
    module: str  # the adapter module in this package
    server: str  # the server's import name
    extra: str | None  # the funcwsgi extra that installs it; None when always installed
    http: bool = True  # False: the function is not called over HTTP (kafka consumes a topic)
    #: Hostile-client attacks (tests/reliability/hostile.py) under which this server stops
    #: answering other callers whatever it is configured with: `funcwsgi serve` warns.
    hostile_gaps: tuple[str, ...] = ()
    #: Serves HTTP/2 when SERVER_HTTP2 is true (docs/servers.md#http2).
    http2: bool = False
    #: Serves HTTP/2 unless SERVER_HTTP2=false: it bounds HTTP/2 as it bounds HTTP/1.1.
    http2_by_default: bool = False
    #: Recycles a worker process after SERVER_MAX_REQUESTS calls.
    recycles_workers: bool = False
    #: Run by its own command (``gunicorn funcwsgi:app``), the server's adapter still builds the app.
    own_command: OwnCommand | None = None


ADAPTERS: dict[str, AdapterSpec] = {
    "gunicorn": AdapterSpec(
        "funcwsgi.adapters.gunicorn",
        "gunicorn",
        None,
        http2=True,
        http2_by_default=True,
        recycles_workers=True,
        own_command=OwnCommand("gunicorn.arbiter", "funcwsgi.adapters.plain_gunicorn"),
    ),
    # Stops accepting at SERVER_MAX_CONNECTIONS and closes nothing to make room.
    "waitress": AdapterSpec("funcwsgi.adapters.waitress", "waitress", "waitress", hostile_gaps=("idle-keep-alive", "connection-flood")),
    # A request body is read on the call's thread, so stalled bodies take every call thread.
    "werkzeug": AdapterSpec("funcwsgi.adapters.werkzeug", "werkzeug", None, hostile_gaps=("stalled-bodies", "trickling-bodies", "expect-100-never-sent")),
    # As werkzeug, and its accept queue overflows under a flood of connections.
    "granian": AdapterSpec(
        "funcwsgi.adapters.granian",
        "granian",
        "granian",
        hostile_gaps=("stalled-bodies", "trickling-bodies", "connection-flood", "expect-100-never-sent", "invalid-chunked"),
        http2=True,
    ),
    "kafka": AdapterSpec("funcwsgi.adapters.kafka", "confluent_kafka", "kafka", http=False),
}
#: The adapters that serve the function over HTTP (the contract suite runs on each).
HTTP_ADAPTERS = tuple(name for name, spec in ADAPTERS.items() if spec.http)
