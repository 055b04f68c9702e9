"""What gunicorn's own ``--bind`` says, read against ``SERVER_HOST`` and ``SERVER_PORT``.

gunicorn's options are the user's words: they win over those settings'
defaults, and an explicitly set one that no listening address matches stops
the server. Reading them asks the environment which names were set and may
resolve a host name (``--bind localhost:8080``): that I/O is the gunicorn
adapter's, at start-up, never the configuration's.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping, Sequence
from typing import Any

from funcwsgi.config import Config, config_fields, lookup
from funcwsgi.errors import ConfigError

#: An address a server listens on: (host, port) for TCP, else its own words (``unix:/run/fn.sock``).
Listening = tuple[str, int] | str


def listening_config(config: Config, listening: Sequence[Listening], environ: Mapping[str, str] | None = None) -> Config:
    """``config`` with the address a server's own options made it listen on (gunicorn's ``--bind``).

    The server's options are the user's words and win over the defaults of
    ``SERVER_HOST`` and ``SERVER_PORT``; an explicitly set one (or an alias,
    such as a platform's ``PORT``) that no listening address matches is a
    contradiction: :class:`ConfigError`, naming both.
    """
    if environ is None:
        environ = os.environ
    tcp = [item for item in listening if not isinstance(item, str)]
    explicit: dict[str, tuple[str, Any]] = {}
    for item in config_fields():
        if item.name in ("server_host", "server_port"):
            found = lookup(item.metadata["spec"], environ)
            if found is not None:
                explicit[item.name] = (f"{found[0]}={found[1]!r}", getattr(config, item.name))

    def agrees(host: str, port: int) -> bool:
        wanted_host = explicit.get("server_host", (None, None))[1]
        wanted_port = explicit.get("server_port", (None, None))[1]
        return (wanted_host is None or wanted_host in _ip_addresses(host)) and (wanted_port is None or wanted_port == port)

    if explicit and not any(agrees(host, port) for host, port in tcp):
        said = " and ".join(words for words, _ in explicit.values())
        raise ConfigError(
            f"{said} {'contradict' if len(explicit) > 1 else 'contradicts'} gunicorn's bind "
            f"{', '.join(listening_words(item) for item in listening)}: bind where {'they say' if len(explicit) > 1 else 'it says'}, "
            f"or unset {'them' if len(explicit) > 1 else 'it'}"
        )
    if not tcp:
        return config
    host, port = next(((host, port) for host, port in tcp if agrees(host, port)), tcp[0])
    return config.replace(server_host=sorted(_ip_addresses(host))[0], server_port=port)


def listening_words(item: Listening) -> str:
    """An address as servers print it: ``127.0.0.1:8080``, ``[::]:8080``, ``unix:/run/fn.sock``."""
    if isinstance(item, str):
        return item
    host, port = item
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _ip_addresses(host: str) -> set[str]:
    """The IP addresses ``host`` stands for (a server may be told to bind a name such as localhost)."""
    if not host:  # gunicorn's ``--bind :8000``: every interface
        return {"0.0.0.0"}
    try:
        return {str(ipaddress.ip_address(host))}
    except ValueError:
        pass
    try:
        return {str(ipaddress.ip_address(info[4][0])) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except (OSError, ValueError):
        return {host}
