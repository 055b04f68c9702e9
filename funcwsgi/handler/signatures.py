"""The calling conventions a function may use, detected once from its parameters."""

from __future__ import annotations

import dis
import enum
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import LoadError

Res = TypeVar("Res")

#: How the runtime calls a function, chosen once for its signature: the call's environ in;
#: what the function returned, and the ``res`` object it was handed, out. Other platforms'
#: contracts hand none (``Invoker[None]``); ``main(req, res)`` does.
Invoker = Callable[[dict[str, Any]], tuple[Any, Res]]


class Signature(enum.Enum):
    REQ_RES = "req-res"  # main(req, res): the reworked API
    REQ = "req"  # main(req) -> response
    NONE = "none"  # main(): the request through sdk.get_request() or flask.request
    EVENT_CONTEXT = "event-context"  # main(event, context): Kyma <=3.12 and Kubeless
    ASGI = "asgi"  # handle(scope, receive, send): an ASGI app, as Knative's func-python serves


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
#: Names by which a function's body could reach its parameters without naming them.
_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec", "_getframe", "currentframe"})


def reads_parameter(function: Callable[..., Any], index: int) -> bool:
    """Whether ``function``'s own body may read its positional parameter number ``index``, from its bytecode.

    True when unsure (a callable object, ``*args`` passed on, a closure over the parameter, ``locals()``):
    the answer only says whether what reading it needs is worth importing at start, never whether it works.
    """
    code = getattr(inspect.unwrap(function), "__code__", None)
    if code is None:
        return True
    if index >= code.co_argcount:
        return bool(code.co_flags & inspect.CO_VARARGS)
    name = code.co_varnames[index]
    if name in code.co_cellvars or not _FRAME_READERS.isdisjoint(code.co_names):
        return True
    # Every load of a local is some LOAD_FAST* instruction; a fused one (3.13's LOAD_FAST_LOAD_FAST) loads two.
    for instruction in dis.get_instructions(code):
        if "LOAD_FAST" in instruction.opname:
            loaded = instruction.argval
            if loaded == name or (isinstance(loaded, tuple) and name in loaded):
                return True
    return False


def detect_signature(function: Callable[..., Any], forced: str | None, *, where: str) -> Signature:
    """The convention ``function`` uses; ``forced`` (HANDLER_SIGNATURE) wins."""
    if forced:
        return Signature(forced)
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        # Builtins and some C callables hide their signature; the new API is the safe guess.
        return Signature.REQ_RES
    positional = [p for p in parameters if p.kind in _POSITIONAL]
    required = [p for p in positional if p.default is inspect.Parameter.empty]
    if [p.name for p in positional] == list(ASGI_PARAMETERS):
        if not is_async(function):
            raise LoadError(f"{where} takes (scope, receive, send) but is not async def; an ASGI app is a coroutine function")
        return Signature.ASGI
    takes_varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)
    required_keywords = [
        p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    ]
    if required_keywords:
        raise LoadError(f"{where} has required keyword-only parameters ({', '.join(required_keywords)}); the runtime passes none")
    if len(required) > 2:
        names = ", ".join(p.name for p in required)
        raise LoadError(
            f"{where} takes {len(required)} required parameters ({names}); expected main(req, res), main(req), main() or main(event, context)"
        )
    count = len(positional) if takes_varargs is False else max(len(positional), 2)
    count = max(len(required), min(count, 2))
    if count == 2:
        return Signature.EVENT_CONTEXT if positional and positional[0].name == "event" else Signature.REQ_RES
    if count == 1:
        return Signature.REQ
    return Signature.NONE


ASGI_PARAMETERS = ("scope", "receive", "send")


def is_async(function: Callable[..., Any]) -> bool:
    """``async def``, an object whose ``__call__`` is, or a callable annotated to return an awaitable."""
    if inspect.iscoroutinefunction(function):
        return True
    # An instance whose __call__ is async (callable() says nothing about that).
    call = getattr(function, "__call__", None)  # noqa: B004
    if call is not None and inspect.iscoroutinefunction(call):
        return True
    try:
        returns = inspect.signature(function).return_annotation
    except (TypeError, ValueError):
        return False
    text = returns if isinstance(returns, str) else getattr(returns, "__name__", "") or repr(returns)
    return any(word in text for word in ("Awaitable", "Coroutine"))
