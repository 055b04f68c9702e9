"""Other platforms' contracts: which one a function was written for, chosen once at load time.

This package is the one place the core reaches the contracts through; each
contract is one module beside it:

- :mod:`.legacy`: ``main(event, context)`` of Kyma <=3.12 and Kubeless;
- :mod:`.bottle`: bottle's request names in that event, and bottle's own
  request and response for functions that import bottle;
- :mod:`.flask`: Kyma python314's ``flask.request`` inside ``main()``;
- :mod:`.functions_framework`: Google's ``hello(request)`` with a ``flask.Request``;
- :mod:`.cloudevents_lib`: the cloudevents library's events, either generation;
- :mod:`.aws_lambda`, :mod:`.azure`, :mod:`.openfaas`, :mod:`.fission`,
  :mod:`.knative`: those platforms' functions, laid out as their own tooling
  lays them out (docs/platforms.md);
- :mod:`.asgi_app`: an ASGI app as the function, Knative func-python's ``handle(scope, receive, send)``;
  the one ASGI bridge, which :mod:`.knative` calls through too.

Which platform a function was written for is decided here, once, by
:func:`resolve`, from the platform's own signals only, in the order of their
:attr:`Platform.precedence`; ``HANDLER_PLATFORM`` overrides. A function that
imports neither Flask nor bottle and comes from no other platform costs nothing
and never loads those modules. Every platform is declared once, in
:data:`PLATFORMS`: a new platform is one new module here and one record there.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..config import PLATFORMS as PLATFORM_NAMES
from ..handler.signatures import Invoker, Signature
from . import signals

if TYPE_CHECKING:
    from ..config import Config
    from ..handler.loader import LoadedFunction

__all__ = [
    "PLATFORMS",
    "RECOGNITION_ORDER",
    "Platform",
    "TEMPLATES",
    "contract_invoker",
    "is_cloud_event",
    "load_function",
    "resolve",
    "to_binary",
    "uses_bottle",
    "uses_flask",
]

log = logging.getLogger("funcwsgi.compat")

#: Modules whose import means the function expects a Flask request context.
FUNCTIONS_FRAMEWORK_MODULES = frozenset({"functions_framework"})
FLASK_MODULES = frozenset({"flask"}) | FUNCTIONS_FRAMEWORK_MODULES
BOTTLE_MODULES = frozenset({"bottle"})


# A NamedTuple, not a frozen dataclass: dataclasses compiles six generated methods at every start, about
# 4 million instructions a class; a NamedTuple costs a tenth of that (issue 44).
class Platform(NamedTuple):
    """One platform whose functions are called with its contract: everything funcwsgi knows of it, in one place.

    A platform with a ``module`` (under this package) is recognised from its
    signals: :mod:`.signals` has a function of the module's name (why the
    function is that platform's, or ``None``), so that recognising never
    imports a contract; the module has ``locate(config)`` (where its files are), and
    ``invoker(loaded, config, function)`` (the contract's call); with
    ``own_loader``, ``load(config)`` too (several functions, or a package).
    A platform without a module is called through funcwsgi's own loader and
    the parameters of its function (``main(event, context)`` for Kyma <=3.12
    and Kubeless).
    """

    title: str
    page: str  # its page in docs/
    #: What recognises it, as docs/platforms.md says (tests/compat/test_platforms.py checks the table).
    signals: str
    module: str | None = None
    #: Host variables that alone mark it, as its host sets them (nodejs26/lib/platforms/registry.js names the same).
    variables: tuple[str, ...] = ()
    #: Its place in the order the signals are asked, first first; None: HANDLER_PLATFORM or the parameters only.
    precedence: int | None = None
    own_loader: bool = False
    #: The `funcwsgi create` template that writes a function in its layout, if any.
    template: str | None = None

    def contract(self) -> Any:
        """Its module (imported only now: recognising platforms must not import every contract)."""
        assert self.module is not None, f"{self.title} has no module of its own"
        return importlib.import_module(f"{__name__}.{self.module}")


_PARAMETERS = "none of the above: the parameters decide (`main(req, res)`, `main(req)`, `main()`, `main(event, context)`)"

#: Every platform HANDLER_PLATFORM names (docs/platforms.md), in config.PLATFORMS's order.
PLATFORMS: dict[str, Platform] = {
    "funcwsgi": Platform("funcwsgi", "handler-api.md", _PARAMETERS),
    "kyma": Platform("Kyma", "migration-kyma-legacy.md", _PARAMETERS),
    "kubeless": Platform("Kubeless", "migration-kubeless.md", _PARAMETERS),
    "aws-lambda": Platform(
        "AWS Lambda", "migration-aws-lambda.md",
        "`_HANDLER`, `AWS_LAMBDA_FUNCTION_NAME` or `AWS_EXECUTION_ENV`; or a SAM `template.yaml` declaring an `AWS::Serverless::Function`",
        module="aws_lambda", precedence=2, template="aws-lambda", variables=("_HANDLER", "AWS_LAMBDA_FUNCTION_NAME", "AWS_EXECUTION_ENV"),
    ),
    "azure": Platform(
        "Azure Functions", "migration-azure.md",
        "`FUNCTIONS_WORKER_RUNTIME=python`; or `host.json` beside `function_app.py` or `*/function.json`",
        module="azure", precedence=3, own_loader=True, template="azure", variables=("FUNCTIONS_WORKER_RUNTIME",),
    ),
    "openfaas": Platform(
        "OpenFaaS", "migration-openfaas.md",
        "`function/handler.py` defining `handle` (with or without the watchdog's `fprocess`/`mode=http`)",
        module="openfaas", precedence=4, own_loader=True, template="openfaas",
    ),
    "fission": Platform(
        "Fission", "migration-fission.md",
        "`USERFUNCVOL`, or `/userfunc` existing while no `handler.py` does",
        module="fission", precedence=5, own_loader=True, template="fission", variables=("USERFUNCVOL",),
    ),
    "knative": Platform(
        "Knative func-python", "migration-knative.md",
        "`function/func.py` (or `function/__init__.py`) defining `new` or `handle`, together with `LISTEN_ADDRESS` or a `func.yaml` with `runtime: python`",
        module="knative", precedence=1, own_loader=True, template="knative",
    ),
}
assert tuple(PLATFORMS) == PLATFORM_NAMES, "config.PLATFORMS and compat.PLATFORMS name the same platforms"

#: The platforms recognised from their signals, in the order they are asked.
RECOGNITION_ORDER = tuple(
    sorted((name for name, platform in PLATFORMS.items() if platform.precedence is not None), key=lambda name: PLATFORMS[name].precedence or 0)
)
#: The `funcwsgi create` templates of the platforms.
TEMPLATES = tuple(platform.template for platform in PLATFORMS.values() if platform.template)

_warned: set[str] = set()


def is_cloud_event(value: Any) -> bool:
    """Whether ``value`` is a CloudEvent, funcwsgi's or the ``cloudevents`` library's.

    Neither kind can exist before a module that makes it is imported (by the
    function, or by the CloudEvents layer for an event that arrived), so until
    then the answer imports nothing: a plain function never loads CloudEvents.
    """
    if "funcwsgi.cloudevents" not in sys.modules and "cloudevents" not in sys.modules:
        return False
    from .cloudevents_lib import is_cloud_event as check

    return check(value)


def to_binary(event: Any) -> tuple[dict[str, str], bytes]:
    """``event`` (funcwsgi's or the library's) in binary content mode: (its headers, its data)."""
    from .cloudevents_lib import to_binary as encode

    return encode(event)


def uses_flask(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(FLASK_MODULES)


def uses_bottle(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(BOTTLE_MODULES)


def recognise(config: Config) -> tuple[str, str, list[str]]:
    """(platform, why, other platforms whose signals are present too) for ``config``'s function."""
    if config.handler_platform:
        return config.handler_platform, "HANDLER_PLATFORM", []
    found = [(name, why) for name in RECOGNITION_ORDER if (why := getattr(signals, PLATFORMS[name].module or "")(config))]
    if not found:
        return "funcwsgi", "", []
    return found[0][0], found[0][1], [name for name, _ in found[1:]]


def resolve(config: Config) -> Config:
    """``config`` with the function's files found, the platform chosen, and the file located as that platform lays it out.

    The start-up half of reading the settings: what depends on the files (the
    function's folder, the installed ``OTEL_PROPAGATORS``) is found and
    checked here, since :meth:`Config.from_env` does no I/O.

    Idempotent: a resolved config resolves to itself. Logs one line naming the
    platform and the signal that chose it, and warns once when another
    platform's signals are present too.
    """
    from ..handler.loader import find_sources
    from ..middleware.tracing import check_propagators

    check_propagators(config.otel_propagators)
    config = find_sources(config)
    platform, why, others = recognise(config)
    if PLATFORMS[platform].module is None:
        return config if config.handler_platform else config.replace(handler_platform=platform)
    resolved: Config = PLATFORMS[platform].contract().locate(config.replace(handler_platform=platform))
    if others:
        _once(
            f"ambiguous:{platform}",
            logging.WARNING,
            f"Signals of several platforms ({', '.join([platform, *others])}): calling the function with the {platform} contract "
            f"({why}); set HANDLER_PLATFORM to one of {', '.join(others)} to choose another",
        )
    return resolved


def load_function(config: Config) -> LoadedFunction:
    """The function ``config`` names, loaded as its platform lays it out (``config`` already resolved)."""
    platform = PLATFORMS[config.handler_platform or "funcwsgi"]
    if platform.own_loader:
        own: LoadedFunction = platform.contract().load(config)
        return own
    from ..handler.loader import load_function as load_module_function

    loaded = load_module_function(config)
    _warn_if_ambiguous(loaded, config)
    return loaded


def _warn_if_ambiguous(loaded: LoadedFunction, config: Config) -> None:
    """One line when the function's own shape points at another platform than the one chosen."""
    if config.handler_platform != "funcwsgi":
        return
    if loaded.signature is Signature.EVENT_CONTEXT and (loaded.name == "lambda_handler" or loaded.path.endswith("lambda_function.py")):
        _once(
            "ambiguous:event-context",
            logging.WARNING,
            f"{loaded.name}(event, context) in {loaded.path} is called with the Kyma <=3.12/Kubeless contract "
            "(no AWS Lambda signal); set HANDLER_PLATFORM=aws-lambda to call it as an AWS Lambda handler",
        )
    if "azure" in loaded.imports and loaded.signature is Signature.REQ:
        _once(
            "ambiguous:azure",
            logging.WARNING,
            f"{loaded.name}(req) in {loaded.path} imports azure.functions but has no Azure Functions signal (host.json, "
            "FUNCTIONS_WORKER_RUNTIME); called with funcwsgi's main(req); set HANDLER_PLATFORM=azure to call it with an HttpRequest",
        )


def _once(key: str, level: int, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    log.log(level, message)


def contract_invoker(loaded: LoadedFunction, config: Config, function: Callable[..., Any]) -> Invoker[None] | None:
    """The invoker of the other platform's contract ``function`` was written for, else ``None``.

    ``None`` means funcwsgi's own contract (``main(req, res)``, ``main(req)``,
    ``main()`` without Flask), which :mod:`funcwsgi.handler.calling` calls itself.
    """
    platform = PLATFORMS[config.handler_platform or "funcwsgi"]
    if platform.module is not None:
        invoker: Invoker[None] = platform.contract().invoker(loaded, config, function)
        return invoker
    signature = loaded.signature
    if signature is Signature.ASGI:
        from . import asgi_app

        return asgi_app.invoker(loaded)
    if signature in (Signature.REQ, Signature.NONE) and uses_flask(loaded.imports):
        if not loaded.imports.isdisjoint(FUNCTIONS_FRAMEWORK_MODULES) or config.handler_framework_signature:
            from . import functions_framework

            return functions_framework.invoker(loaded, function, config.handler_framework_signature)
        from . import flask

        return flask.invoker(loaded, function)
    if signature is Signature.EVENT_CONTEXT:
        from .legacy import event_context_invoker

        call = event_context_invoker(loaded, config, function)
        if uses_bottle(loaded.imports):
            from .bottle import bottle_invoker

            return bottle_invoker(lambda environ: call(environ)[0])
        return call
    return None
