"""The public name of :mod:`funcwsgi.devtools.testing` (``from funcwsgi.testing import FunctionClient``)."""

from .devtools.testing import CloudEvent, FunctionClient, FunctionTestResponse

__all__ = ["CloudEvent", "FunctionClient", "FunctionTestResponse"]
