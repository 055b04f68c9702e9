"""Kubernetes manifests held against the runtime: the API types' official schemas, the workloads
and their containers' environment, and what Kyma's Function controller adds to a pod.

Shared by the checks of the manifests in docs/deploy/ (tests/test_docs_deploy.py) and of those
``funcwsgi deploy`` makes (tests/cli/commands/test_deploy.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from kubernetes_validate import utils as kubernetes
from referencing import Registry, Resource

from funcwsgi.config import Config

from .ports import free_port
from .processes import GUNICORN, Server, base_env

OLDEST_KUBERNETES = "1.30.0"  # docs/deployment.md: preStop `sleep` needs 1.30
KUBERNETES_VERSIONS = (OLDEST_KUBERNETES, kubernetes.latest_version())
# Settings whose values are cluster addresses: a test server must not reach them.
ENDPOINT_SETTINGS = ("TRACE_COLLECTOR_ENDPOINT", "PUBLISHER_PROXY_ADDRESS")


def schema_for(definition: str, version: str) -> Draft202012Validator:
    """A validator for one Kubernetes API type, e.g. ``io.k8s.api.core.v1.PodSpec`` (strict)."""
    definitions = kubernetes.schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    registry: Registry = Resource.from_contents(definitions) @ Registry()
    return Draft202012Validator({"$ref": f"{definitions['$id']}#/$defs/{definition}"}, registry=registry)


def assert_valid(definition: str, value: Any, where: str) -> None:
    for version in KUBERNETES_VERSIONS:
        errors = sorted(schema_for(definition, version).iter_errors(value), key=str)
        assert not errors, f"{where} is not a valid {definition} (Kubernetes {version}): " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]
        )


class Workload:
    """A manifest that runs funcwsgi containers, with what the runtime will make of them."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.kind = doc["kind"]
        self.name = f"{doc['kind']}/{doc['metadata']['name']}"
        self.pod: dict[str, Any] = doc["spec"]["template"]["spec"]
        self.containers: list[dict[str, Any]] = self.pod["containers"]

    def env_names(self, container: dict[str, Any]) -> list[str]:
        return [item["name"] for item in container.get("env", [])]

    def env(self, container: dict[str, Any]) -> dict[str, str]:
        """The container's environment as the pod would see it (downward-API values by example)."""
        result = {}
        for item in container.get("env", []):
            if "value" in item:
                result[item["name"]] = str(item["value"])
            elif item.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.namespace":
                result[item["name"]] = "default"
        return result

    def config(self, container: dict[str, Any]) -> Config:
        return Config.from_env(self.env(container))

    @property
    def pod_annotations(self) -> dict[str, str]:
        return self.doc["spec"]["template"].get("metadata", {}).get("annotations", {})

    def probes(self, container: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
            if kind in container:
                yield kind, container[kind]


def serve_with(container_env: dict[str, str], command: list[str] = GUNICORN, cwd: Path | None = None, **extra: str) -> Server:
    """``command`` serving on a free loopback port with a container's environment (cluster endpoints left out) plus ``extra``."""
    port = free_port()
    env = {k: v for k, v in container_env.items() if k not in ENDPOINT_SETTINGS}
    return Server(command, base_env(**env, SERVER_HOST="127.0.0.1", SERVER_PORT=str(port), **extra), port, cwd=cwd).started()


# What Kyma's Function controller puts in the pod's environment (docs/kyma.md),
# by runtime generation; sources end up in the folder the last entry names.
def kyma_controller_env(doc: dict[str, Any], folder: str) -> dict[str, str]:
    env = {
        "FUNC_NAME": doc["metadata"]["name"],
        "FUNC_RUNTIME": doc["spec"]["runtime"],
        "SERVICE_NAMESPACE": doc["metadata"].get("namespace", "default"),
        "TRACE_COLLECTOR_ENDPOINT": "",
        "PUBLISHER_PROXY_ADDRESS": "",
        "PYTHONUNBUFFERED": "TRUE",
    }
    if doc["spec"]["runtime"] == "python314":
        env.update(HANDLER_MOD_NAME="handler", HANDLER_FUNC_NAME="main", HANDLER_PATH=folder)
    else:
        env.update(MOD_NAME="handler", FUNC_HANDLER="main", FUNCTION_PATH=folder, KUBELESS_INSTALL_VOLUME=folder)
    env.update({item["name"]: str(item["value"]) for item in doc["spec"].get("env", []) if "value" in item})
    return env
