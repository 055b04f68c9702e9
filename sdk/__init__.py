"""What a function imports: ``import sdk``.

Importable and usable without a server, so a function's unit tests can call
it. Outside a call, :func:`get_request` returns ``None``.
"""

from __future__ import annotations

from funcwsgi.context import current_environ
from funcwsgi.request import FunctionRequest, get_or_create_request

__all__ = ["get_request"]


def get_request() -> FunctionRequest | None:
    """The request of the call being served, or ``None`` outside a call."""
    environ = current_environ.get()
    if environ is None:
        return None
    return get_or_create_request(environ)
