"""The ``main(event, context)`` contract of Kyma <=3.12 and Kubeless runtimes."""

from __future__ import annotations

import json
from typing import Any

from .config import Config
from .request import FunctionRequest

JSON_TYPES = ("application/json", "application/cloudevents+json")


class Event(dict):  # type: ignore[type-arg]
    """The ``event`` mapping; a dict so ``event['data']`` works, with room for attributes."""


def build_context(config: Config, function_name: str) -> dict[str, Any]:
    """The ``context`` mapping; the same values for every call, so built once."""
    return {
        "function-name": config.func_name or function_name,
        "namespace": config.func_namespace,
        "timeout": config.server_call_timeout,
        "runtime": config.func_runtime,
        "memory-limit": config.func_memory_limit or _memory_limit(),
    }


def build_event(request: FunctionRequest) -> Event:
    data: Any = request.get_data()
    mimetype = request.mimetype
    if mimetype in JSON_TYPES and data:
        try:
            data = json.loads(data)
        except ValueError:
            pass  # the old runtimes handed undecodable JSON over as it came
    event = Event(data=data, extensions={"request": request})
    for name, value in request.headers.items():
        lowered = name.lower()
        if lowered.startswith("ce-"):
            event[lowered] = value
    return event


def _memory_limit() -> str:
    """The container's memory limit as the cgroup reports it; '' when unlimited."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as handle:
                value = handle.read().strip()
        except OSError:
            continue
        return "" if value == "max" else value
    return ""
