"""``funcwsgi deploy``: the manifests it makes from func.yaml, and how it drives kubectl.

The --dry-run output of every target is checked offline against the schemas
the API server would use: Kubernetes' own kinds against the official schemas
(kubernetes-validate, strict), the Knative Service and the Kyma Function
against their projects' published CRD schemas (tests/schemas/, with the CEL
rules), and their metadata and pod parts against Kubernetes' ObjectMeta and
PodSpec. Each value is traced back to func.yaml, and real servers started with
the manifests' environment answer the probes they name. There is no cluster
here: the apply path runs against a fake ``kubectl`` on PATH that records its
arguments and standard input and answers as kubectl does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from kubernetes_validate import utils as kubernetes

from funcwsgi.config import Config

from ...support import crd_schemas
from ...support.logs import json_lines
from ...support.manifests import KUBERNETES_VERSIONS, Workload, assert_valid, kyma_controller_env, serve_with
from ...support.paths import BIN
from ...support.processes import FUNCWSGI, base_env

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
POD_SPEC = "io.k8s.api.core.v1.PodSpec"
KNATIVE_REVISION_FIELDS = ("containerConcurrency", "timeoutSeconds", "responseStartTimeoutSeconds", "idleTimeoutSeconds")
IMAGE = "registry.example/team/orders:1.2"
FUNC_YAML = f"""\
name: orders
namespace: shop
runtime: python
image: {IMAGE}
handler:
  module: handler
  function: main
envs:
  GREETING: hi
  SERVER_NUMTHREADS: 8
labels:
  team: checkout
annotations:
  example.com/owner: checkout-team
timeout: 30
scale:
  min: 2
  max: 7
resources:
  requests: {{cpu: 250m, memory: 128Mi}}
  limits: {{cpu: 1, memory: 192Mi}}
"""
HANDLER = """\
import os


def main(req, res):
    res.set_body({"greeting": os.environ.get("GREETING"), "function": os.environ.get("FUNC_NAME"), "namespace": os.environ.get("FUNC_NAMESPACE")})
"""
REQUIREMENTS = "# nothing beyond the runtime\n"


def write_project(folder: Path, func_yaml: str = FUNC_YAML) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "func.yaml").write_text(func_yaml)
    (folder / "handler.py").write_text(HANDLER)
    (folder / "requirements.txt").write_text(REQUIREMENTS)
    return folder


def funcwsgi(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FUNCWSGI, *args], cwd=cwd, env=env or base_env(), capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def orders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("deploy") / "orders")


@pytest.fixture(scope="module")
def dry_runs(orders: Path) -> dict[str, list[dict[str, Any]]]:
    """Each target's --dry-run output, parsed."""
    documents = {}
    for target in ("knative", "kubernetes", "kyma"):
        result = funcwsgi("deploy", "--dry-run", "--target", target, cwd=orders)
        assert result.returncode == 0, result.stderr
        assert result.stderr == "", "a dry run prints nothing but the manifests"
        assert result.stdout.startswith(f"# funcwsgi deploy --target {target}: 'orders'")
        documents[target] = [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]
    return documents


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {item["name"]: item.get("value", item.get("valueFrom")) for item in container["env"]}


NAMESPACE_FROM_POD = {"fieldRef": {"fieldPath": "metadata.namespace"}}
EXPECTED_ENV = {
    "FUNC_NAME": "orders",
    "FUNC_NAMESPACE": NAMESPACE_FROM_POD,
    "HANDLER_MODULE_NAME": "handler",
    "HANDLER_FUNCTION_NAME": "main",
    "FUNC_LABELS": json.dumps({"team": "checkout"}),
    "FUNC_ANNOTATIONS": json.dumps({"example.com/owner": "checkout-team"}),
    "SERVER_CALL_TIMEOUT": "30",
    "GREETING": "hi",
    "SERVER_NUMTHREADS": "8",
}
RESOURCES = {"requests": {"cpu": "250m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "192Mi"}}


def assert_metadata(meta: dict[str, Any]) -> None:
    assert_valid(OBJECT_META, meta, "metadata")
    assert (meta["name"], meta["namespace"]) == ("orders", "shop")
    assert meta["labels"]["team"] == "checkout" and meta["labels"]["app.kubernetes.io/name"] == "orders"
    assert meta["annotations"] == {"example.com/owner": "checkout-team"}


def assert_probes(container: dict[str, Any], port: Any) -> None:
    for kind, path in (("readinessProbe", "/health/readiness"), ("livenessProbe", "/health/liveness")):
        action = container[kind]["httpGet"]
        assert action["path"] == path
        assert action.get("port") == port


# -- Knative ------------------------------------------------------------------


def test_knative_service_matches_knatives_schema_and_func_yaml(dry_runs):
    (service,) = dry_runs["knative"]
    assert (service["apiVersion"], service["kind"]) == ("serving.knative.dev/v1", "Service")
    assert crd_schemas.errors(crd_schemas.KNATIVE_SERVICE, service) == []
    assert_metadata(service["metadata"])
    template = service["spec"]["template"]
    assert_valid(OBJECT_META, template["metadata"], "spec.template.metadata")
    revision = dict(template["spec"])
    knative_only = {field: revision.pop(field) for field in KNATIVE_REVISION_FIELDS if field in revision}
    assert_valid(POD_SPEC, revision, "spec.template.spec")

    annotations = template["metadata"]["annotations"]
    assert annotations["autoscaling.knative.dev/min-scale"] == "2" and annotations["autoscaling.knative.dev/max-scale"] == "7"
    assert annotations["example.com/owner"] == "checkout-team" and template["metadata"]["labels"]["team"] == "checkout"
    (container,) = revision["containers"]
    assert container["image"] == IMAGE
    assert env_of(container) == EXPECTED_ENV
    assert container["resources"] == RESOURCES
    assert container["ports"] == [{"name": "http1", "containerPort": 8080}]
    assert_probes(container, 8080)
    config = Config.from_env({"SERVER_NUMTHREADS": "8", "SERVER_CALL_TIMEOUT": "30"})
    # One pod takes as many calls as it serves at once; Knative waits longer than a call may take and than the drain.
    assert knative_only["containerConcurrency"] == config.server_workers * config.server_numthreads == 8
    assert knative_only["timeoutSeconds"] == 40 > max(config.server_call_timeout, config.server_graceful_timeout)


def test_knative_names_the_port_h2c_when_func_yaml_asks_for_http2(tmp_path):
    """Knative's convention: the queue-proxy speaks HTTP/2 without TLS to a port named h2c."""
    asking = write_project(tmp_path / "orders", FUNC_YAML.replace("envs:\n", "envs:\n  SERVER_HTTP2: \"true\"\n", 1))
    result = funcwsgi("deploy", "--dry-run", "--target", "knative", cwd=asking)
    assert result.returncode == 0, result.stderr
    (service,) = [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]
    (container,) = service["spec"]["template"]["spec"]["containers"]
    assert container["ports"] == [{"name": "h2c", "containerPort": 8080}]


def test_knative_gives_an_async_function_on_gunicorn_its_h2c_port(tmp_path):
    """gunicorn's edge worker serves async def functions HTTP/2 too (issue 42): the h2c port is not refused."""
    asking = write_project(tmp_path / "orders", FUNC_YAML.replace("envs:\n", "envs:\n  SERVER_HTTP2: \"true\"\n", 1))
    (asking / "handler.py").write_text(HANDLER.replace("def main(", "async def main("))
    served = funcwsgi("deploy", "--dry-run", "--target", "knative", cwd=asking)
    assert served.returncode == 0, served.stderr
    (service,) = [doc for doc in yaml.safe_load_all(served.stdout) if doc is not None]
    assert service["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"name": "h2c", "containerPort": 8080}]


def test_the_crd_check_can_fail(dry_runs):
    """A misspelt field and a broken CEL rule are caught, so the checks above mean something."""
    service = yaml.safe_load(yaml.safe_dump(dry_runs["knative"][0]))
    service["spec"]["template"]["spec"]["containers"][0]["readynessProbe"] = {}
    assert any("readynessProbe" in error for error in crd_schemas.errors(crd_schemas.KNATIVE_SERVICE, service))
    function = yaml.safe_load(yaml.safe_dump(dry_runs["kyma"][0]))
    function["spec"]["env"].append({"name": "FUNC_PORT", "value": "9000"})
    function["spec"]["source"]["gitRepository"] = {"url": "https://git.example/f.git", "baseDir": "/", "reference": "main"}
    problems = crd_schemas.errors(crd_schemas.KYMA_FUNCTION, function)
    assert any("FUNC_PORT" in p for p in problems) and any("Use GitRepository or Inline source" in p for p in problems), problems
    function["spec"]["runtime"] = "python39"
    assert any("python39" in p for p in crd_schemas.errors(crd_schemas.KYMA_FUNCTION, function))


# -- plain Kubernetes -----------------------------------------------------------


def test_kubernetes_objects_match_the_official_schemas_and_func_yaml(dry_runs):
    deployment, service, autoscaler = dry_runs["kubernetes"]
    assert [(d["apiVersion"], d["kind"]) for d in dry_runs["kubernetes"]] == [
        ("apps/v1", "Deployment"), ("v1", "Service"), ("autoscaling/v2", "HorizontalPodAutoscaler")
    ]
    for doc in dry_runs["kubernetes"]:
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes.validate(doc, version, strict=True)
            except kubernetes.ValidationError as error:
                pytest.fail(f"{doc['kind']} (Kubernetes {version}): {'/'.join(map(str, error.path))}: {error.message}")
        assert_metadata(doc["metadata"])
    pod = deployment["spec"]["template"]
    assert "replicas" not in deployment["spec"], "the autoscaler owns replicas"
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert pod["metadata"]["labels"]["team"] == "checkout" and pod["metadata"]["annotations"]["example.com/owner"] == "checkout-team"
    (container,) = pod["spec"]["containers"]
    assert container["image"] == IMAGE and env_of(container) == EXPECTED_ENV and container["resources"] == RESOURCES
    assert_probes(container, "http")
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"] == [p["name"] for p in container["ports"]]
    assert autoscaler["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "orders"}
    assert (autoscaler["spec"]["minReplicas"], autoscaler["spec"]["maxReplicas"]) == (2, 7)
    config = Config.from_env({})
    grace = pod["spec"]["terminationGracePeriodSeconds"]
    assert grace > container["lifecycle"]["preStop"]["sleep"]["seconds"] + config.server_graceful_timeout


# -- Kyma -----------------------------------------------------------------------


def test_kyma_function_matches_kymas_schema_and_func_yaml(dry_runs, orders: Path):
    (function,) = dry_runs["kyma"]
    assert (function["apiVersion"], function["kind"]) == ("serverless.kyma-project.io/v1alpha2", "Function")
    assert crd_schemas.errors(crd_schemas.KYMA_FUNCTION, function) == []
    assert_metadata(function["metadata"])
    spec = function["spec"]
    assert spec["runtime"] == "python314"
    assert spec["runtimeImageOverride"] == IMAGE
    assert spec["source"] == {"inline": {"source": HANDLER, "dependencies": REQUIREMENTS}}
    assert spec["scaleConfig"] == {"minReplicas": 2, "maxReplicas": 7}
    assert spec["resourceConfiguration"] == {"function": {"resources": RESOURCES}}
    assert spec["labels"]["team"] == "checkout" and spec["annotations"]["example.com/owner"] == "checkout-team"
    for item in spec["env"]:
        assert_valid("io.k8s.api.core.v1.EnvVar", item, f"env {item['name']}")
    # The controller writes the source as handler.py and names that module itself.
    assert env_of(spec) == {k: v for k, v in EXPECTED_ENV.items() if k != "HANDLER_MODULE_NAME"}


def test_a_node_function_becomes_a_nodejs26_kyma_function(tmp_path: Path):
    from funcwsgi.cli.manifests import generate
    from funcwsgi.cli.project import Project

    (tmp_path / "handler.js").write_text("module.exports = { main: (req, res) => res.end('hi') };\n")
    (tmp_path / "package.json").write_text('{"name": "hi", "dependencies": {}}\n')
    (function,) = generate(Project(root=tmp_path, name="hi", runtime="nodejs26"), "kyma", "registry.example/hi:1")
    assert function["spec"]["runtime"] == "nodejs26"
    assert function["spec"]["source"]["inline"] == {"source": (tmp_path / "handler.js").read_text(), "dependencies": (tmp_path / "package.json").read_text()}
    assert crd_schemas.errors(crd_schemas.KYMA_FUNCTION, function) == []


# -- real servers with the manifests' environment --------------------------------


@pytest.fixture(scope="module", params=["knative", "kubernetes"])
def manifest_server(request, dry_runs, orders: Path):
    """gunicorn serving the project with the environment of the target's container."""
    documents = dry_runs[request.param]
    workload = Workload(documents[0])
    container = workload.containers[0]
    with serve_with(workload.env(container), HANDLER_FOLDER=str(orders)) as server:
        yield workload, container, server


def test_the_runtime_answers_the_probes_and_serves_with_the_manifest_environment(manifest_server):
    workload, container, server = manifest_server
    for kind in ("readinessProbe", "livenessProbe"):
        path = container[kind]["httpGet"]["path"]
        assert requests.get(server.url + path, timeout=5).status_code == 200, f"{kind} {path}"
    scrape = requests.get(server.url + workload.pod_annotations["prometheus.io/path"], timeout=5)
    assert scrape.status_code == 200 and "function_calls_total" in scrape.text
    assert requests.get(server.url + "/", timeout=5).json() == {"greeting": "hi", "function": "orders", "namespace": "default"}


def test_the_kyma_function_is_served_as_kymas_controller_runs_it(dry_runs, tmp_path: Path):
    (function,) = dry_runs["kyma"]
    folder = tmp_path / "kubeless"
    folder.mkdir()
    (folder / "handler.py").write_text(function["spec"]["source"]["inline"]["source"])
    with serve_with(kyma_controller_env(function, str(folder)), [str(BIN / "python"), "-m", "funcwsgi"], tmp_path) as server:
        assert requests.get(server.url + "/healthz", timeout=5).text == "OK"
        assert requests.get(server.url + "/", timeout=5).json() == {"greeting": "hi", "function": "orders", "namespace": None}
        assert "Starting python314 server" in server.stdout


# -- what func.yaml a target refuses, in one line ---------------------------------


@pytest.mark.parametrize(
    ("extra", "target", "message"),
    [
        ("scale: {min: 0}\n", "kubernetes", "scale.min is 0, which only Knative can do (scale to zero); set 1 or more for --target kubernetes"),
        ("envs: {FUNC_PORT: '9000'}\n", "kyma", "envs.FUNC_PORT cannot be set on Kyma: its Function controller sets it"),
        ("labels: {serverless.kyma-project.io/x: y}\n", "kyma", "labels.serverless.kyma-project.io/x cannot be set on Kyma: the Function schema reserves it"),
        ("resources: {limits: {memory: 1Gi}}\n", "kubernetes", "resources.requests.cpu is missing: --target kubernetes adds pods on CPU use"),
        ("resources: {requests: {cpu: 1500m, memory: 1Gi}, limits: {cpu: 2, memory: 512Mi}}\n", "knative",
         "resources.requests.memory 1Gi is above resources.limits.memory 512Mi: a pod cannot be guaranteed more than it may use"),
        ("labels: {team: 'two words'}\n", "knative", "labels.team is 'two words': expected at most 63 letters"),
        ("resources: {requests: {cpu: lots}}\n", "knative", "resources.requests.cpu is 'lots': expected a Kubernetes quantity"),
        ("deploy: {target: lambda}\n", "", "deploy.target is 'lambda': expected one of knative, kubernetes, kyma"),
        ("timeout: 30\nenvs: {SERVER_CALL_TIMEOUT: '9'}\n", "", "timeout and envs.SERVER_CALL_TIMEOUT both set the call timeout; keep one of them"),
        ("secrets: [Bad_Name]\n", "", "secrets is a list: expected a list of Kubernetes Secret names, such as [db-credentials, api-keys]; 'Bad_Name' is not one"),
        ("secrets: [db, db]\n", "", "expected a list of Kubernetes Secret names, such as [db-credentials, api-keys], each once"),
        ("secrets: [db]\nenvs: {HANDLER_SECRETS_PATH: /s}\n", "", "secrets and envs.HANDLER_SECRETS_PATH both say where secrets are"),
    ],
)
def test_what_a_target_cannot_take_is_one_line(tmp_path: Path, extra: str, target: str, message: str):
    project = write_project(tmp_path / "f", f"name: f\nimage: registry.example/f:1\n{extra}")
    result = funcwsgi("deploy", "--dry-run", *(["--target", target] if target else []), cwd=project)
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("funcwsgi: error: ") and message in line, line


SECRETS = ("db-credentials", "api-keys")


@pytest.fixture(scope="module")
def secret_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    project = write_project(tmp_path_factory.mktemp("secrets") / "orders", FUNC_YAML + f"secrets: [{', '.join(SECRETS)}]\n")
    documents = {}
    for target in ("knative", "kubernetes", "kyma"):
        result = funcwsgi("deploy", "--dry-run", "--target", target, cwd=project)
        assert result.returncode == 0, result.stderr
        documents[target] = [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]
    return documents


def test_secrets_are_one_read_only_projected_folder_on_knative_and_kubernetes(secret_runs):
    (service,) = secret_runs["knative"]
    assert crd_schemas.errors(crd_schemas.KNATIVE_SERVICE, service) == []
    deployment = secret_runs["kubernetes"][0]
    kubernetes.validate(deployment, KUBERNETES_VERSIONS[-1], strict=True)
    expected = {"name": "secrets", "projected": {"sources": [{"secret": {"name": name}} for name in SECRETS]}}
    for pod in (service["spec"]["template"]["spec"], deployment["spec"]["template"]["spec"]):
        assert_valid(POD_SPEC, {k: v for k, v in pod.items() if k not in KNATIVE_REVISION_FIELDS}, "pod")
        assert expected in pod["volumes"]
        (container,) = pod["containers"]
        assert {"name": "secrets", "mountPath": "/workspace/secret", "readOnly": True} in container["volumeMounts"]
        # Where the runtime looks by default: no setting needed.
        assert "HANDLER_SECRETS_PATH" not in env_of(container)
        assert "/workspace/secret" in Config.from_env({}).handler_secrets_path


def test_secrets_are_kyma_secret_mounts_the_runtime_is_told_of(secret_runs):
    (function,) = secret_runs["kyma"]
    assert crd_schemas.errors(crd_schemas.KYMA_FUNCTION, function) == []
    mounts = function["spec"]["secretMounts"]
    assert mounts == [{"secretName": name, "mountPath": f"/workspace/secret/{name}"} for name in SECRETS]
    folders = env_of(function["spec"])["HANDLER_SECRETS_PATH"]
    assert Config.from_env({"HANDLER_SECRETS_PATH": folders}).handler_secrets_path == tuple(m["mountPath"] for m in mounts)


def test_without_secrets_nothing_is_mounted(dry_runs):
    assert "volumes" not in dry_runs["knative"][0]["spec"]["template"]["spec"]
    assert "secretMounts" not in dry_runs["kyma"][0]["spec"]


def test_deploy_target_in_func_yaml_is_the_default(tmp_path: Path):
    project = write_project(tmp_path / "f", "name: f\ndeploy: {target: kyma}\n")
    result = funcwsgi("deploy", "--dry-run", cwd=project)
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["kind"] == "Function"


# -- the apply path, against a fake kubectl ---------------------------------------

FAKE_KUBECTL = r'''
import json, os, sys, time
import yaml

args = sys.argv[1:]
stdin = sys.stdin.read() if "-" in args else ""
with open(os.environ["FAKE_KUBECTL_LOG"], "a") as log:
    log.write(json.dumps({"args": args, "stdin": stdin}) + "\n")
mode = os.environ.get("FAKE_KUBECTL_MODE", "ok")
if args[:2] == ["config", "current-context"]:
    if mode == "no-context":
        sys.exit("error: current-context is not set")
    print("test-cluster")
    sys.exit(0)
if args[:2] == ["config", "view"]:
    print("from-context")
    sys.exit(0)
assert args[:2] == ["--context", "test-cluster"], args
verb = args[2]
if verb == "apply":
    if mode == "no-crd":
        sys.stderr.write('error: resource mapping not found for name: "orders" namespace: "shop" from "STDIN": no matches for kind "Service" in version "serving.knative.dev/v1"\nensure CRDs are installed first\n')
        sys.exit(1)
    for doc in yaml.safe_load_all(stdin):
        print(f"{doc['kind'].lower()}/{doc['metadata']['name']} serverside-applied")
elif verb == "wait":
    if mode == "not-ready":
        sys.exit("error: timed out waiting for the condition on services/orders")
    if mode == "slow":
        time.sleep(3)
    print(f"{args[-1]} condition met")
elif verb == "rollout":
    print('Waiting for deployment "orders" rollout to finish: 0 of 2 updated replicas are available...')
    print('Waiting for deployment "orders" rollout to finish: 1 of 2 updated replicas are available...')
    print('deployment "orders" successfully rolled out')
elif verb == "get":
    if "jsonpath={.status.url}" in args:
        print("https://orders.shop.example.com", end="")
    elif mode == "slow":
        print('Configuration "orders" is waiting for a Revision to become ready.', end="")
    else:
        print('Revision "orders-00001" failed with message: Back-off pulling image "registry.example/team/orders:1.2".', end="")
else:
    sys.exit(f"fake kubectl: unexpected {args}")
'''


@pytest.fixture
def kubectl(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A PATH whose kubectl is the fake, and the file its calls are recorded in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "kubectl"
    fake.write_text(f"#!{sys.executable}\n{FAKE_KUBECTL}")
    fake.chmod(0o755)
    log = tmp_path / "kubectl.log"
    env = base_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_KUBECTL_LOG=str(log))
    return env, log


def test_deploy_applies_server_side_waits_and_prints_the_url(orders: Path, kubectl, dry_runs):
    env, log = kubectl
    result = funcwsgi("deploy", "--image", "registry.example/team/orders:9", "--timeout", "120", cwd=orders, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Function 'orders' is ready at https://orders.shop.example.com\n"
    recorded = json_lines(log)
    assert [c["args"][:2] for c in recorded[:2]] == [["config", "current-context"], ["config", "view"]]
    # Leaving out the looks at the condition, which a slow machine may take while kubectl waits.
    apply, wait, get = [c for c in recorded[2:] if not c["args"][-1].endswith(".message}")]
    assert apply["args"] == ["--context", "test-cluster", "apply", "--server-side", "--field-manager=funcwsgi", "-f", "-"]
    (applied,) = list(yaml.safe_load_all(apply["stdin"]))
    expected = yaml.safe_load(yaml.safe_dump(dry_runs["knative"][0]))
    expected["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/team/orders:9"
    assert applied == expected, "kubectl gets what --dry-run prints, with the image given"
    assert wait["args"] == ["--context", "test-cluster", "wait", "--for=condition=Ready", "--timeout=120s", "--namespace", "shop", "services.serving.knative.dev/orders"]
    assert get["args"][-2:] == ["--output", "jsonpath={.status.url}"]
    assert "Deploying 'orders' (knative, image registry.example/team/orders:9) to namespace 'shop' of kubectl context 'test-cluster'" in result.stderr
    assert "service/orders serverside-applied" in result.stderr
    assert "Waiting up to 120 s for services.serving.knative.dev/orders in 'shop' to be ready" in result.stderr


def test_a_slow_service_shows_its_condition_while_kubectl_waits(orders: Path, kubectl):
    env, log = kubectl
    result = funcwsgi("deploy", "--image", IMAGE, cwd=orders, env={**env, "FAKE_KUBECTL_MODE": "slow"})
    assert result.returncode == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if "waiting for a Revision" in line]
    assert len(progress) == 1, "a condition message is shown once, not at every look"
    assert progress[0].strip().endswith('s: Configuration "orders" is waiting for a Revision to become ready.')
    looks = [c["args"][-1] for c in json_lines(log) if c["args"][2:3] == ["get"]]
    assert looks[0] == 'jsonpath={.status.conditions[?(@.type=="Ready")].message}' and looks[-1] == "jsonpath={.status.url}"


def test_kubernetes_rollout_progress_reaches_the_terminal(tmp_path: Path, kubectl):
    env, log = kubectl
    project = write_project(tmp_path / "orders", FUNC_YAML.replace("namespace: shop\n", ""))
    result = funcwsgi("deploy", "--target", "kubernetes", "--image", IMAGE, cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert "1 of 2 updated replicas are available" in result.stderr and 'deployment "orders" successfully rolled out' in result.stderr
    assert result.stdout == "Function 'orders' is ready at http://orders.from-context.svc.cluster.local\n"
    apply, rollout = json_lines(log)[2:]
    kinds = [(d["kind"], d["metadata"]["namespace"]) for d in yaml.safe_load_all(apply["stdin"])]
    assert kinds == [("Deployment", "from-context"), ("Service", "from-context"), ("HorizontalPodAutoscaler", "from-context")], "the context's namespace"
    assert rollout["args"][2:] == ["rollout", "status", "--namespace", "from-context", "--timeout=300s", "deployment/orders"]


def test_kyma_waits_for_the_function_to_run(orders: Path, kubectl):
    env, log = kubectl
    result = funcwsgi("deploy", "--target", "kyma", "--image", IMAGE, "--namespace", "team", cwd=orders, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Function 'orders' is ready at http://orders.team.svc.cluster.local\n"
    (wait,) = [c for c in json_lines(log) if c["args"][2:3] == ["wait"]]
    assert wait["args"][2:] == ["wait", "--for=condition=Running", "--timeout=300s", "--namespace", "team", "functions.serverless.kyma-project.io/orders"]


def test_a_function_that_never_gets_ready_is_one_line_with_the_reason(orders: Path, kubectl):
    env, _ = kubectl
    result = funcwsgi("deploy", "--image", IMAGE, "--timeout", "5", cwd=orders, env={**env, "FAKE_KUBECTL_MODE": "not-ready"})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "funcwsgi: error: services.serving.knative.dev/orders was not ready within 5 s: "
        "Revision \"orders-00001\" failed with message: Back-off pulling image \"registry.example/team/orders:1.2\".; "
        "see 'kubectl describe --namespace shop services.serving.knative.dev/orders'"
    )


def test_a_cluster_without_knative_is_named(orders: Path, kubectl):
    env, log = kubectl
    result = funcwsgi("deploy", "--image", IMAGE, cwd=orders, env={**env, "FAKE_KUBECTL_MODE": "no-crd"})
    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert last.startswith("funcwsgi: error: the cluster of context 'test-cluster' does not know the kinds --target makes; is Knative Serving installed?")
    assert [c["args"][2] for c in json_lines(log)[2:]] == ["apply"], "nothing is awaited after a failed apply"


def test_no_kubectl_is_one_line(orders: Path, tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = funcwsgi("deploy", "--image", IMAGE, cwd=orders, env=base_env(PATH=str(empty)))
    assert result.returncode == 2
    assert result.stderr == "funcwsgi: error: deploy needs kubectl and it is not installed (not on PATH); install it, or print the manifests with --dry-run\n"


def test_no_current_context_is_one_line(orders: Path, kubectl):
    env, log = kubectl
    result = funcwsgi("deploy", "--image", IMAGE, cwd=orders, env={**env, "FAKE_KUBECTL_MODE": "no-context"})
    assert result.returncode == 2
    assert result.stderr == (
        "funcwsgi: error: kubectl has no current context (error: current-context is not set); "
        "choose a cluster with 'kubectl config use-context NAME', or print the manifests with --dry-run\n"
    )
    assert len(json_lines(log)) == 1


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed (Debian's kubernetes-client has one)")
def test_real_kubectl_without_a_context_is_one_line(orders: Path, tmp_path: Path):
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    result = funcwsgi("deploy", "--image", IMAGE, cwd=orders, env=base_env(KUBECONFIG=str(config), HOME=str(tmp_path)))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("funcwsgi: error: kubectl has no current context (") and "current-context is not set" in line


def test_deploy_builds_and_pushes_before_it_applies(orders: Path, kubectl, tmp_path: Path):
    env, log = kubectl
    record = tmp_path / "engine.log"
    engine = tmp_path / "engine"
    # Stands in for docker: records each command (build reads the context from stdin).
    engine.write_text(f'#!/bin/sh\necho "$@" >> {record}\nif [ "$1" = build ]; then cat > /dev/null; fi\n')
    engine.chmod(0o755)
    result = funcwsgi("deploy", cwd=orders, env={**env, "CONTAINER_ENGINE": str(engine), "PIP_CERT": ""})
    assert result.returncode == 0, result.stderr
    assert record.read_text().splitlines() == [f"build --tag {IMAGE} -", f"push {IMAGE}"]
    (applied,) = yaml.safe_load_all(json_lines(log)[2]["stdin"])
    assert applied["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    assert f"Pushed image {IMAGE}" in result.stderr


def test_deploy_without_an_image_to_push_says_so_before_building(tmp_path: Path, kubectl):
    env, log = kubectl
    project = write_project(tmp_path / "f", "name: f\n")
    result = funcwsgi("deploy", cwd=project, env=env)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.endswith("func.yaml names no image to push: set image: REGISTRY/f:TAG (a registry the cluster pulls from), or pass --image")
    assert [c["args"][2] for c in json_lines(log) if c["args"][0] == "--context"] == [], "nothing is applied"


def test_the_cli_reference_documents_every_func_yaml_key():
    from funcwsgi.cli.project import SCHEMA

    from ...support.paths import REPO

    page = (REPO / "docs" / "cli.md").read_text()
    table = page.split("## func.yaml", 1)[1].split("\n## ", 1)[0]
    documented = {key for row in re.findall(r"^\| (.+?) \|", table, flags=re.MULTILINE) for key in re.findall(r"`([a-z.]+)`", row)}
    missing = [key.path for key in SCHEMA if key.path not in documented]
    assert not missing, f"docs/cli.md's func.yaml table has no row for {missing}"


@pytest.mark.parametrize(("text", "value"), [("500m", 0.5), ("1", 1.0), ("1.5", 1.5), (".5", 0.5), ("2k", 2000.0), ("1e3", 1000.0), ("256Mi", 256 * 2**20), ("1Gi", 2**30)])
def test_quantities_compare_as_kubernetes_reads_them(text: str, value: float):
    from funcwsgi.cli.manifests import quantity

    assert quantity(text) == pytest.approx(value)
