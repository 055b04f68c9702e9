"""The public name of :mod:`funcwsgi.devtools.function_client` (``from funcwsgi.testing import FunctionClient``)."""

from .devtools.function_client import CloudEvent, FunctionClient, FunctionTestResponse

__all__ = ["CloudEvent", "FunctionClient", "FunctionTestResponse"]
