"""The conformance kit: HTTP checks of the runtime contract, run against every runtime it starts.

The kit starts each runtime under test itself, through a launcher per
runtime (launchers.py): inside this repository funcwsgi as a container runs
it (``gunicorn funcwsgi:app``) and on every HTTP adapter (``funcwsgi serve``
with ``SERVER_ADAPTER``), funcwsgi's event-loop path (the same fixtures
written ``async def``, on gunicorn's edge worker and granian's ASGI), the
default server spoken to over HTTP/2 (h2c), and the Node runtime
(``nodejs26/bin/serve``). Every check runs against every one
of them::

    pytest tests/conformance                       # every runtime of this repository
    pytest tests/conformance --runtime nodejs26    # one of them
    pytest tests/conformance --runtime-command ./serve --runtime-language nodejs26 --runtime-name nodejs26

``--runtime-command`` starts a runtime from elsewhere, configured by the same
environment variables, serving the kit's fixtures in the language named.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .kit import Runtime, Settings, serve
from .known_gaps import HTTP1_ONLY, HTTP2_ONLY, KNOWN_GAPS
from .launchers import MODULE_FILES, Launcher, command_launcher, local_launchers


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "runtime conformance kit")
    group.addoption(
        "--runtime", action="append", default=None, metavar="NAME",
        help="check only this runtime of the repository (repeatable): " + ", ".join(known.name for known in local_launchers()),
    )
    group.addoption("--runtime-command", default=None, help="start this command as the runtime under test instead")
    group.addoption(
        "--runtime-language", default="nodejs26", help="the fixtures' language for --runtime-command: " + ", ".join(MODULE_FILES)
    )
    group.addoption("--runtime-name", default=None, help="the name the runtime prints in 'Starting <name> server' (default: the language)")


def _option(config: pytest.Config, name: str) -> object:
    # getoption with a default: the options exist only when this folder's
    # conftest was loaded early (when the kit's folder is on the command line).
    return config.getoption(name, default=None)


def launchers(config: pytest.Config) -> list[Launcher]:
    command = _option(config, "runtime_command")
    if command:
        language = str(_option(config, "runtime_language") or "nodejs26")
        return [command_launcher(str(command), language, str(_option(config, "runtime_name") or language))]
    known = local_launchers()
    chosen = _option(config, "runtime")
    if not chosen:
        return known
    unknown = set(chosen) - {launcher.name for launcher in known}  # type: ignore[arg-type]
    if unknown:
        raise pytest.UsageError(f"--runtime {', '.join(sorted(unknown))}: unknown; known: {', '.join(launcher.name for launcher in known)}")
    return [launcher for launcher in known if launcher.name in chosen]  # type: ignore[operator]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "launcher" in metafunc.fixturenames:
        found = launchers(metafunc.config)
        metafunc.parametrize("launcher", found, ids=[launcher.name for launcher in found], indirect=True, scope="session")


@pytest.fixture(scope="session")
def launcher(request: pytest.FixtureRequest) -> Launcher:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def runtime(launcher: Launcher) -> Iterator[Runtime]:
    """The default launch: the ``main`` fixture with the kit's settings, once per runtime for the whole run."""
    with serve(launcher, "main", {}) as running:
        yield running


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the known gaps of a runtime (known_gaps.py) as strict expected failures, for that runtime only;
    skip the checks that are HTTP/1.1 by nature for a runtime spoken to over HTTP/2, and the other way round."""
    gaps = {(runtime, check): reason for runtime, check, reason in KNOWN_GAPS}
    http1_only, http2_only = dict(HTTP1_ONLY), dict(HTTP2_ONLY)
    for item in items:
        callspec = getattr(item, "callspec", None)
        launcher = callspec.params.get("launcher") if callspec else None
        if launcher is None:
            continue
        check = f"{item.path.name}::{item.originalname}"  # type: ignore[attr-defined]
        reason = gaps.get((launcher.name, check))
        if reason:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"{launcher.name}: {reason}"))
        if launcher.protocol == "h2c" and check in http1_only:
            item.add_marker(pytest.mark.skip(reason=f"HTTP/1.1 by nature: {http1_only[check]}"))
        elif launcher.protocol != "h2c" and check in http2_only:
            item.add_marker(pytest.mark.skip(reason=f"HTTP/2 only: {http2_only[check]}"))


def pytest_report_header(config: pytest.Config) -> str:
    return "conformance: " + ", ".join(f"{launcher.name} ({launcher.language} fixtures)" for launcher in launchers(config))
