"""Custom resources checked offline against their projects' own CRD schemas (vendored in tests/schemas/).

A CRD's ``openAPIV3Schema`` is a structural schema with Kubernetes'
extensions; :func:`validator` turns it into a JSON Schema the way the API
server reads it with strict field validation (what ``kubectl apply`` asks
for): unknown fields are errors unless ``x-kubernetes-preserve-unknown-fields``
says otherwise, ``x-kubernetes-int-or-string`` takes either, and every CEL rule
(``x-kubernetes-validations``) is checked by its Python equivalent in
:data:`CEL_RULES`. A rule with no equivalent fails the check, so a schema
re-vendored with a new rule cannot pass unread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError, validators

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
KNATIVE_SERVICE = SCHEMAS / "knative-serving-service-v1.yaml"
KYMA_FUNCTION = SCHEMAS / "kyma-serverless-function-v1alpha2.yaml"
# The published Function schema lists the runtimes Kyma ships today; the
# runtime API rework this project implements (docs/kyma.md) adds these two.
KYMA_REWORK_RUNTIMES = ("python314", "nodejs26")


def _has(value: Any, key: str) -> bool:
    return isinstance(value, dict) and key in value


def _trimmed_nonempty(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


_KYMA_RESERVED_ENV = ["FUNC_RUNTIME", "FUNC_HANDLER", "FUNC_PORT", "FUNC_HANDLER_SOURCE", "FUNC_HANDLER_DEPENDENCIES", "MOD_NAME", "NODE_PATH", "PYTHONPATH"]

#: CEL rule (as published) -> the same predicate on the value the rule's ``self`` is.
CEL_RULES: dict[str, Callable[[Any], bool]] = {
    "!(self.exists(e, e.startsWith('serverless.kyma-project.io/')))": lambda m: not any(k.startswith("serverless.kyma-project.io/") for k in m),
    "!(self.exists(e, e=='proxy.istio.io/config'))": lambda m: "proxy.istio.io/config" not in m,
    "(self.all(e, !(e.name in [" + ",".join(f"'{n}'" for n in _KYMA_RESERVED_ENV) + "])))": lambda items: all(e.get("name") not in _KYMA_RESERVED_ENV for e in items),
    "self.all(e, size(e)<64)": lambda m: all(len(k) < 64 for k in m),
    "has(self.profile) && !has(self.resources) || !has(self.profile) && has(self.resources)": lambda o: _has(o, "profile") != _has(o, "resources"),
    "(!has(self.profile) || self.profile in ['local-dev','slow','normal','fast'])": lambda o: not _has(o, "profile") or o["profile"] in ("local-dev", "slow", "normal", "fast"),
    "(!has(self.profile) || self.profile in ['XS','S','M','L','XL'])": lambda o: not _has(o, "profile") or o["profile"] in ("XS", "S", "M", "L", "XL"),
    "self.trim().size() != 0": _trimmed_nonempty,
    "has(self.baseDir) && (self.baseDir.trim().size() != 0)": lambda o: _has(o, "baseDir") and _trimmed_nonempty(o["baseDir"]),
    "has(self.reference) && (self.reference.trim().size() != 0)": lambda o: _has(o, "reference") and _trimmed_nonempty(o["reference"]),
    "has(self.gitRepository) && !has(self.inline) || !has(self.gitRepository) && has(self.inline)": lambda o: _has(o, "gitRepository") != _has(o, "inline"),
    "!has(self.labels) && !has(self.annotations)": lambda o: not _has(o, "labels") and not _has(o, "annotations"),
}


def _cel(validator: Any, rules: list[dict[str, str]], instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    for rule in rules:
        check = CEL_RULES.get(rule["rule"])
        if check is None:
            yield ValidationError(f"CEL rule {rule['rule']!r} has no Python equivalent in tests/support/crd_schemas.py")
        elif not check(instance):
            yield ValidationError(f"{rule.get('message', rule['rule'])} (CEL: {rule['rule']})")


_Validator = validators.extend(Draft202012Validator, {"x-kubernetes-validations": _cel})


def to_json_schema(node: Any) -> Any:
    """A structural schema as a strict JSON Schema (see the module's description)."""
    if isinstance(node, list):
        return [to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    result = {key: to_json_schema(value) for key, value in node.items() if key not in ("properties", "additionalProperties", "items")}
    if "properties" in node:
        result["properties"] = {name: to_json_schema(value) for name, value in node["properties"].items()}
    if "items" in node:
        result["items"] = to_json_schema(node["items"])
    if "additionalProperties" in node:
        extra = node["additionalProperties"]
        result["additionalProperties"] = to_json_schema(extra) if isinstance(extra, dict) else extra
    elif node.get("type") == "object" and not node.get("x-kubernetes-preserve-unknown-fields"):
        result["additionalProperties"] = False  # an object with no fields listed takes none, as the API server prunes (strict: refuses) them
    if node.get("x-kubernetes-int-or-string"):
        result.pop("type", None)
        result.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if node.get("nullable") and "type" in result:
        result["type"] = [result["type"], "null"]
    return result


def load(path: Path) -> dict[str, Any]:
    with open(path) as handle:
        return yaml.safe_load(handle)


def validator(path: Path) -> Any:
    schema = to_json_schema(load(path))
    # The API server checks an object's own metadata as ObjectMeta whatever the CRD says;
    # the tests do the same with Kubernetes' schema (tests/test_deploy.py's assert_valid).
    schema["properties"]["metadata"] = {"type": "object"}
    if path == KYMA_FUNCTION:
        schema["properties"]["spec"]["properties"]["runtime"]["enum"] += list(KYMA_REWORK_RUNTIMES)
    return _Validator(schema)


def errors(path: Path, document: dict[str, Any]) -> list[str]:
    """Every problem the CRD's schema finds in ``document``, as 'path: message'."""
    found = sorted(validator(path).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found]
