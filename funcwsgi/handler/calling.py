"""The innermost WSGI app: calls the user's function and sends what it produced."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from types import CoroutineType
from typing import TYPE_CHECKING, Any, cast

from .. import request as requests
from ..bodies import ReleasingBody
from ..compat import contract_invoker
from ..config import Config
from ..current import current_environ
from ..replies import Reply
from ..request import REQUEST_KEY, FunctionRequest
from ..response import FunctionResponse, is_loaded_instance, send
from .loader import LoadedFunction
from .signatures import Invoker, Signature, is_async, reads_parameter

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment
    from werkzeug.exceptions import HTTPException

#: werkzeug parses a form only for a request with a content type (``Request.want_form_data_parsed``): without
#: one no file was uploaded, and a request's ``__dict__``, built on first reading (about 400 instructions a
#: call, ``python -m bench.edge_calls --count``), is not built just to look for them.
CONTENT_TYPE = "CONTENT_TYPE"

class FunctionApp:
    """Calls the function with the arguments its signature asks for.

    The invoker for the signature is chosen once, here, so a call does no
    inspection at all.
    """

    def __init__(self, loaded: LoadedFunction, config: Config) -> None:
        self.loaded = loaded
        self.invoke = make_invoker(loaded, config)
        #: Awaits a coroutine the function returned, the call's environ given (an async def function's, on every call).
        self.awaiting: Callable[[Any, WSGIEnvironment], Any] = self.first_coroutine

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        # The request-id layer has made it the current environ already, unless the stack lacks it.
        token = None if current_environ.get() is environ else current_environ.set(environ)
        try:
            result, res = self.invoke(environ)
            if type(result) is CoroutineType:  # an async def function's (or a plain callable's that returned one)
                result = self.awaiting(result, environ)
        except Exception as error:
            # abort(404), bad JSON: only werkzeug makes these, so werkzeug is imported if this is one.
            if not is_loaded_instance(error, "werkzeug.exceptions", "HTTPException"):
                raise
            return http_error(cast("HTTPException", error), environ, start_response)
        finally:
            if token is not None:
                current_environ.reset(token)
        body = send(result, res, environ, start_response)
        request = environ.get(REQUEST_KEY)
        if request is None:
            return body
        # The request and the environ refer to each other: a cycle only the garbage collector frees,
        # whose passes grow with the calls in flight (on the loop, hundreds). Parted when the answer
        # is complete, a call's objects go as soon as the server is done with them.
        if type(body) is list:
            del environ[REQUEST_KEY]  # release(), inlined for the commonest answer: no files were uploaded
            if CONTENT_TYPE in environ and "files" in request.__dict__:  # a form was parsed (maybe with no file)
                request.close()
            return body
        return ReleasingBody(body, partial(release, environ, request))

    def first_coroutine(self, coroutine: Any, environ: WSGIEnvironment) -> Any:
        """The first coroutine awaited: the awaiter is made (asyncio and greenlet are imported only now, a sync
        function's server never loads them), and awaits it and every later one."""
        from ..eventloop.coroutines import CoroutineAwaiter

        self.awaiting = CoroutineAwaiter(self.loaded.name).run
        return self.awaiting(coroutine, environ)

    def __repr__(self) -> str:
        return f"FunctionApp({self.loaded.name!r}, {self.loaded.signature.value})"


def release(environ: WSGIEnvironment, request: FunctionRequest) -> None:
    """End the call's hold on its request: out of the environ, and any uploaded files werkzeug spooled closed."""
    if environ.get(REQUEST_KEY) is request:
        del environ[REQUEST_KEY]
    if CONTENT_TYPE in environ and request.__dict__.get("files"):
        request.close()


def make_invoker(loaded: LoadedFunction, config: Config) -> Invoker[FunctionResponse | None]:
    """How a call calls the function. An ``async def`` function called by funcwsgi's own contract returns its
    coroutine, which :class:`FunctionApp` awaits; another platform's contract calls one that awaits it itself."""
    function = loaded.function
    awaits = function
    if is_async(function):
        from ..eventloop.coroutines import coroutine_caller

        awaits = coroutine_caller(function, loaded.name)
    contract = contract_invoker(loaded, config, awaits)
    if contract is not None:
        return contract
    signature = loaded.signature
    if signature in (Signature.REQ, Signature.REQ_RES) and reads_parameter(loaded.function, 0):
        # A function that reads its request needs werkzeug at its first call: imported now, before the server
        # forks and before any call's timeout runs, as the function's own imports are (funcwsgi/request.py).
        requests.with_werkzeug()
    if signature is Signature.REQ:

        def call_req(environ: dict[str, Any]) -> tuple[Any, FunctionResponse | None]:
            return function(requests.make_request(environ)), None

        return call_req
    if signature is Signature.NONE:

        def call_none(environ: dict[str, Any]) -> tuple[Any, FunctionResponse | None]:
            return function(), None

        return call_none

    def call_req_res(environ: dict[str, Any]) -> tuple[Any, FunctionResponse | None]:
        res = FunctionResponse()
        return function(requests.make_request(environ), res), res

    return call_req_res


def http_error(error: HTTPException, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
    """An HTTP error the function raised (``abort(404)``, bad JSON) as a short text response."""
    from werkzeug.wrappers import Response

    if isinstance(error.response, Response):  # abort(response): the function's own response
        return error.response(environ, start_response)
    text = f"{error.name}: {error.description}" if error.description else str(error.name)
    # The error's own headers (Allow, WWW-Authenticate, ...) go along; the reply sets the content ones.
    headers = [(k, v) for k, v in error.get_headers(environ) if k.lower() not in ("content-type", "content-length")]
    return Reply(error.code or 500, text, headers=headers)(environ, start_response)
