"""The lines a server prints once when it starts, before it serves."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

from .config import Config

T = TypeVar("T")

_printed = False


def startup_lines(config: Config) -> list[str]:
    lines = [f"Importing function sources from {config.handler_path}:{config.handler_function_name}"]
    if config.trace_collector_endpoint:
        lines.append(f"Tracing configured with endpoint {config.trace_collector_endpoint}")
    else:
        lines.append("Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set")
    if config.publisher_proxy_address:
        lines.append(f"Publisher Proxy available on address {config.publisher_proxy_address}")
    else:
        lines.append("Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set")
    lines.append(f"Starting {config.func_runtime} server {config.server_host}:{config.server_port}")
    return lines


def print_startup_lines(config: Config, loader: Callable[[], T]) -> T:
    """Print the start-up lines once per server around ``loader``, and return what it made.

    The first line says which file is imported, so it comes before the import;
    the others only once the function has loaded, so a function that fails to
    load never prints "Starting". A server that forks workers prints the lines
    in its master; the flag is inherited by the workers, which stay quiet.
    """
    global _printed
    if _printed:
        return loader()
    lines = startup_lines(config)
    _write(lines[:1])
    made = loader()
    _printed = True
    _write(lines[1:])
    return made


def _write(lines: list[str]) -> None:
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()


def mark_printed() -> None:
    global _printed
    _printed = True
