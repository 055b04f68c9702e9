from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from funcwsgi import make_app

from .support import calibration
from .support.paths import BIN, function_folder
from .support.ports import free_port
from .support.processes import Server, base_env
from .support.receivers import EventReceiver


class _SizeOptionalInput:
    """``wsgi.input`` with ``read()`` allowed without a size.

    The one exception to ``wsgiref.validate``: its input wrapper insists on
    exactly one argument to ``read()``, while PEP 3333 lets an application
    call ``read()`` bare (the stream is then read to ``CONTENT_LENGTH``). Every
    read still goes through the validator's wrapper, with the size said.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __iter__(self) -> Any:
        return iter(self._stream)


def pep3333_checked(app: Any, breaches: list[AssertionError]) -> Any:
    """``app`` behind ``wsgiref.validate.validator``; what it finds wrong is added to ``breaches``.

    The validator raises inside ``start_response``, where the runtime's error
    layer would turn its complaint into an ordinary 500; so each one is also
    recorded, and :class:`ValidatedClient` fails the request with it.
    """
    from wsgiref.validate import validator

    def size_optional(environ: dict[str, Any], start_response: Any) -> Any:
        environ["wsgi.input"] = _SizeOptionalInput(environ["wsgi.input"])

        def recorded(*args: Any) -> Any:
            try:
                return start_response(*args)
            except AssertionError as breach:
                breaches.append(breach)
                raise

        return app(environ, recorded)

    return validator(size_optional)


class ValidatedClient(Client):
    """A test client calling the app through the PEP 3333 validator; each response is read
    whole and closed, as the validator requires of a server, and any breach fails the request."""

    def __init__(self, app: Any) -> None:
        self.breaches: list[AssertionError] = []
        super().__init__(pep3333_checked(app, self.breaches))

    def open(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("buffered", True)
        response = super().open(*args, **kwargs)
        if self.breaches:
            breach = self.breaches.pop(0)
            self.breaches.clear()
            raise AssertionError(f"PEP 3333 breach (wsgiref.validate): {breach}")
        return response


#: The two ways the in-process tests of signatures, return values and reserved routes run.
CLIENT_KINDS = ("plain", "pep3333")


def client_of(app: Any, kind: str = "plain") -> Client:
    return ValidatedClient(app) if kind == "pep3333" else Client(app)


@pytest.fixture(scope="session")
def session_calibration() -> calibration.Calibration:
    """This machine's speed and load at the start of the session (tests/support/calibration.py)."""
    return calibration.measure()


@pytest.fixture
def timing(session_calibration: calibration.Calibration) -> calibration.Calibration:
    """The calibration for a timing bound: the session's, or a quick new measure if the machine got busier since."""
    now = calibration.measure(repeats=3, count=300_000)
    return now if now.factor > session_calibration.factor else session_calibration


def pytest_report_header(config: pytest.Config) -> str:
    return f"machine calibration: {calibration.measure()}"


@pytest.fixture
def client_for() -> Callable[..., Client]:
    """A werkzeug test client for the function in ``tests/functions/<scenario>``."""

    def build(scenario: str, *, environ: dict[str, str] | None = None, **overrides: Any) -> Client:
        app = make_app(environ=environ or {}, handler_folder=function_folder(scenario), **overrides)
        return Client(app)

    return build


@pytest.fixture(scope="module")
def collector() -> Iterator[Server]:
    """A real OTLP/HTTP receiver (oteltap) for the module; each span it gets is a JSON line on its stdout."""
    port = free_port()
    tap = Server([str(BIN / "oteltap"), "--port", str(port)], base_env(), port)
    try:
        tap.wait_for_output("Listening")
        yield tap
    finally:
        tap.stop()


@pytest.fixture(scope="module")
def receiver() -> Iterator[EventReceiver]:
    """A real HTTP receiver that keeps what is POSTed to it (a stand-in publisher proxy)."""
    running = EventReceiver()
    yield running
    running.stop()


@pytest.fixture
def client_socket() -> Iterator[tuple[Any, Any]]:
    """(the server's end, the client's end) of a connected socket pair; the client's reads time out after 5 s."""
    import socket

    server_end, client_end = socket.socketpair()
    client_end.settimeout(5)
    yield server_end, client_end
    server_end.close()
    client_end.close()


# -- the tests that judge time ---------------------------------------------------------------------
# `make test` runs pytest three times (the Makefile says what runs beside each): every test but these in
# several processes at once (pytest-xdist, `-n 4 --dist loadfile -m "not timing"`: most tests wait on real
# servers, and a module stays in one process, so its module-scoped servers start once); then the ones that
# judge a deadline or their own server's figures three modules at a time (`-n 3 -m "timing and not alone"`:
# they mostly wait out deadlines, and their bounds' slack scales with the contention
# tests/support/calibration.py measures); then the ones that load the machine (a soak, an overload, the
# hostile-client matrix) one at a time (`-m alone --alone-modules-only`), so that nothing else moves them. A test judging time
# carries the `timing` mark, takes the `timing` fixture or is in one of TIMING_MODULES; one needing the
# machine to itself is in ALONE_MODULES (an `alone` mark elsewhere stops the run). Plain `pytest` runs everything in one
# process, as always.

TIMING = "timing"
ALONE = "alone"
#: Modules whose timing tests load the machine (a soak, an overload, the hostile-client matrix): each runs
#: with nothing beside it. A test that only waits out deadlines or reads its own server's figures (a
#: worker's memory and threads: tests/reliability/test_faults.py) needs no more than the timing phase.
ALONE_MODULES = (
    "tests/reliability/test_admission.py",
    "tests/reliability/test_hostile.py",
    "tests/reliability/test_soak.py",
)
#: Tests that only measure a third-party server (waitress, werkzeug, granian): their rows of the framing
#: and hostile-client tables. `make framing` and `make hostile` run them, where those tables are made;
#: `make test` leaves them out (`-m "not survey"`), so they cost its run nothing.
SURVEY = "survey"
#: Modules whose tests judge time, or load the machine (which would move the others' timing).
#: A path here that is no longer a file stops the run.
TIMING_MODULES = (
    "tests/adapters/test_event_loop.py",
    "tests/adapters/gunicorn/test_connections.py",
    "tests/adapters/test_gunicorn.py",
    "tests/conformance/test_cancellation.py",
    "tests/conformance/test_limits.py",
    "tests/conformance/test_slow_clients.py",
    "tests/middleware/test_cancellation.py",
    "tests/middleware/test_span_export.py",
    "tests/middleware/test_timeout.py",
    "tests/reliability/test_admission.py",
    "tests/reliability/test_hostile.py",
    "tests/reliability/test_http2.py",
    "tests/reliability/test_idle_close.py",
    "tests/reliability/test_soak.py",
    "tests/timeouts/test_cancelling.py",
    "tests/timeouts/test_handoff.py",
    "tests/timeouts/test_watchdog.py",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{TIMING}: the test judges time or a process's figures; `make test` runs it after the others, in its own phase (tests/conftest.py)")
    config.addinivalue_line("markers", f"{ALONE}: the test loads the machine or judges its figures; `make test` runs it with nothing beside it (tests/conftest.py)")
    config.addinivalue_line("markers", "slow(reason): why the test takes long, in one line; the run's summary lists the slowest tests with it")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        config.pluginmanager.register(LongestFirst(), "funcwsgi-longest-first")
    config.addinivalue_line("markers", f"{SURVEY}: the test only measures a third-party server; `make framing`/`make hostile` run it (tests/conftest.py)")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--alone-modules-only",
        action="store_true",
        help="collect only ALONE_MODULES (tests/conftest.py): `make test`'s third phase, whose `-m alone` selects nothing else",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # Collecting all 5,000 tests to deselect all but 52 took 9 s of the third phase, with nothing beside it.
    if config.getoption("alone_modules_only") and collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        return collection_path.relative_to(config.rootpath).as_posix() not in ALONE_MODULES
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = [path for path in TIMING_MODULES + ALONE_MODULES if not (config.rootpath / path).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: TIMING_MODULES names {', '.join(missing)}, not a file (moved?): update the list")
    for item in items:
        module = item.nodeid.split("::")[0]
        if module in TIMING_MODULES or TIMING in getattr(item, "fixturenames", ()):
            item.add_marker(TIMING)
        if module in ALONE_MODULES and item.get_closest_marker(TIMING) is not None:
            item.add_marker(ALONE)
        elif item.get_closest_marker(ALONE) is not None and module not in ALONE_MODULES:
            # `make test`'s third phase collects ALONE_MODULES only (--alone-modules-only): the test would run nowhere.
            raise pytest.UsageError(f"{item.nodeid} is marked {ALONE}: add {module} to ALONE_MODULES in tests/conftest.py")


class LongestFirst:
    """Orders modules as `make test` wants pytest-xdist to hand them out (`--no-loadscope-reorder`).

    xdist gives whole modules (`--dist loadfile`) to its workers in the order they are collected.
    Its own order, the most tests first, can start a module that holds a long wait (the quick
    benchmark, the wheel builds, a broker's group joins) late, where it runs on alone after the
    other workers have finished. The longest jobs first keeps the end of a run short, so a module
    with a `slow` test starts first, then the rest by their number of tests, as xdist ordered them.
    Only in xdist's workers: a run in one process keeps pytest's order, which groups the tests that
    share a parametrized server.
    """

    @pytest.hookimpl(trylast=True)  # after pytest's own ordering and `-m`
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        longest_first(items)


def longest_first(items: list[pytest.Item]) -> None:
    tests_in: dict[str, int] = {}
    slow: set[str] = set()
    for item in items:
        module = item.nodeid.split("::")[0]
        tests_in[module] = tests_in.get(module, 0) + 1
        if item.get_closest_marker("slow") is not None:
            slow.add(module)

    modules = sorted(tests_in, key=lambda module: (module not in slow, -tests_in[module]))  # stable
    rank = {module: position for position, module in enumerate(modules)}
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])  # stable: a module's tests keep their order


# -- the slowest tests say why ----------------------------------------------------------------------
#: How many of the slowest tests the summary lists, with the reason their `slow` mark gives.
SLOWEST_SHOWN = 12
_took: dict[str, float] = {}
_why: dict[str, str] = {}


def pytest_runtest_setup(item: pytest.Item) -> None:
    mark = item.get_closest_marker("slow")
    if mark is not None and mark.args:
        item.user_properties.append(("slow", str(mark.args[0])))  # reaches the controller under pytest-xdist too


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Setup counts too: a module's servers start in its first test's setup.
    _took[report.nodeid] = _took.get(report.nodeid, 0.0) + report.duration
    for name, value in report.user_properties:
        if name == "slow":
            _why[report.nodeid] = str(value)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    slowest = sorted(_took.items(), key=lambda item: item[1], reverse=True)[:SLOWEST_SHOWN]
    if not slowest or slowest[0][1] < 5.0:
        return
    terminalreporter.section("the slowest tests, and why")
    for nodeid, seconds in slowest:
        why = _why.get(nodeid, "no reason given: add @pytest.mark.slow('why') to it or its module")
        terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}  ({why})")
