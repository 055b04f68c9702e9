"""The deployment manifests in docs/deploy/ are valid and fit the runtime they deploy.

Every manifest parses. Kubernetes' own kinds are checked against the official
JSON schemas that `kubernetes-validate` ships (strict: unknown fields fail),
at the oldest Kubernetes version the docs claim and the newest it knows. The
Knative Service and the Kyma Function are checked against their projects'
published CRD schemas (tests/schemas/, see tests/support/crd_schemas.py), their pod
parts against the same Kubernetes schemas (PodSpec, ObjectMeta, EnvVar,
ResourceRequirements) and their own fields by the structural checks below. Then the manifests are held against the runtime:
only environment names it reads (or the standard OTEL_* ones), values it
accepts, probes on paths it answers itself — checked in-process and on a real
server started with each manifest's environment — and timeouts, ports and
concurrency that agree with each other.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from kubernetes_validate import utils as kubernetes
from opentelemetry import environment_variables as otel_api_env
from opentelemetry.sdk import environment_variables as otel_sdk_env
from werkzeug.test import Client

from funcwsgi import make_app
from funcwsgi.config import Config, known_env_names, specs

from .support import crd_schemas
from .support.manifests import KUBERNETES_VERSIONS, Workload, assert_valid, kyma_controller_env, serve_with
from .support.paths import BIN, REPO, function_folder

DEPLOY = REPO / "docs" / "deploy"
MANIFESTS = sorted(DEPLOY.rglob("*.yaml"))

# OpenTelemetry's standard variables, as the API and SDK the tracing layer is
# built on declare them; it honours them as they are.
OTEL_NAMES = frozenset(
    getattr(module, name) for module in (otel_api_env, otel_sdk_env) for name in dir(module) if name.startswith("OTEL_")
)

KNATIVE = "serving.knative.dev/v1"
KYMA = "serverless.kyma-project.io/v1alpha2"
CUSTOM_GROUPS = (KNATIVE, KYMA)
KYMA_RUNTIMES = ("python312", "python314")
# Knative's revision fields on top of a PodSpec, and their bounds.
KNATIVE_REVISION_FIELDS = {"containerConcurrency": (0, 1000), "timeoutSeconds": (1, 3600),
                           "responseStartTimeoutSeconds": (1, 3600), "idleTimeoutSeconds": (0, 3600)}
KNATIVE_PORT_NAMES = ("http1", "h2c")
# The pod annotations Prometheus' Kubernetes discovery is commonly set up to read.
SCRAPE, SCRAPE_PORT, SCRAPE_PATH = "prometheus.io/scrape", "prometheus.io/port", "prometheus.io/path"


def number(raw: str) -> float:
    return float(raw)


KNATIVE_AUTOSCALING = {
    "class": lambda v: v in ("kpa.autoscaling.knative.dev", "hpa.autoscaling.knative.dev"),
    "metric": lambda v: v in ("concurrency", "rps", "cpu", "memory"),
    "target": lambda v: number(v) > 0,
    "target-utilization-percentage": lambda v: 0 < number(v) <= 100,
    "min-scale": lambda v: int(v) >= 0,
    "max-scale": lambda v: int(v) >= 0,
    "initial-scale": lambda v: int(v) >= 0,
    "activation-scale": lambda v: int(v) >= 1,
    "scale-down-delay": lambda v: re.fullmatch(r"\d+(s|m|h)", v) is not None,
    "window": lambda v: re.fullmatch(r"\d+(s|m)", v) is not None,
    "panic-window-percentage": lambda v: 1 <= number(v) <= 100,
    "panic-threshold-percentage": lambda v: number(v) > 100,
}


def load(path: Path) -> list[dict[str, Any]]:
    with open(path) as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


DOCUMENTS = [(path, doc) for path in MANIFESTS for doc in load(path)]


def doc_id(item: tuple[Path, dict[str, Any]]) -> str:
    path, doc = item
    return f"{path.relative_to(DEPLOY)}:{doc.get('kind')}"


def of_kind(api_version: str, kind: str) -> list[dict[str, Any]]:
    return [doc for _, doc in DOCUMENTS if doc.get("apiVersion") == api_version and doc.get("kind") == kind]


# -- workloads: the pod templates the manifests run ---------------------------


WORKLOADS = [Workload(doc) for doc in of_kind(KNATIVE, "Service") + of_kind("apps/v1", "Deployment")]
CONTAINERS = [(w, c) for w in WORKLOADS for c in w.containers]


def container_id(item: tuple[Workload, dict[str, Any]]) -> str:
    return f"{item[0].name}:{item[1]['name']}"


# -- every manifest -----------------------------------------------------------


def test_the_promised_manifests_exist():
    kinds = {(doc["apiVersion"], doc["kind"]) for _, doc in DOCUMENTS}
    assert kinds >= {
        (KNATIVE, "Service"), ("apps/v1", "Deployment"), ("v1", "Service"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"), (KYMA, "Function"),
    }


@pytest.mark.parametrize("item", DOCUMENTS, ids=doc_id)
def test_every_manifest_names_its_kind_and_itself(item):
    _, doc = item
    assert isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str)
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["metadata"]["name"])


@pytest.mark.parametrize(
    "item", [i for i in DOCUMENTS if i[1]["apiVersion"] not in CUSTOM_GROUPS], ids=doc_id
)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_kubernetes_kinds_match_the_official_schema(item, version):
    _, doc = item
    try:
        kubernetes.validate(doc, version, strict=True)
    except kubernetes.ValidationError as error:
        pytest.fail(f"{doc_id(item)} (Kubernetes {version}): {'/'.join(map(str, error.path))}: {error.message}")


def test_the_schema_check_rejects_an_unknown_field():
    """The strict schemas really fail on a typo, so the checks above can fail."""
    doc = of_kind("apps/v1", "Deployment")[0]
    broken = yaml.safe_load(yaml.safe_dump(doc))
    container = broken["spec"]["template"]["spec"]["containers"][0]
    container["readynessProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes.ValidationError):
        kubernetes.validate(broken, KUBERNETES_VERSIONS[-1], strict=True)
    with pytest.raises(AssertionError, match="readynessProbe"):
        assert_valid("io.k8s.api.core.v1.PodSpec", broken["spec"]["template"]["spec"], "the broken pod")


@pytest.mark.parametrize(
    ("doc", "schema"),
    [(d, crd_schemas.KNATIVE_SERVICE) for d in of_kind(KNATIVE, "Service")] + [(d, crd_schemas.KYMA_FUNCTION) for d in of_kind(KYMA, "Function")],
    ids=lambda v: v["kind"] if isinstance(v, dict) else "",
)
def test_custom_resources_match_their_projects_crd_schemas(doc, schema):
    """The Knative Service and the Kyma Function against the CRD schemas Knative and Kyma publish (tests/schemas/)."""
    assert crd_schemas.errors(schema, doc) == []


# -- Knative Service ----------------------------------------------------------


@pytest.mark.parametrize("doc", of_kind(KNATIVE, "Service"), ids=lambda d: d["metadata"]["name"])
def test_knative_service_structure(doc):
    assert set(doc) <= {"apiVersion", "kind", "metadata", "spec"}
    assert_valid("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", doc["metadata"], "metadata")
    assert set(doc["spec"]) <= {"template", "traffic"}
    template = doc["spec"]["template"]
    assert set(template) <= {"metadata", "spec"}
    assert_valid("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", template.get("metadata", {}), "spec.template.metadata")

    revision = dict(template["spec"])
    for field, (low, high) in KNATIVE_REVISION_FIELDS.items():
        if field in revision:
            value = revision.pop(field)
            assert isinstance(value, int) and low <= value <= high, f"spec.template.spec.{field}={value!r}: expected {low}..{high}"
    assert_valid("io.k8s.api.core.v1.PodSpec", revision, "spec.template.spec")

    (container,) = revision["containers"]  # Knative serves one container's port
    (port,) = container["ports"]
    assert port.get("name", "http1") in KNATIVE_PORT_NAMES

    annotations = template.get("metadata", {}).get("annotations", {})
    for key, value in annotations.items():
        group, _, name = key.partition("/")
        if group == "autoscaling.knative.dev":
            assert name in KNATIVE_AUTOSCALING, f"unknown Knative autoscaling annotation {key}"
            assert KNATIVE_AUTOSCALING[name](value), f"{key}={value!r} is invalid"
    low = int(annotations.get("autoscaling.knative.dev/min-scale", 0))
    high = int(annotations.get("autoscaling.knative.dev/max-scale", 0)) or math.inf
    assert low <= high


@pytest.mark.parametrize("doc", of_kind(KNATIVE, "Service"), ids=lambda d: d["metadata"]["name"])
def test_knative_concurrency_and_timeouts_fit_the_runtime(doc):
    spec = doc["spec"]["template"]["spec"]
    config = Workload(doc).config(spec["containers"][0])
    per_pod = config.server_workers * config.server_numthreads
    # A hard limit above what the pod serves at once would queue calls inside
    # the pod, where the autoscaler cannot see them.
    assert 0 < spec["containerConcurrency"] <= per_pod
    timeout = spec.get("timeoutSeconds", 300)
    assert timeout > config.server_call_timeout, "the caller must get the runtime's 408, not a cut connection"
    assert timeout > config.server_graceful_timeout, "Knative's grace period (timeoutSeconds) must cover the drain"


# -- plain Kubernetes ---------------------------------------------------------


def test_service_and_autoscaler_point_at_the_deployment():
    (deployment,) = of_kind("apps/v1", "Deployment")
    (service,) = of_kind("v1", "Service")
    (autoscaler,) = of_kind("autoscaling/v2", "HorizontalPodAutoscaler")
    template = deployment["spec"]["template"]
    labels = template["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    ports = {p.get("name"): p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])}
    for port in service["spec"]["ports"]:
        target = port["targetPort"]
        assert target in ports or target in ports.values(), f"Service targetPort {target!r} is no container port ({ports})"
    target = autoscaler["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == ("apps/v1", "Deployment", deployment["metadata"]["name"])
    assert "replicas" not in deployment["spec"], "the autoscaler owns replicas; re-applying must not reset them"
    assert autoscaler["spec"]["minReplicas"] <= autoscaler["spec"]["maxReplicas"]
    if any(m["type"] == "Resource" and m["resource"]["name"] == "cpu" for m in autoscaler["spec"]["metrics"]):
        for container in template["spec"]["containers"]:
            assert "cpu" in container["resources"]["requests"], "CPU utilisation is measured against the CPU request"


def test_the_deployment_drains_before_it_is_killed():
    (deployment,) = of_kind("apps/v1", "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    grace = pod.get("terminationGracePeriodSeconds", 30)
    for container in pod["containers"]:
        config = Workload(deployment).config(container)
        pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
        assert grace > pre_stop + config.server_graceful_timeout


# -- what every funcwsgi container asks of the runtime ------------------------


@pytest.mark.parametrize("item", CONTAINERS, ids=container_id)
def test_containers_use_only_environment_names_the_runtime_reads(item):
    workload, container = item
    unknown = [name for name in workload.env_names(container) if name not in known_env_names() | OTEL_NAMES]
    assert not unknown, f"{container_id(item)} sets {unknown}: funcwsgi reads none of them (see docs/configuration.md)"


@pytest.mark.parametrize("item", CONTAINERS, ids=container_id)
def test_containers_values_are_accepted_and_ports_agree(item):
    workload, container = item
    config = workload.config(container)  # raises ConfigError naming a bad value
    ports = {p.get("name"): p["containerPort"] for p in container["ports"]}
    assert list(ports.values()) == [config.server_port], f"containerPort {ports} but the runtime listens on {config.server_port}"
    for kind, probe in workload.probes(container):
        port = probe["httpGet"].get("port", config.server_port)
        assert port in ports or port == config.server_port, f"{kind} probes port {port!r}, not the runtime's"
    cpu_limit = container["resources"]["limits"]["cpu"]
    cores = float(cpu_limit[:-1]) / 1000 if str(cpu_limit).endswith("m") else float(cpu_limit)
    assert config.server_workers <= max(1, math.ceil(cores)), "more worker processes than CPUs only adds memory"
    assert "memory" in container["resources"]["limits"]


def probe_paths() -> list[str]:
    paths = {probe["httpGet"]["path"] for w, c in CONTAINERS for _, probe in w.probes(c)}
    return sorted(paths)


def scrape_paths() -> list[str]:
    return sorted({w.pod_annotations[SCRAPE_PATH] for w in WORKLOADS if SCRAPE_PATH in w.pod_annotations})


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_pods_ask_prometheus_to_scrape_the_runtime(workload):
    annotations = workload.pod_annotations
    assert annotations.get(SCRAPE) == "true"
    (container,) = workload.containers
    config = workload.config(container)
    assert int(annotations[SCRAPE_PORT]) == (config.server_metrics_port or config.server_port)
    assert config.server_metrics and annotations[SCRAPE_PATH] == config.server_metrics_path


def test_every_container_has_readiness_and_liveness_probes():
    for workload, container in CONTAINERS:
        kinds = {kind for kind, _ in workload.probes(container)}
        assert {"readinessProbe", "livenessProbe"} <= kinds, container_id((workload, container))


@pytest.mark.parametrize("path", probe_paths() + scrape_paths())
def test_probe_and_scrape_paths_are_answered_by_the_runtime_itself(path):
    client = Client(make_app(environ={}, handler_folder=function_folder("probe_sentinel")))
    response = client.get(path)
    assert response.status_code == 200, f"{path} reached the function: the runtime does not serve it"
    assert client.get("/not-a-probe").status_code == 418  # the sentinel answers everything else


@pytest.fixture(scope="module", params=CONTAINERS, ids=container_id)
def manifest_server(request):
    """gunicorn started with a manifest container's environment (cluster endpoints left out)."""
    workload, container = request.param
    with serve_with(workload.env(container), HANDLER_FOLDER=function_folder("probe_sentinel")) as server:
        yield workload, container, server


def test_a_server_with_the_manifest_environment_answers_its_probes(manifest_server):
    workload, container, server = manifest_server
    for kind, probe in workload.probes(container):
        response = requests.get(server.url + probe["httpGet"]["path"], timeout=5)
        assert response.status_code == 200, f"{kind} {probe['httpGet']['path']}: {response.status_code}"
    if SCRAPE_PATH in workload.pod_annotations:
        scrape = requests.get(server.url + workload.pod_annotations[SCRAPE_PATH], timeout=5)
        assert scrape.status_code == 200 and "function_calls_total" in scrape.text
    assert requests.get(server.url + "/", timeout=5).status_code == 418
    config = workload.config(container)
    assert f"Starting {config.func_runtime} server 127.0.0.1:{server.port}" in server.stdout


# -- Kyma Function ------------------------------------------------------------

KYMA_FUNCTIONS = of_kind(KYMA, "Function")


@pytest.mark.parametrize("doc", KYMA_FUNCTIONS, ids=lambda d: d["metadata"]["name"])
def test_kyma_function_structure(doc):
    assert_valid("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", doc["metadata"], "metadata")
    spec = doc["spec"]
    assert spec["runtime"] in KYMA_RUNTIMES
    from funcwsgi.cli.scaffolding import RUNTIME_IMAGE

    assert spec.get("runtimeImageOverride") == RUNTIME_IMAGE, "the runtime image is called funcwsgi-runtime:<version> everywhere"
    source = spec["source"]["inline"]["source"]
    compile(source, "handler.py", "exec")
    for item in spec.get("env", []):
        assert_valid("io.k8s.api.core.v1.EnvVar", item, f"env {item.get('name')}")
    resources = spec.get("resourceConfiguration", {}).get("function", {}).get("resources")
    if resources is not None:
        assert_valid("io.k8s.api.core.v1.ResourceRequirements", resources, "resourceConfiguration.function.resources")
    scale = spec.get("scaleConfig")
    if scale is not None:
        assert 0 < scale["minReplicas"] <= scale["maxReplicas"]


@pytest.mark.parametrize("doc", KYMA_FUNCTIONS, ids=lambda d: d["metadata"]["name"])
def test_kyma_function_env_names_are_read_by_the_runtime(doc):
    names = [item["name"] for item in doc["spec"].get("env", [])]
    unknown = [name for name in names if name not in known_env_names() | OTEL_NAMES]
    assert not unknown, f"Function {doc['metadata']['name']} sets {unknown}: funcwsgi reads none of them"


@pytest.mark.parametrize("runtime", KYMA_RUNTIMES)
def test_the_kyma_controller_environment_configures_the_runtime(runtime, tmp_path):
    doc = {"metadata": {"name": "orders", "namespace": "shop"}, "spec": {"runtime": runtime}}
    config = Config.from_env(kyma_controller_env(doc, str(tmp_path)))
    assert (config.func_name, config.func_namespace, config.func_runtime) == ("orders", "shop", runtime)
    assert (config.handler_folder, config.handler_module_name, config.handler_function_name) == (str(tmp_path), "handler", "main")
    assert config.trace_collector_endpoint is None and config.publisher_proxy_address is None


def test_the_kyma_page_says_how_each_injected_variable_is_read():
    """docs/kyma.md's table of injected variables agrees with the settings' declared names."""
    page = (REPO / "docs" / "kyma.md").read_text()
    table = page.split("<!-- injected-env -->", 2)[1]
    rows = re.findall(r"^\| `([A-Z_]+)` \|.*\| (.+) \|$", table, flags=re.MULTILINE)
    assert rows, "docs/kyma.md has a table of injected variables between <!-- injected-env --> markers"
    names_of = {spec.env: {spec.env, *(a.name for a in spec.aliases)} for _, _, spec in specs()}
    for variable, read_as in rows:
        setting = re.match(r"`([A-Z_]+)`", read_as)
        if setting:
            assert variable in names_of[setting.group(1)], f"{variable} is not read as {setting.group(1)}"
        else:
            assert variable not in known_env_names(), f"docs/kyma.md says {variable} is not read, but funcwsgi reads it"
    documented = {variable for variable, _ in rows}
    injected = set(kyma_controller_env({"metadata": {"name": "f"}, "spec": {"runtime": "python312"}}, "/kubeless"))
    injected |= set(kyma_controller_env({"metadata": {"name": "f"}, "spec": {"runtime": "python314"}}, "/kubeless"))
    assert injected <= documented, f"docs/kyma.md does not explain {sorted(injected - documented)}"


@pytest.fixture(scope="module", params=KYMA_FUNCTIONS, ids=lambda d: d["metadata"]["name"])
def kyma_server(request, tmp_path_factory):
    """The inline source written where the controller writes it, served with the controller's environment."""
    doc = request.param
    folder = tmp_path_factory.mktemp("kubeless")
    (folder / "handler.py").write_text(doc["spec"]["source"]["inline"]["source"])
    # The controller's command ends in `cd ..; python server.py`; the image's
    # server.py does what `python -m funcwsgi` does.
    with serve_with(kyma_controller_env(doc, str(folder)), [str(BIN / "python"), "-m", "funcwsgi"], folder.parent) as server:
        yield doc, server


def test_the_kyma_function_is_served_with_the_controller_environment(kyma_server):
    doc, server = kyma_server
    assert requests.get(server.url + "/healthz", timeout=5).text == "OK"  # the controller's probes
    response = requests.post(server.url + "/", json={"name": "Kyma"}, timeout=5)
    assert response.status_code == 200
    assert response.json() == {"message": "Hello, Kyma!", "function": doc["metadata"]["name"]}
    assert f"Starting {doc['spec']['runtime']} server" in server.stdout


def test_the_kyma_page_names_the_runtime_image_as_everything_else_does():
    from funcwsgi.cli.scaffolding import RUNTIME_IMAGE

    page = (REPO / "docs" / "kyma.md").read_text()
    named = set(re.findall(r"runtimeImageOverride: (\S+)", page))
    assert named == {RUNTIME_IMAGE}
