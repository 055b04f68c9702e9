"""What belongs to the call being served, reachable from anywhere in it.

A :class:`~contextvars.ContextVar` rather than a thread-local, so it follows
the call into ``async`` functions and into threads started with a copied
context (as the call-timeout layer does).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

#: The WSGI environ of the call being served, or ``None`` outside a call.
current_environ: ContextVar[dict[str, Any] | None] = ContextVar("funcwsgi.environ", default=None)
