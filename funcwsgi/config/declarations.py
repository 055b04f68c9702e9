"""How a setting is declared: its names, parser, description and compatibility aliases.

Each field of :class:`funcwsgi.config.Config` is made by :func:`setting`;
:func:`lookup` finds which of a setting's names the environment sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, NamedTuple

from .parsers import Parser


# NamedTuples, not frozen dataclasses: dataclasses compiles six generated methods for each at every
# start, about 4 million instructions a class; a NamedTuple costs a tenth of that (issue 44).
class Alias(NamedTuple):
    """Another environment name for a setting, read when the main name is unset."""

    name: str
    origin: str  # which platform used this name, for the docs
    parse: Parser | None = None  # when the alias has another unit, e.g. megabytes
    expected: str = ""


class Spec(NamedTuple):
    env: str
    parse: Parser
    expected: str
    description: str
    aliases: tuple[Alias, ...] = ()
    default_doc: str | None = None
    secret: bool = False  # shown masked by `funcwsgi settings`


def setting(
    env: str,
    default: Any,
    parse: Parser,
    expected: str,
    description: str,
    *,
    aliases: tuple[Alias, ...] = (),
    default_doc: str | None = None,
    secret: bool = False,
) -> Any:
    spec = Spec(env, parse, expected, description, aliases, default_doc, secret)
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata={"spec": spec})
    return field(default=default, metadata={"spec": spec})


KYMA = "Kyma python314"
KUBELESS = "Kyma <=3.12 / Kubeless"
FUNCTIONS_FRAMEWORK = "Functions Framework"
AWS_LAMBDA = "AWS Lambda"
AZURE = "Azure Functions"
OPENFAAS = "OpenFaaS watchdog"
FISSION = "Fission"
KNATIVE = "Knative func-python"


def lookup(spec: Spec, environ: Mapping[str, str]) -> tuple[str, str, Parser, str] | None:
    """The first of the setting's names that is set: main name, then aliases in order."""
    raw = environ.get(spec.env)
    if raw is not None:
        return spec.env, raw, spec.parse, spec.expected
    for alias in spec.aliases:
        raw = environ.get(alias.name)
        if raw is not None:
            return alias.name, raw, alias.parse or spec.parse, alias.expected or spec.expected
    return None
