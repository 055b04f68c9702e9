"""The conformance kit: HTTP checks of the runtime contract, against any runtime.

Against a runtime you started yourself (serving the kit's fixture function
with the settings in docs/conformance.md)::

    pytest tests/conformance --runtime-url http://127.0.0.1:8080 \
        [--runtime-log server.log] [--publisher-port 9911]

Without ``--runtime-url``, inside this repository, the kit starts funcwsgi
itself on every installed server adapter and runs every check against each.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kit import Runtime, Settings, event_receiver


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "runtime conformance kit")
    group.addoption("--runtime-url", default=None, help="base URL of the runtime under test; unset: start funcwsgi here")
    group.addoption("--runtime-log", default=None, help="file holding the runtime's stdout, for the start-up line checks")
    group.addoption(
        "--publisher-port", type=int, default=None,
        help="port on 127.0.0.1 where the kit receives emitted events (the runtime's PUBLISHER_PROXY_ADDRESS)",
    )
    group.addoption("--call-timeout", type=float, default=Settings.call_timeout, help="the runtime's SERVER_CALL_TIMEOUT")
    group.addoption("--max-body-size", type=int, default=Settings.max_body_size, help="the runtime's SERVER_MAX_BODY_SIZE")


def _option(config: pytest.Config, name: str) -> object:
    # getoption with a default: the options exist only when this folder's
    # conftest was loaded early (when the kit's folder is on the command line).
    return config.getoption(name, default=None)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "runtime" not in metafunc.fixturenames:
        return
    if _option(metafunc.config, "runtime_url"):
        targets = ["external"]
    else:
        from .local import local_targets

        targets = local_targets()
    metafunc.parametrize("runtime", targets, indirect=True, scope="session")


@pytest.fixture(scope="session")
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    config = request.config
    settings = Settings(
        call_timeout=float(_option(config, "call_timeout") or Settings.call_timeout),  # type: ignore[arg-type]
        max_body_size=int(_option(config, "max_body_size") or Settings.max_body_size),  # type: ignore[arg-type]
    )
    if request.param == "external":
        log = _option(config, "runtime_log")
        port = _option(config, "publisher_port")
        external = Runtime(
            str(_option(config, "runtime_url")).rstrip("/"),
            settings,
            read_log=(lambda: Path(str(log)).read_text()) if log else None,
            publisher_port=int(port) if port else None,  # type: ignore[call-overload]
        )
        if external.publisher_port is None:
            yield external
        else:
            with event_receiver(external.publisher_port, external.received):
                yield external
        return
    from .local import start_local

    with start_local(request.param, settings) as running:
        yield running


def pytest_report_header(config: pytest.Config) -> str:
    url = _option(config, "runtime_url")
    return f"conformance: runtime at {url}" if url else f"conformance: funcwsgi from {os.getcwd()}"
