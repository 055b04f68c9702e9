"""A function's own ``adapters`` package (a ports-and-adapters layout), not funcwsgi's."""

KIND = "the function's own adapters"
