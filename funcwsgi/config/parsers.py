"""The parsers of the settings' values: each takes the raw text and raises ``ValueError``.

:meth:`funcwsgi.config.Config.from_env` turns that ``ValueError`` into a
:class:`~funcwsgi.errors.ConfigError` naming the variable, the value and what
was expected.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from typing import Any

Parser = Callable[[str], Any]


def parse_str(raw: str) -> str:
    return raw


def parse_optional_str(raw: str) -> str | None:
    return raw or None


def parse_port(raw: str) -> int:
    port = int(raw.strip())
    if not 1 <= port <= 65535:
        raise ValueError(raw)
    return port


def parse_port_or_zero(raw: str) -> int:
    return 0 if raw.strip() == "0" else parse_port(raw)


def positive_int(raw: str) -> int:
    number = int(raw.strip())
    if number < 1:
        raise ValueError(raw)
    return number


def non_negative_int(raw: str) -> int:
    number = int(raw.strip())
    if number < 0:
        raise ValueError(raw)
    return number


def optional_non_negative_int(raw: str) -> int | None:
    return non_negative_int(raw) if raw.strip() else None


def positive_float(raw: str) -> float:
    number = float(raw.strip())
    if not number > 0 or number != number or number == float("inf"):
        raise ValueError(raw)
    return number


def non_negative_float(raw: str) -> float:
    number = float(raw.strip())
    if not number >= 0 or number == float("inf"):
        raise ValueError(raw)
    return number


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def optional_bool(raw: str) -> bool | None:
    return parse_bool(raw) if raw.strip() else None


def parse_bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(raw)


def parse_mapping(raw: str) -> dict[str, str]:
    """A JSON object, or ``k=v,k2=v2`` as Kubernetes label selectors write it."""
    text = raw.strip()
    if not text:
        return {}
    if text.startswith("{"):
        loaded = json.loads(text)
        if not isinstance(loaded, dict):
            raise ValueError(raw)
        return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in loaded.items()}
    result: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(raw)
        result[key.strip()] = value.strip()
    return result


def parse_folder(raw: str) -> str:
    """A folder: set but empty is refused rather than read as the working directory."""
    if not raw:
        raise ValueError(raw)
    return raw


def parse_path(raw: str) -> str:
    path = raw.strip()
    if not path.startswith("/") or any(c.isspace() for c in path):
        raise ValueError(raw)
    return path


def parse_host(raw: str) -> str:
    """An IP address to bind to: every server accepts those (granian accepts nothing else)."""
    return str(ipaddress.ip_address(raw.strip()))


_QUANTITY = re.compile(r"\d+(\.\d+)?([KMGTPE]i?|k|m)?")


def parse_quantity(raw: str) -> str:
    """A Kubernetes memory quantity such as ``128Mi`` or ``1G``; empty means unset."""
    value = raw.strip()
    if value and not _QUANTITY.fullmatch(value):
        raise ValueError(raw)
    return value


_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:\d{1,5})?|\*")
#: An HTTP header name (RFC 9110 token).
TOKEN = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")


def parse_origins(raw: str) -> tuple[str, ...]:
    """Origins as browsers send them (``https://shop.example``, no path), or ``*``."""
    origins = parse_list(raw)
    if not all(_ORIGIN.fullmatch(origin) for origin in origins):
        raise ValueError(raw)
    return origins


def parse_header_names(raw: str) -> tuple[str, ...]:
    names = parse_list(raw)
    if not all(name == "*" or TOKEN.fullmatch(name) for name in names):
        raise ValueError(raw)
    return names


def parse_list(raw: str) -> tuple[str, ...]:
    """Comma-separated items, blanks dropped: ``"a, b,"`` is ``("a", "b")``."""
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def parse_folders(raw: str) -> tuple[str, ...]:
    """``:``-separated absolute folder paths, as ``PATH`` writes them; blanks dropped."""
    folders = tuple(item.strip() for item in raw.split(":") if item.strip())
    if not all(folder.startswith("/") for folder in folders):
        raise ValueError(raw)
    return folders


def parse_methods(raw: str) -> tuple[str, ...]:
    methods = tuple(item.upper() for item in parse_list(raw))
    if not all(method.isalpha() for method in methods):
        raise ValueError(raw)
    return methods


def parse_brokers(raw: str) -> tuple[str, ...]:
    brokers = parse_list(raw)
    for broker in brokers:
        host, sep, port = broker.rpartition(":")
        if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValueError(raw)
    return brokers


def choice(*names: str) -> Parser:
    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in names:
            raise ValueError(raw)
        return value

    return parse


def optional_choice(*names: str) -> Parser:
    inner = choice(*names)

    def parse(raw: str) -> str | None:
        return inner(raw) if raw.strip() else None

    return parse


def megabytes(raw: str) -> int:
    return int(non_negative_float(raw) * 1024 * 1024)


#: The longest duration a setting takes: about eleven days. Longer ones overflow what servers
#: and the system calls under them take (poll()'s milliseconds in a C int: 24.8 days; werkzeug's
#: and granian's clocks), and mean nothing for a call; 0 is how a timeout is turned off.
MAX_SECONDS = 1_000_000


def seconds(raw: str) -> float:
    """A duration: a non-negative number of seconds, at most :data:`MAX_SECONDS`."""
    number = non_negative_float(raw)
    if number > MAX_SECONDS:
        raise ValueError(raw)
    return number


def positive_seconds(raw: str) -> float:
    """A duration that cannot be zero: a positive number of seconds, at most :data:`MAX_SECONDS`."""
    number = positive_float(raw)
    if number > MAX_SECONDS:
        raise ValueError(raw)
    return number
