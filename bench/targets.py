"""Every server the benchmark starts: reference points, funcwsgi on each adapter, the alternatives.

Each serves the same hello world on ``GET /`` (body ``Hello, world!``). The
funcwsgi targets follow what is on this branch: every adapter through
``funcwsgi serve`` once that command exists, ``gunicorn funcwsgi:app`` with the
repository's ``gunicorn.conf.py`` always, and tracing on when the stack has a
tracing layer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .environment import BENCH, NODE_ALTERNATIVE, REPO

APPS = BENCH / "apps"
HELLO = APPS / "hello"
ALTERNATIVES = BENCH / "alternatives"
PYTHON = sys.executable

#: The same thread count on every threaded server: funcwsgi's SERVER_NUMTHREADS default.
THREADS = "50"
#: Issue 42's pairs: one worker with 4 threads on each side, as the issue's figures were taken.
EDGE_THREADS = "4"
#: gunicorn 27's own HTTP/2 on gthread, prior knowledge and ``Upgrade: h2c`` on the plain port.
GUNICORN_H2C = ("--http-protocols", "h2,h1", "--http2-cleartext", "both")
ADAPTERS = ("gunicorn", "waitress", "werkzeug", "granian")
#: Stands for the project's Node 26 in a command; run.py puts the real path in (environment.node_binary).
NODE = "node"
NODEJS26_SERVE = REPO / "nodejs26" / "bin" / "serve"


@dataclass(frozen=True)
class Target:
    name: str
    label: str
    group: str  # "reference", "funcwsgi" or "alternative"
    command: Callable[[int], list[str]]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path = REPO
    needs: tuple[str, ...] = ()  # modules the project's environment must have
    alternative_env: bool = False  # runs in the alternatives' venv
    baseline: str | None = None  # the bare reference on the same server
    tracing: bool = False  # needs the OTLP sink
    http2: bool = False  # loaded over HTTP/2 (h2load, prior knowledge) instead of HTTP/1.1 (wrk)

    def display_command(self, python: str = "python") -> str:
        words = [python if word == PYTHON else word.replace(f"{REPO}/", "") for word in self.command(8080)]
        env = {**self.env, "TRACE_COLLECTOR_ENDPOINT": "http://127.0.0.1:SINK/v1/traces"} if self.tracing else self.env
        settings = " ".join(f"{key}={value.replace(f'{REPO}/', '')}" for key, value in env.items() if key != "HANDLER_FOLDER")
        return (settings + " " if settings else "") + " ".join(words)


def bare(name: str, label: str, command: Callable[[int], list[str]], needs: tuple[str, ...] = ()) -> Target:
    return Target(name, label, "reference", command, cwd=APPS, needs=needs)


def reference_targets() -> list[Target]:
    return [
        bare("bare-gunicorn-sync", "bare WSGI, gunicorn sync", lambda port: [PYTHON, "-m", "gunicorn", "-k", "sync", "-w", "1", "-b", f"127.0.0.1:{port}", "bare:app"]),
        bare(
            "bare-gunicorn-gthread",
            "bare WSGI, gunicorn gthread",
            lambda port: [PYTHON, "-m", "gunicorn", "-k", "gthread", "-w", "1", "--threads", THREADS, "-b", f"127.0.0.1:{port}", "bare:app"],
        ),
        bare(
            "bare-gunicorn-gthread-4",
            f"bare WSGI, gunicorn gthread, 1 worker × {EDGE_THREADS} threads",
            lambda port: [PYTHON, "-m", "gunicorn", "-k", "gthread", "-w", "1", "--threads", EDGE_THREADS, "-b", f"127.0.0.1:{port}", "bare:app"],
        ),
        Target(
            "bare-gunicorn-gthread-h2c-4",
            f"bare WSGI, gunicorn gthread, its own h2c, 1 worker × {EDGE_THREADS} threads (h2load)",
            "reference",
            lambda port: [PYTHON, "-m", "gunicorn", "-k", "gthread", "-w", "1", "--threads", EDGE_THREADS, *GUNICORN_H2C, "-b", f"127.0.0.1:{port}", "bare:app"],
            cwd=APPS,
            http2=True,
        ),
        bare(
            "bare-waitress",
            "bare WSGI, waitress",
            lambda port: [PYTHON, "-m", "waitress", "--host", "127.0.0.1", f"--port={port}", f"--threads={THREADS}", "bare:app"],
            ("waitress",),
        ),
        bare(
            "bare-granian",
            "bare WSGI, granian",
            lambda port: [PYTHON, "-m", "granian", "--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--blocking-threads", THREADS, "bare:app"],
            ("granian",),
        ),
    ]


def has_serve_command() -> bool:
    from funcwsgi.cli import COMMANDS

    return any(name.rsplit(".", 1)[-1] == "serve" for name in COMMANDS)


def has_layer(name: str) -> bool:
    from funcwsgi.stack import LAYERS

    return any(layer.name == name for layer in LAYERS)


def http2_setting() -> bool:
    from funcwsgi.config import known_env_names

    return "SERVER_HTTP2" in known_env_names()


def funcwsgi_targets() -> list[Target]:
    hello = {"HANDLER_FOLDER": str(HELLO)}
    gunicorn_conf = Target(
        "funcwsgi-gunicorn-conf",
        "funcwsgi, gunicorn funcwsgi:app",
        "funcwsgi",
        lambda port: [PYTHON, "-m", "gunicorn", "funcwsgi:app"],
        env=hello,
        baseline="bare-gunicorn-gthread",
    )
    if not has_serve_command():
        found = [gunicorn_conf]
    else:
        needs = {"waitress": ("waitress",), "granian": ("granian",)}
        baselines = {"gunicorn": "bare-gunicorn-gthread", "waitress": "bare-waitress", "granian": "bare-granian"}
        found = [
            Target(
                f"funcwsgi-{adapter}",
                f"funcwsgi, {adapter}",
                "funcwsgi",
                lambda port: [PYTHON, "-m", "funcwsgi", "serve"],
                env={**hello, "SERVER_ADAPTER": adapter},
                needs=needs.get(adapter, ()),
                baseline=baselines.get(adapter),
            )
            for adapter in ADAPTERS
        ]
        found.insert(1, gunicorn_conf)
        if http2_setting():
            # The same hello world over HTTP/2: its ratio column is against the same adapter over HTTP/1.1.
            found.append(
                Target(
                    "funcwsgi-gunicorn-http2",
                    "funcwsgi, gunicorn, HTTP/2 (h2c, h2load)",
                    "funcwsgi",
                    lambda port: [PYTHON, "-m", "funcwsgi", "serve"],
                    env={**hello, "SERVER_ADAPTER": "gunicorn"},
                    baseline="funcwsgi-gunicorn",
                    http2=True,
                )
            )
            found.append(
                Target(
                    "funcwsgi-granian-http2",
                    "funcwsgi, granian, HTTP/2 (h2c, h2load)",
                    "funcwsgi",
                    lambda port: [PYTHON, "-m", "funcwsgi", "serve"],
                    env={**hello, "SERVER_ADAPTER": "granian", "SERVER_HTTP2": "true"},
                    needs=("granian",),
                    baseline="funcwsgi-granian",
                    http2=True,
                )
            )
    if has_serve_command():
        found += edge_pairs(hello)
    if has_layer("tracing"):
        default = found[0]
        found.append(
            Target(
                f"{default.name}-tracing",
                f"{default.label}, tracing on",
                "funcwsgi",
                default.command,
                env=dict(default.env),
                needs=default.needs,
                baseline=default.baseline,
                tracing=True,
            )
        )
    return found


def serve(port: int) -> list[str]:
    return [PYTHON, "-m", "funcwsgi", "serve"]


def edge_pairs(hello: dict[str, str]) -> list[Target]:
    """funcwsgi with 1 worker × 4 threads on the default worker (gunicorn's edge worker) and on granian, over HTTP/1.1 and h2c.

    Each is paired in report.checks with the bare server of the same shape (issue 42, item 8).
    """
    shape = {"SERVER_WORKERS": "1", "SERVER_NUMTHREADS": EDGE_THREADS}
    return [
        Target(
            "funcwsgi-gunicorn-4",
            f"funcwsgi, default (gunicorn edge worker), 1 worker × {EDGE_THREADS} threads",
            "funcwsgi",
            serve,
            env={**hello, "SERVER_ADAPTER": "gunicorn", **shape},
            baseline="bare-gunicorn-gthread-4",
        ),
        Target(
            "funcwsgi-granian-4",
            f"funcwsgi, granian, 1 worker × {EDGE_THREADS} threads",
            "funcwsgi",
            serve,
            env={**hello, "SERVER_ADAPTER": "granian", **shape},
            needs=("granian",),
            baseline="bare-granian",
        ),
        Target(
            "funcwsgi-gunicorn-http2-4",
            f"funcwsgi, default (gunicorn edge worker), h2c, 1 worker × {EDGE_THREADS} threads (h2load)",
            "funcwsgi",
            serve,
            env={**hello, "SERVER_ADAPTER": "gunicorn", **shape},
            baseline="bare-gunicorn-gthread-h2c-4",
            http2=True,
        ),
    ]


def alternative_targets() -> list[Target]:
    return [
        Target(
            "functions-framework",
            "Google Functions Framework (defaults)",
            "alternative",
            lambda port: ["functions-framework", "--target", "hello", "--source", str(ALTERNATIVES / "ff_function" / "main.py"), "--host", "127.0.0.1", "--port", str(port)],
            alternative_env=True,
        ),
        Target(
            "kyma-shaped",
            "Kyma-python312-shaped runtime",
            "alternative",
            lambda port: ["python", str(ALTERNATIVES / "kyma_runtime.py")],
            env={"FUNCTION_PATH": str(ALTERNATIVES / "kyma_function"), "MOD_NAME": "handler", "FUNC_HANDLER": "main"},
            alternative_env=True,
        ),
    ]


def node_reference_targets() -> list[Target]:
    return [
        Target("bare-node-http", "bare node:http", "reference", lambda port: [NODE, str(APPS / "node_bare.mjs")], cwd=APPS),
    ]


def nodejs26_targets() -> list[Target]:
    return [
        Target(
            "nodejs26",
            "funcwsgi nodejs26",
            "funcwsgi",
            lambda port: [str(NODEJS26_SERVE)],
            env={"HANDLER_FOLDER": str(APPS / "hello-nodejs26")},
            baseline="bare-node-http",
        ),
        Target(
            "nodejs26-tracing",
            "funcwsgi nodejs26, tracing on",
            "funcwsgi",
            lambda port: [str(NODEJS26_SERVE)],
            env={"HANDLER_FOLDER": str(APPS / "hello-nodejs26")},
            baseline="bare-node-http",
            tracing=True,
        ),
    ]


def node_alternative_targets() -> list[Target]:
    # Kyma's HANDLER_PATH names the function's file. At its defaults Kyma's runtime makes no span for a
    # hello world (bench/alternatives/kyma_nodejs26/server.mjs says why); a function requiring node:http
    # switches its http instrumentation on.
    return [
        Target(
            "kyma-nodejs26-shaped",
            "Kyma-nodejs26-shaped runtime (Express 5)",
            "alternative",
            lambda port: [NODE, str(NODE_ALTERNATIVE / "server.mjs")],
            env={"HANDLER_PATH": str(NODE_ALTERNATIVE / "function" / "handler.js")},
            cwd=NODE_ALTERNATIVE,
        ),
        Target(
            "kyma-nodejs26-shaped-traced",
            "Kyma-nodejs26-shaped runtime (Express 5), a function requiring node:http (a span per call)",
            "alternative",
            lambda port: [NODE, str(NODE_ALTERNATIVE / "server.mjs")],
            env={"HANDLER_PATH": str(NODE_ALTERNATIVE / "function-requiring-http" / "handler.js")},
            cwd=NODE_ALTERNATIVE,
        ),
    ]


def node_target_names() -> frozenset[str]:
    """The Node rows: bench/run.py measures them side by side in each round and warms them up longer."""
    return frozenset(t.name for t in node_reference_targets() + nodejs26_targets() + node_alternative_targets())


def all_targets() -> list[Target]:
    return (
        reference_targets() + node_reference_targets()
        + funcwsgi_targets() + nodejs26_targets()
        + alternative_targets() + node_alternative_targets()
    )


def environment(target: Target, port: int, alternatives_bin: Path | None, trace_endpoint: str | None) -> dict[str, str]:
    """The process environment of ``target``: this one without any server or funcwsgi setting, plus the target's."""
    from funcwsgi.config import known_env_names

    dropped = known_env_names() | {"GUNICORN_CMD_ARGS", "WORKERS", "THREADS", "PORT"}
    env = {key: value for key, value in os.environ.items() if key not in dropped and not key.startswith(("GRANIAN_", "OTEL_"))}
    env.update(target.env)
    if target.env.get("SERVER_ADAPTER") == "granian":
        # granian keeps connections alive only when asked (docs/servers.md#keep-alive-on-granian); the load
        # generators keep theirs alive against every server, so granian is measured as the others are.
        env.setdefault("SERVER_KEEPALIVE_TIMEOUT", "7200")
    if target.group == "funcwsgi":
        env.update(SERVER_HOST="127.0.0.1", SERVER_PORT=str(port))
    if target.name == "kyma-shaped":
        env.update(FUNC_HOST="127.0.0.1", FUNC_PORT=str(port))
    if target.name.startswith("kyma-nodejs26-shaped"):
        env.update(SERVER_HOST="127.0.0.1", SERVER_PORT=str(port))
    if target.name == "bare-node-http":
        env.update(HOST="127.0.0.1", PORT=str(port))
    if target.tracing and trace_endpoint:
        env["TRACE_COLLECTOR_ENDPOINT"] = trace_endpoint
    if target.alternative_env and alternatives_bin is not None:
        env["PATH"] = f"{alternatives_bin}{os.pathsep}{env.get('PATH', '')}"
        env.pop("VIRTUAL_ENV", None)
    return env
