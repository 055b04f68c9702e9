"""The manifests ``funcwsgi deploy`` applies, made from ``func.yaml``.

One generator for every target: the container's environment is the one
``funcwsgi run`` gives the function (:meth:`Project.function_env`), and the
numbers the platform needs (port, calls per pod, request timeout, drain time,
metrics path) are read from that environment by the runtime's own
:class:`~funcwsgi.config.Config`, so the manifests and the server inside the
pod agree by construction. Targets:

- ``knative``: a ``serving.knative.dev/v1`` Service;
- ``kubernetes``: an ``apps/v1`` Deployment, a ``v1`` Service and an
  ``autoscaling/v2`` HorizontalPodAutoscaler;
- ``kyma``: a ``serverless.kyma-project.io/v1alpha2`` Function with the
  handler's source inline and the function's image as the runtime image.

func.yaml's ``secrets`` are mounted read-only where ``sdk.secret()`` looks:
one projected volume at :data:`SECRETS_MOUNT` (every key of every Secret a
file there) on Knative and Kubernetes; on Kyma, whose Function mounts each
Secret at a path of its own, one folder per Secret under it, listed in
``HANDLER_SECRETS_PATH``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..errors import ConfigError
from ..middleware.reserved import LIVENESS_PATH, READINESS_PATH
from .project import DEPLOY_TARGETS, FUNC_YAML, SECRETS_ENV, Project, ProjectError

DEFAULT_TARGET = "knative"
DEFAULT_SCALE = (1, 10)
DEFAULT_REQUESTS = {"cpu": "500m", "memory": "256Mi"}
DEFAULT_LIMITS = {"cpu": "1", "memory": "256Mi"}
CONTAINER = "function"
#: Seconds the platform waits beyond the runtime's own call timeout, so the caller gets funcwsgi's 408, not a cut connection.
REQUEST_TIMEOUT_MARGIN = 10
#: Seconds a Kubernetes pod keeps serving after it is told to stop, while its endpoint leaves every node's routing.
PRE_STOP_SECONDS = 5
#: CPU use (percent of the request) above which the HorizontalPodAutoscaler adds pods.
CPU_TARGET_PERCENT = 70
#: Share of containerConcurrency Knative aims at, so a burst finds free threads while pods start.
CONCURRENCY_TARGET_PERCENT = 70
KNATIVE_API = "serving.knative.dev/v1"
KYMA_API = "serverless.kyma-project.io/v1alpha2"
#: The port Kyma's controller serves and probes the function on.
KYMA_PORT = 8080
#: Names Kyma's Function schema refuses in spec.env: its controller sets them.
KYMA_RESERVED_ENV = frozenset({
    "FUNC_RUNTIME", "FUNC_HANDLER", "FUNC_PORT", "FUNC_HANDLER_SOURCE", "FUNC_HANDLER_DEPENDENCIES",
    "MOD_NAME", "NODE_PATH", "PYTHONPATH",
})
KYMA_RESERVED_PREFIX = "serverless.kyma-project.io/"
#: Where func.yaml's secrets are mounted: Knative func's documented folder, one of HANDLER_SECRETS_PATH's defaults.
SECRETS_MOUNT = "/workspace/secret"
SECRETS_VOLUME = "secrets"
# Kubernetes label syntax: an optional DNS-subdomain prefix, a name of at most 63 characters.
_LABEL_NAME = r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)"
LABEL_KEY = re.compile(rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}$")
LABEL_VALUE = re.compile(rf"^({_LABEL_NAME})?$")


@dataclass(frozen=True)
class KymaRuntime:
    """How a func.yaml runtime becomes a Kyma Function: its runtime name and the files sent inline."""

    name: str
    source_suffix: str
    dependencies: str


KYMA_RUNTIMES = {
    "python": KymaRuntime("python314", ".py", "requirements.txt"),
    "nodejs26": KymaRuntime("nodejs26", ".js", "package.json"),  # the Node runtime in nodejs26/ of this repository
}


def generate(project: Project, target: str, image: str, namespace: str = "") -> list[dict[str, Any]]:
    """The objects of ``target`` for ``project`` running ``image``, in ``namespace`` (empty: kubectl's current one)."""
    if target not in DEPLOY_TARGETS:
        raise ProjectError(f"--target {target!r} is invalid: expected one of {', '.join(DEPLOY_TARGETS)}")
    plan = Plan(project, target, image, namespace)
    return {"knative": plan.knative, "kubernetes": plan.kubernetes, "kyma": plan.kyma}[target]()


class Plan:
    """What one deployment of a project needs, checked once; each target method lays it out."""

    def __init__(self, project: Project, target: str, image: str, namespace: str) -> None:
        self.project = project
        self.target = target
        self.image = image
        self.namespace = namespace
        self.where = str(project.root / FUNC_YAML)
        self.env = project.function_env()
        try:
            self.config = Config.from_env(self.env)
        except ConfigError as error:
            raise ProjectError(f"{self.where}: the function's environment is invalid: {error}") from None
        low, high = DEFAULT_SCALE
        self.scale_min = low if project.scale_min is None else project.scale_min
        self.scale_max = max(high, self.scale_min) if project.scale_max is None else project.scale_max
        if self.scale_min == 0 and target != "knative":
            raise ProjectError(f"{self.where}: scale.min is 0, which only Knative can do (scale to zero); set 1 or more for --target {target}")
        given = project.requests is not None or project.limits is not None
        self.requests = dict(project.requests or {}) if given else dict(DEFAULT_REQUESTS)
        self.limits = dict(project.limits or {}) if given else dict(DEFAULT_LIMITS)
        for resource, request in self.requests.items():
            limit = self.limits.get(resource)
            if limit is not None and quantity(request) > quantity(limit):
                raise ProjectError(
                    f"{self.where}: resources.requests.{resource} {request} is above resources.limits.{resource} {limit}:"
                    " a pod cannot be guaranteed more than it may use"
                )
        for name in ("labels", "annotations"):
            for key, value in getattr(project, name).items():
                if not LABEL_KEY.match(key):
                    raise ProjectError(
                        f"{self.where}: {name}.{key} is not a valid Kubernetes key:"
                        " expected [prefix/]name, the name at most 63 letters, digits, '-', '_' or '.'"
                    )
                if name == "labels" and not LABEL_VALUE.match(value):
                    raise ProjectError(
                        f"{self.where}: labels.{key} is {value!r}:"
                        " expected at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
                    )

    # -- the parts every target shares --------------------------------------

    @property
    def name(self) -> str:
        return self.project.name

    def metadata(self, **extra: Any) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name}
        if self.namespace:
            meta["namespace"] = self.namespace
        meta["labels"] = self.labels()
        if self.project.annotations:
            meta["annotations"] = dict(self.project.annotations)
        meta.update(extra)
        return meta

    def labels(self) -> dict[str, str]:
        return {"app.kubernetes.io/name": self.name, "app.kubernetes.io/managed-by": "funcwsgi", **self.project.labels}

    def selector(self) -> dict[str, str]:
        return {"app.kubernetes.io/name": self.name}

    def pod_annotations(self, platform: dict[str, str]) -> dict[str, str]:
        """The platform's annotations, then the scrape hints, then func.yaml's (which win)."""
        annotations = dict(platform)
        if self.config.server_metrics:
            annotations.update({
                "prometheus.io/scrape": "true",
                "prometheus.io/port": str(self.config.server_metrics_port or self.config.server_port),
                "prometheus.io/path": self.config.server_metrics_path,
            })
        annotations.update(self.project.annotations)
        return annotations

    def env_list(self, *, leave_out: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
        """The function's environment as EnvVars; FUNC_NAMESPACE is the pod's own namespace."""
        items: list[dict[str, Any]] = []
        for key, value in self.env.items():
            if key in leave_out or key == "FUNC_NAMESPACE":
                continue
            items.append({"name": key, "value": value})
            if key == "FUNC_NAME":
                items.append({"name": "FUNC_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}})
        return items

    def resources(self) -> dict[str, Any]:
        resources: dict[str, Any] = {}
        if self.requests:
            resources["requests"] = dict(self.requests)
        if self.limits:
            resources["limits"] = dict(self.limits)
        return resources

    def probes(self, port: int | str) -> dict[str, Any]:
        """Readiness and liveness on the runtime's own health paths (answered even while the function is busy)."""

        def get(path: str) -> dict[str, Any]:
            return {"httpGet": {"path": path, "port": port}}

        return {
            "readinessProbe": {**get(READINESS_PATH), "periodSeconds": 5, "timeoutSeconds": 2, "failureThreshold": 2},
            "livenessProbe": {**get(LIVENESS_PATH), "periodSeconds": 10, "timeoutSeconds": 4, "failureThreshold": 3},
        }

    def container_security(self) -> dict[str, Any]:
        return {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        }

    def secrets_volume(self) -> dict[str, Any]:
        """func.yaml's secrets in one folder, each key a file, as OpenFaaS lays them out."""
        return {"name": SECRETS_VOLUME, "projected": {"sources": [{"secret": {"name": name}} for name in self.project.secrets]}}

    def secrets_mount(self) -> dict[str, Any]:
        return {"name": SECRETS_VOLUME, "mountPath": SECRETS_MOUNT, "readOnly": True}

    @property
    def calls_per_pod(self) -> int:
        return self.config.server_workers * self.config.server_numthreads

    @property
    def request_timeout(self) -> int | None:
        """The platform's request timeout: longer than a call may take and than the drain after SIGTERM."""
        if not self.config.server_call_timeout:
            return None  # no limit in the runtime: the platform's default applies
        return math.ceil(max(self.config.server_call_timeout, self.config.server_graceful_timeout)) + REQUEST_TIMEOUT_MARGIN

    # -- Knative ------------------------------------------------------------

    def knative(self) -> list[dict[str, Any]]:
        platform = {
            "autoscaling.knative.dev/min-scale": str(self.scale_min),
            "autoscaling.knative.dev/max-scale": str(self.scale_max),
            "autoscaling.knative.dev/metric": "concurrency",
            "autoscaling.knative.dev/target-utilization-percentage": str(CONCURRENCY_TARGET_PERCENT),
        }
        container: dict[str, Any] = {
            "name": CONTAINER,
            "image": self.image,
            # Knative's convention: a port named h2c gets HTTP/2 without TLS from the queue-proxy.
            "ports": [{"name": "h2c" if self.config.server_http2 else "http1", "containerPort": self.config.server_port}],
            "env": self.env_list(),
            "resources": self.resources(),
            # Knative accepts a probe port only when it is the serving port.
            **self.probes(self.config.server_port),
            "securityContext": self.container_security(),
        }
        if self.project.secrets:
            container["volumeMounts"] = [self.secrets_mount()]
        revision: dict[str, Any] = {"containerConcurrency": self.calls_per_pod}
        if self.request_timeout is not None:
            revision["timeoutSeconds"] = self.request_timeout
        revision["containers"] = [container]
        if self.project.secrets:
            revision["volumes"] = [self.secrets_volume()]
        template = {"metadata": {"labels": self.labels(), "annotations": self.pod_annotations(platform)}, "spec": revision}
        return [{"apiVersion": KNATIVE_API, "kind": "Service", "metadata": self.metadata(), "spec": {"template": template}}]

    # -- plain Kubernetes ---------------------------------------------------

    def kubernetes(self) -> list[dict[str, Any]]:
        if "cpu" not in self.requests:
            raise ProjectError(f"{self.where}: resources.requests.cpu is missing: --target kubernetes adds pods on CPU use, measured against the request")
        ports: list[dict[str, Any]] = [{"name": "http", "containerPort": self.config.server_port}]
        if self.config.server_metrics and self.config.server_metrics_port:
            ports.append({"name": "metrics", "containerPort": self.config.server_metrics_port})
        container: dict[str, Any] = {
            "name": CONTAINER,
            "image": self.image,
            "ports": ports,
            "env": self.env_list(),
            "resources": self.resources(),
            # Gives a slow import up to a minute before liveness counts.
            "startupProbe": {"httpGet": {"path": LIVENESS_PATH, "port": "http"}, "periodSeconds": 2, "failureThreshold": 30},
            **self.probes("http"),
            # Keep serving while the endpoint leaves every node's routing; then SIGTERM starts the drain.
            "lifecycle": {"preStop": {"sleep": {"seconds": PRE_STOP_SECONDS}}},
            "securityContext": {**self.container_security(), "readOnlyRootFilesystem": True},
            "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}, *([self.secrets_mount()] if self.project.secrets else [])],
        }
        grace = PRE_STOP_SECONDS + math.ceil(self.config.server_graceful_timeout) + PRE_STOP_SECONDS
        pod = {
            "metadata": {"labels": self.labels(), "annotations": self.pod_annotations({})},
            "spec": {
                "terminationGracePeriodSeconds": grace,
                "automountServiceAccountToken": False,
                "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [container],
                # The only place the runtime writes.
                "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}, *([self.secrets_volume()] if self.project.secrets else [])],
            },
        }
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": self.metadata(),
            # No replicas: the autoscaler owns that number, and a second deploy must not reset it.
            "spec": {
                "selector": {"matchLabels": self.selector()},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
                "template": pod,
            },
        }
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.metadata(),
            "spec": {"selector": self.selector(), "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
        }
        autoscaler = {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": self.metadata(),
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": self.name},
                "minReplicas": self.scale_min,
                "maxReplicas": self.scale_max,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": CPU_TARGET_PERCENT}}}],
                "behavior": {
                    "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
                    "scaleDown": {"stabilizationWindowSeconds": 300, "policies": [{"type": "Percent", "value": 50, "periodSeconds": 60}]},
                },
            },
        }
        return [deployment, service, autoscaler]

    # -- Kyma ---------------------------------------------------------------

    def kyma(self) -> list[dict[str, Any]]:
        runtime = KYMA_RUNTIMES.get(self.project.runtime)
        if runtime is None:
            raise ProjectError(f"{self.where}: runtime {self.project.runtime!r} has no Kyma runtime: expected one of {', '.join(KYMA_RUNTIMES)}")
        reserved = sorted(KYMA_RESERVED_ENV & set(self.project.envs))
        if reserved:
            raise ProjectError(f"{self.where}: envs.{reserved[0]} cannot be set on Kyma: its Function controller sets it")
        if self.config.server_port != KYMA_PORT:
            raise ProjectError(
                f"{self.where}: the function listens on port {self.config.server_port},"
                f" but Kyma serves and probes port {KYMA_PORT}; leave SERVER_PORT unset for --target kyma"
            )
        for name in ("labels", "annotations"):
            for key in getattr(self.project, name):
                if key.startswith(KYMA_RESERVED_PREFIX) or (name == "annotations" and key == "proxy.istio.io/config"):
                    raise ProjectError(f"{self.where}: {name}.{key} cannot be set on Kyma: the Function schema reserves it")
        source_path = self.project.root / (self.project.handler_module.replace(".", "/") + runtime.source_suffix)
        try:
            source = source_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ProjectError(f"{source_path} cannot be read for the Kyma Function's inline source: {error}") from None
        if not source.strip():
            raise ProjectError(f"{source_path} is empty: a Kyma Function needs the handler's source")
        dependencies_path = self.project.root / runtime.dependencies
        dependencies = dependencies_path.read_text(encoding="utf-8") if dependencies_path.is_file() else ""
        # The controller writes the source as handler.py and names that module itself.
        env = self.env_list(leave_out=frozenset({"HANDLER_MODULE_NAME"}))
        # A Kyma Function mounts each Secret at a path of its own, so the runtime is told every one.
        mounts = [{"secretName": name, "mountPath": f"{SECRETS_MOUNT}/{name}"} for name in self.project.secrets]
        if mounts:
            env.append({"name": SECRETS_ENV, "value": ":".join(mount["mountPath"] for mount in mounts)})
        spec: dict[str, Any] = {
            "runtime": runtime.name,
            "runtimeImageOverride": self.image,
            "source": {"inline": {"source": source, "dependencies": dependencies}},
            "env": env,
            "labels": self.labels(),
            "annotations": self.pod_annotations({}),
            "scaleConfig": {"minReplicas": self.scale_min, "maxReplicas": self.scale_max},
        }
        if mounts:
            spec["secretMounts"] = mounts
        if self.requests or self.limits:
            spec["resourceConfiguration"] = {"function": {"resources": self.resources()}}
        return [{"apiVersion": KYMA_API, "kind": "Function", "metadata": self.metadata(), "spec": spec}]


_SUFFIXES = {
    "": 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}


def quantity(text: str) -> float:
    """A Kubernetes quantity (checked by func.yaml's schema) as a number: ``500m`` is 0.5, ``1Ki`` is 1024."""
    number = re.match(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text)
    assert number is not None, text
    return float(number.group(0)) * _SUFFIXES[text[number.end():]]


def render(documents: list[dict[str, Any]], *, header: str = "") -> str:
    """The objects as one YAML stream; multi-line strings (inline sources) as literal blocks."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value and value.strip(" \n") != "" else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    body = "---\n".join(yaml.dump(doc, Dumper=Dumper, sort_keys=False, default_flow_style=False, width=120) for doc in documents)
    return (f"# {header}\n" if header else "") + body
