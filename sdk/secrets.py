"""Secrets read from files, as the platforms mount them (``sdk.secret``).

A secret is the text of the file ``name`` in the first of the folders
``HANDLER_SECRETS_PATH`` lists. Kubernetes rotates a mounted secret by
swapping the folder's ``..data`` link, so a file is stat-ed at each read and
read again when its inode, size or modification time changed; an unchanged
file costs one ``stat``. No value is ever logged or put in an error message.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from funcwsgi.current import active_config


class SecretNotFound(LookupError):
    """No folder of ``HANDLER_SECRETS_PATH`` holds the secret (the message names it and every folder)."""


#: path -> ((inode, size, mtime), text): what was read last, to read a file again only when it changed.
_cache: dict[str, tuple[tuple[int, int, int], str]] = {}
_lock = threading.Lock()


def read_secret(name: str, folders: Sequence[str] | None = None) -> str:
    """The text of the file ``name`` in the first of ``folders`` (default ``HANDLER_SECRETS_PATH``) holding it.

    One trailing newline (``\\n`` or ``\\r\\n``) is removed, as ``echo`` and
    editors leave one. Raises :class:`SecretNotFound` naming the secret and
    every folder searched, and ``ValueError`` for a name that is not a plain
    file name.
    """
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"secret name {name!r} is invalid: expected a file name such as 'db-password', without '/'")
    searched = tuple(active_config().handler_secrets_path if folders is None else folders)
    for folder in searched:
        path = os.path.join(folder, name)
        try:
            status = os.stat(path)
        except OSError:
            continue
        key = (status.st_ino, status.st_size, status.st_mtime_ns)
        cached = _cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        text = _read(path, name)
        with _lock:
            _cache[path] = (key, text)
        return text
    if not searched:
        raise SecretNotFound(f"secret {name!r} not found: HANDLER_SECRETS_PATH is empty, so no folder is searched")
    raise SecretNotFound(f"secret {name!r} not found: no file {name!r} in {', '.join(searched)} (HANDLER_SECRETS_PATH)")


def _read(path: str, name: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as file:
            text = file.read()
    except UnicodeDecodeError:
        raise ValueError(f"secret {name!r} at {path} is not UTF-8 text") from None
    except OSError as error:
        raise SecretNotFound(f"secret {name!r} at {path} cannot be read: {error.strerror}") from None
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text
