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
:func:`resolve`, from the platform's own signals only, in the order of
:data:`RECOGNITION_ORDER`; ``HANDLER_PLATFORM`` overrides. A function that
imports neither Flask nor bottle and comes from no other platform costs nothing
and never loads those modules. A new platform is one new module here, one
entry in :data:`RECOGNITION_ORDER` and one branch in :func:`contract_invoker`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..signatures import Invoker, Signature
from .cloudevents_lib import is_cloud_event, to_binary

if TYPE_CHECKING:
    from ..config import Config
    from ..loader import LoadedFunction

__all__ = [
    "RECOGNITION_ORDER",
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

#: The platforms recognised from their signals, in the order they are asked (docs/platforms.md).
RECOGNITION_ORDER = ("knative", "aws-lambda", "azure", "openfaas", "fission")
#: Platforms whose function files the runtime finds and loads itself (several functions, or a package).
OWN_LOADERS = frozenset({"azure", "knative", "fission", "openfaas"})

_warned: set[str] = set()


def uses_flask(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(FLASK_MODULES)


def uses_bottle(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(BOTTLE_MODULES)


def recognise(config: Config) -> tuple[str, str, list[str]]:
    """(platform, why, other platforms whose signals are present too) for ``config``'s function."""
    if config.handler_platform:
        return config.handler_platform, "HANDLER_PLATFORM", []
    from . import aws_lambda, azure, fission, knative, openfaas

    signals: dict[str, Callable[[Config], str | None]] = {
        "knative": knative.signal,
        "aws-lambda": aws_lambda.signal,
        "azure": azure.signal,
        "openfaas": openfaas.signal,
        "fission": fission.signal,
    }
    found = [(name, why) for name in RECOGNITION_ORDER if (why := signals[name](config))]
    if not found:
        return "funcwsgi", "", []
    return found[0][0], found[0][1], [name for name, _ in found[1:]]


def resolve(config: Config) -> Config:
    """``config`` with the platform chosen and the function's file located as that platform lays it out.

    Idempotent: a resolved config resolves to itself. Logs one line naming the
    platform and the signal that chose it, and warns once when another
    platform's signals are present too.
    """
    platform, why, others = recognise(config)
    if platform == "funcwsgi" or platform in ("kyma", "kubeless"):
        return config if config.handler_platform else config.replace(handler_platform=platform)
    from . import aws_lambda, azure, fission, knative, openfaas

    locators: dict[str, Callable[[Config], Config]] = {
        "aws-lambda": aws_lambda.locate,
        "azure": azure.locate,
        "openfaas": openfaas.locate,
        "fission": fission.locate,
        "knative": knative.locate,
    }
    resolved = locators[platform](config.replace(handler_platform=platform))
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
    platform = config.handler_platform
    if platform in OWN_LOADERS:
        from . import azure, fission, knative, openfaas

        loaders: dict[str, Callable[[Config], LoadedFunction]] = {
            "azure": azure.load, "knative": knative.load, "fission": fission.load, "openfaas": openfaas.load,
        }
        return loaders[platform](config)
    from ..loader import load_function as load_module_function

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
    ``main()`` without Flask), which :mod:`funcwsgi.function_app` calls itself.
    """
    platform = config.handler_platform
    if platform == "aws-lambda":
        from . import aws_lambda

        return aws_lambda.invoker(loaded, config, function)
    if platform == "openfaas":
        from . import openfaas

        return openfaas.invoker(loaded, config, function)
    if platform == "azure":
        from . import azure

        return azure.invoker(loaded, config)
    if platform == "knative":
        from . import knative

        return knative.invoker(loaded, config)
    if platform == "fission":
        from . import fission

        return fission.invoker(loaded, config)
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
