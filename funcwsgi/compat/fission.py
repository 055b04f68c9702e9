"""Placeholder while being written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Config
    from ..loader import LoadedFunction


def signal(config: Config) -> str | None:
    return None


def locate(config: Config) -> Config:
    return config


def load(config: Config) -> LoadedFunction:
    raise NotImplementedError


def invoker(loaded: LoadedFunction, config: Config) -> Any:
    raise NotImplementedError
