"""The server interface (funcwsgi/serving/): the layers, the timeouts and the event-loop code know
servers only through it, and what it answers for a call whose server gives nothing."""

from __future__ import annotations

import ast
import re
import socket
import sys
import types
from pathlib import Path

import pytest

from funcwsgi import serving
from funcwsgi.eventloop.asgi import LoopCall
from funcwsgi.middleware.reserved import PROBE_PATHS
from funcwsgi.serving import SERVER_CALL_KEY, TASK, THREAD

from .support.socket_call import SocketCall

REPO = Path(__file__).resolve().parent.parent
#: The code that may know servers only through funcwsgi.serving, and triggers only through the environ.
SERVER_NEUTRAL = ("funcwsgi/middleware", "funcwsgi/timeouts", "funcwsgi/eventloop")
#: The servers, and the triggers other than HTTP (the Kafka consumer and its client library).
SERVER_NAMES = re.compile(r"gunicorn|granian|waitress|uvicorn|kafka|confluent", re.IGNORECASE)


def test_the_layers_timeouts_and_event_loop_code_name_no_server_nor_trigger():
    """Comments and docstrings included: a server or trigger named there is one the code was written around."""
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for folder in SERVER_NEUTRAL
        for path in sorted((REPO / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SERVER_NAMES.search(line)
    ]
    assert found == []


def test_the_check_sees_a_server_named_in_a_comment(tmp_path):
    assert SERVER_NAMES.search("# as Gunicorn does")
    assert SERVER_NAMES.search('if environ.get(TRIGGER_KEY) == "kafka":')
    assert not SERVER_NAMES.search("# as the default server does")


def test_without_a_server_call_the_client_counts_as_connected_and_the_peer_is_remote_addr():
    environ = {"REMOTE_ADDR": "10.0.0.7", "REMOTE_PORT": "5123"}
    assert serving.server_call(environ) is None
    assert serving.client_connected(environ) is True
    assert serving.peer(environ) == ("10.0.0.7", 5123)
    assert serving.peer({}) is None
    assert not serving.runs_on_loop(environ)


def test_without_a_server_call_work_after_the_response_runs_at_once():
    done = []
    serving.after_response({}, lambda: done.append(1))
    assert done == [1]


def test_work_after_the_response_that_fails_is_logged_and_the_rest_still_runs(caplog):
    done = []

    def failing():
        raise RuntimeError("boom")

    serving.run_after_response([failing, lambda: done.append(1)])
    assert done == [1]
    assert "Work after the response failed" in caplog.text


def test_a_socket_call_answers_now_and_shuts_the_socket_for_writing(client_socket):
    server_end, client_end = client_socket
    call = SocketCall(server_end)
    environ = {SERVER_CALL_KEY: call}
    assert serving.server_call(environ) is call and call.lent is THREAD and call.answers_now
    call.answer_now("408 Request Timeout", [("Content-Length", "2"), ("Connection", "close")], b"no")
    received = b""
    while chunk := client_end.recv(4096):
        received += chunk
    assert received == b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno"
    with pytest.raises(OSError):
        server_end.send(b"late")


def test_a_socket_call_tells_whether_its_client_is_still_connected(client_socket):
    server_end, client_end = client_socket
    environ = {SERVER_CALL_KEY: SocketCall(server_end)}
    assert serving.client_connected(environ) is True
    client_end.close()
    assert serving.client_connected(environ) is False


def test_a_client_that_sent_more_counts_as_connected_until_that_is_read(client_socket):
    """A peek cannot see past unread bytes: a pipelined request is not a goodbye."""
    server_end, client_end = client_socket
    client_end.sendall(b"GET /next HTTP/1.1\r\n")
    assert serving.client_connected({SERVER_CALL_KEY: SocketCall(server_end)}) is True


def test_a_socket_call_names_its_peer_from_the_socket():
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    accepted, address = listener.accept()
    try:
        assert serving.peer({SERVER_CALL_KEY: SocketCall(accepted)}) == address
        assert serving.peer({SERVER_CALL_KEY: SocketCall(accepted, ("10.1.2.3", 99))}) == ("10.1.2.3", 99)
    finally:
        for sock in (accepted, client, listener):
            sock.close()


def test_a_socket_call_keeps_work_for_after_the_response_and_tells_its_lender_of_stuck_threads(client_socket):
    told = []

    class Lender:
        def call_stuck(self, key, extra_threads):
            told.append(("stuck", key, extra_threads))

        def call_back(self, key, extra_threads):
            told.append(("back", key, extra_threads))

    call = SocketCall(client_socket[0], None, Lender(), key="conn-1")
    serving.after_response({SERVER_CALL_KEY: call}, print)
    assert call.later == [print]
    call.thread_stuck(1)
    call.thread_back(0)
    assert told == [("stuck", "conn-1", 1), ("back", "conn-1", 0)]


def test_a_call_on_the_loop_is_lent_a_task_and_cannot_be_answered_early():
    call = LoopCall({"client": ("127.0.0.1", 4000)})
    environ = {SERVER_CALL_KEY: call}
    assert call.lent is TASK and not call.answers_now and serving.runs_on_loop(environ)
    assert serving.peer(environ) == ("127.0.0.1", 4000)
    assert serving.client_connected(environ) is True
    call.gone = True
    assert serving.client_connected(environ) is False
    with pytest.raises(OSError):
        call.answer_now("408 Request Timeout", [], b"")


def test_exempt_paths_are_the_probes_and_metrics_only_when_served_on_the_port(monkeypatch):
    from funcwsgi.config import Config

    assert serving.exempt_paths(Config.from_env({"SERVER_METRICS": "true"})) == PROBE_PATHS | {"/metrics"}
    assert serving.exempt_paths(Config.from_env({"SERVER_METRICS": "false"})) == PROBE_PATHS


# -- servers through their public names only ----------------------------------------

#: The servers' import names: our code reaches them through their public names only. werkzeug is
#: also a library of request and response types, used as such outside the adapters.
SERVERS = frozenset({"gunicorn", "granian", "waitress", "uvicorn", "uvicorn_worker"})
ADAPTER_SERVERS = SERVERS | {"werkzeug"}
#: Where our code is.
OUR_CODE = ("funcwsgi", "bench")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports(tree: ast.Module) -> dict[str, str]:
    """Each name a module binds by importing, with the module it comes from."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[(alias.asname or alias.name).split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _defined_by(cls: ast.ClassDef) -> set[str]:
    """The attribute names a class of ours defines: methods, class attributes, slots, and what it assigns to self."""
    names: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # __slots__ entries
    for node in cls.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def server_private_uses(path: Path) -> list[str]:
    """Where code that imports a server reads, writes or overrides an underscore name it does not define itself.

    - ``self._x`` (or ``cls._x``) in a class of ours: ``_x`` must be the class's own, not one it inherits;
    - a method ``_x`` in a class whose base is a server's must not be one that base has (an override);
    - ``obj._x`` on anything else: only on a module of the standard library (``os._exit``), or when
      ``_x`` is a name our module defines itself.
    """
    import importlib
    import sys

    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = _imports(tree)
    servers = ADAPTER_SERVERS if path.parent.name == "adapters" else SERVERS
    if not {module.split(".")[0] for module in imported.values()} & servers:
        return []
    module_names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for cls in [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]:
        module_names |= _defined_by(cls)
    found = []
    for cls in [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]:
        own = _defined_by(cls)
        server_bases = []
        for base in cls.bases:
            origin = imported.get(ast.unparse(base).split(".")[0], "")
            if origin.split(".")[0] in servers:
                module_name, _, attr = origin.rpartition(".")
                server_bases.append(getattr(importlib.import_module(module_name), attr))
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(node.name):
                if any(hasattr(base, node.name) for base in server_bases):
                    found.append(f"{path}:{node.lineno}: overrides {node.name}")
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name):
                if node.value.id in ("self", "cls") and node.attr not in own:
                    found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            receiver = node.value
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
                continue  # checked per class above
            if isinstance(receiver, ast.Name) and imported.get(receiver.id, "").split(".")[0] in sys.stdlib_module_names:
                continue
            if node.attr in module_names:
                continue
            found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_our_code_touches_no_private_name_of_a_server():
    found = [use for folder in OUR_CODE for path in sorted((REPO / folder).rglob("*.py")) for use in server_private_uses(path)]
    assert found == []


def test_the_private_name_check_sees_each_kind_of_use(tmp_path):
    """It flags what the gunicorn 23 worker did: a gunicorn lock read through self, a private
    attribute of the pool a server made, an override of a server's private method."""
    source = tmp_path / "worker.py"
    source.write_text(
        "import os\n"
        "from gunicorn.workers.gthread import ThreadWorker\n"
        "class Worker(ThreadWorker):\n"
        "    def _cap_keepalive(self, deadline):\n"
        "        pass\n"
        "    def go(self):\n"
        "        self.own = 1\n"
        "        with self._lock:\n"
        "            self.tpool._max_workers = 3\n"
        "        os._exit(0)\n"
    )
    found = server_private_uses(source)
    assert [line.split(": ", 1)[1] for line in found] == ["overrides _cap_keepalive", "self._lock", "self.tpool._max_workers"]


def test_a_server_run_by_its_own_command_is_found_through_its_adapter_row(monkeypatch):
    """`gunicorn funcwsgi:app` (gunicorn's master module loaded, funcwsgi's gunicorn settings not): the adapter's hook builds the app."""
    import funcwsgi.adapters.plain_gunicorn as plain_gunicorn
    from funcwsgi.serving import loaded_by_its_own_command

    monkeypatch.delitem(sys.modules, "gunicorn.arbiter", raising=False)
    assert loaded_by_its_own_command() is None  # a test client, waitress, `funcwsgi serve` on werkzeug...
    monkeypatch.setitem(sys.modules, "gunicorn.arbiter", types.ModuleType("gunicorn.arbiter"))
    monkeypatch.delitem(sys.modules, plain_gunicorn.GUNICORN_SETTINGS_MODULE, raising=False)
    assert loaded_by_its_own_command() is plain_gunicorn
    monkeypatch.setitem(sys.modules, plain_gunicorn.GUNICORN_SETTINGS_MODULE, types.ModuleType("settings"))
    assert loaded_by_its_own_command() is None  # gunicorn read our settings: its hooks do the work
