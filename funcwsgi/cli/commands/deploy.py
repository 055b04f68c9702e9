"""``funcwsgi deploy``: build and push the image, apply the target's manifests with kubectl, wait, print the URL."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

from ...errors import StartupError
from .. import manifests
from ..project import DEPLOY_TARGETS, Project, load_project
from .build import build_image
from .push import push_image, pushed_image

NAME = "deploy"
HELP = "Build and push the image, run the function on Knative, Kubernetes or Kyma with kubectl, and print its URL."
EPILOG = """examples:
  funcwsgi deploy                               # func.yaml's deploy.target (default knative)
  funcwsgi deploy --target kubernetes --namespace shop
  funcwsgi deploy --image registry.example/hello:1  # an image pushed already: no build
  funcwsgi deploy --target kyma --dry-run       # print the manifests, apply nothing

Without --image it builds func.yaml's image (as 'funcwsgi build' does) and
pushes it (as 'funcwsgi push' does). Then it applies the manifests made from
func.yaml with 'kubectl apply --server-side' to kubectl's current context,
waits until the function is ready (at most --timeout seconds), and prints its
URL. The namespace is --namespace, else func.yaml's namespace, else the
context's. Targets: knative (a Knative Service), kubernetes (Deployment,
Service, HorizontalPodAutoscaler), kyma (a Kyma Function with the handler's
source inline). --dry-run needs neither docker nor kubectl.

exit status: 0 when the function is ready, 1 when the build, the push, the
apply or the wait failed, 2 for a bad func.yaml or argument, no kubectl or no
current context.
"""
DEFAULT_WAIT = 300
#: Seconds between looks at a Knative Service's or Kyma Function's condition while kubectl waits.
PROGRESS_SECONDS = 2.0
FIELD_MANAGER = "funcwsgi"


@dataclass(frozen=True)
class Target:
    """How kubectl names what a target makes, waits for it, and finds its address."""

    resource: str  # the object to wait for, as kubectl names it
    condition: str  # kubectl wait --for=condition=...; "" for rollout status
    platform: str  # what must be installed in the cluster, for the error when it is not


TARGETS = {
    "knative": Target("services.serving.knative.dev", "Ready", "Knative Serving"),
    "kubernetes": Target("deployment", "", "Kubernetes"),
    "kyma": Target("functions.serverless.kyma-project.io", "Running", "Kyma's Serverless module"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR", help="the function's folder (default: the current folder)")
    parser.add_argument("--target", "-t", choices=DEPLOY_TARGETS, help="what to make (default: func.yaml's deploy.target, else knative)")
    parser.add_argument("--image", "-i", help="an image pushed already: deploy it without building (default: build and push func.yaml's image)")
    parser.add_argument("--namespace", "-n", help="the namespace (default: func.yaml's namespace, else the kubectl context's)")
    parser.add_argument("--dry-run", action="store_true", help="print the manifests as YAML and apply nothing")
    parser.add_argument(
        "--timeout", type=int, default=DEFAULT_WAIT, metavar="SECONDS",
        help=f"how long to wait until the function is ready (default {DEFAULT_WAIT})",
    )


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    project = load_project(args.directory)
    target = args.target or project.deploy_target or manifests.DEFAULT_TARGET
    if args.timeout < 1:
        raise StartupError(f"--timeout {args.timeout} is invalid: expected a number of seconds, 1 or more")
    if args.dry_run:
        image = args.image or project.default_image
        documents = manifests.generate(project, target, image, args.namespace or project.namespace)
        header = f"funcwsgi deploy --target {target}: {project.name!r} from {project.root / 'func.yaml'}; apply with 'kubectl apply --server-side -f -'"
        sys.stdout.write(manifests.render(documents, header=header))
        return 0
    kubectl = Kubectl.find()
    namespace = args.namespace or project.namespace or kubectl.namespace or "default"
    # Checked before a long build: a func.yaml the target cannot take stops here.
    manifests.generate(project, target, args.image or project.default_image, namespace)
    image = args.image or build_and_push(project)
    if image is None:
        return 1
    documents = manifests.generate(project, target, image, namespace)
    say(f"Deploying {project.name!r} ({target}, image {image}) to namespace {namespace!r} of kubectl context {kubectl.context!r} ...")
    if not kubectl.apply(manifests.render(documents), TARGETS[target]):
        return 1
    if not kubectl.wait(target, project.name, namespace, args.timeout):
        return 1
    print(f"Function {project.name!r} is ready at {kubectl.url(target, project.name, namespace)}")
    if target != "knative":
        say(f"(inside the cluster; from this machine: kubectl port-forward -n {namespace} service/{project.name} 8080:80)")
    return 0


def build_and_push(project: Project) -> str | None:
    image = pushed_image(project, None)
    if build_image(project, image, extra=[], keep=False, runtime_image=None) != 0:
        return None
    return image if push_image(image) == 0 else None


class Kubectl:
    """kubectl, bound to the context that was current when the deploy started."""

    def __init__(self, path: str, context: str, namespace: str) -> None:
        self.path = path
        self.context = context
        self.namespace = namespace

    @classmethod
    def find(cls) -> Kubectl:
        path = shutil.which("kubectl")
        if path is None:
            raise StartupError("deploy needs kubectl and it is not installed (not on PATH); install it, or print the manifests with --dry-run")
        found = subprocess.run([path, "config", "current-context"], capture_output=True, text=True, check=False)
        context = found.stdout.strip()
        if found.returncode != 0 or not context:
            reason = _last_line(found.stderr) or "none is set"
            raise StartupError(
                f"kubectl has no current context ({reason}); choose a cluster with 'kubectl config use-context NAME', or print the manifests with --dry-run"
            )
        view = subprocess.run([path, "config", "view", "--minify", "--output", "jsonpath={..namespace}"], capture_output=True, text=True, check=False)
        return cls(path, context, view.stdout.strip() if view.returncode == 0 else "")

    def command(self, *args: str) -> list[str]:
        return [self.path, "--context", self.context, *args]

    def apply(self, stream: str, target: Target) -> bool:
        command = self.command("apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "-f", "-")
        result = subprocess.run(command, input=stream, capture_output=True, text=True, check=False)
        for line in result.stdout.splitlines():
            say(f"  {line}")
        if result.returncode == 0:
            return True
        errors = result.stderr
        if "no matches for kind" in errors or "ensure CRDs are installed" in errors:
            problem = f"the cluster of context {self.context!r} does not know the kinds --target makes; is {target.platform} installed? ({_last_line(errors)})"
        elif "unable to connect to the server" in errors.lower():
            problem = f"cannot reach the cluster of context {self.context!r}: {_last_line(errors)}"
        else:
            problem = f"kubectl apply failed (exit status {result.returncode}): {_last_line(errors) or 'no reason given'}"
        say(f"funcwsgi: error: {problem}")
        return False

    def wait(self, target_name: str, name: str, namespace: str, timeout: int) -> bool:
        target = TARGETS[target_name]
        thing = f"{target.resource}/{name}"
        say(f"Waiting up to {timeout} s for {thing} in {namespace!r} to be ready ...")
        if target.condition:
            command = self.command("wait", f"--for=condition={target.condition}", f"--timeout={timeout}s", "--namespace", namespace, thing)
        else:
            command = self.command("rollout", "status", "--namespace", namespace, f"--timeout={timeout}s", thing)
        # kubectl's own progress lines ("Waiting for deployment ... 1 of 2 updated replicas are available") go straight to the terminal;
        # kubectl wait says nothing until it is done, so the awaited condition's message is shown whenever it changes.
        started = time.monotonic()
        waiting = subprocess.Popen(command, stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
        shown = ""
        while True:
            try:
                errors = waiting.communicate(timeout=PROGRESS_SECONDS)[1]
                break
            except subprocess.TimeoutExpired:
                message = self.not_ready_reason(target, name, namespace)
                if message and message != shown:
                    say(f"  {time.monotonic() - started:.0f} s: {message}")
                    shown = message
        if waiting.returncode == 0:
            return True
        why = self.not_ready_reason(target, name, namespace) or _last_line(errors) or f"kubectl exit status {waiting.returncode}"
        say(f"funcwsgi: error: {thing} was not ready within {timeout} s: {why}; see 'kubectl describe --namespace {namespace} {thing}'")
        return False

    def not_ready_reason(self, target: Target, name: str, namespace: str) -> str:
        """The message of the condition that was awaited, when the object says why it is not there yet."""
        if not target.condition:
            return ""
        path = f'jsonpath={{.status.conditions[?(@.type=="{target.condition}")].message}}'
        command = self.command("get", "--namespace", namespace, f"{target.resource}/{name}", "--output", path)
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        return result.stdout.strip() if result.returncode == 0 else ""

    def url(self, target_name: str, name: str, namespace: str) -> str:
        if target_name == "knative":
            result = subprocess.run(
                self.command("get", "--namespace", namespace, f"{TARGETS['knative'].resource}/{name}", "--output", "jsonpath={.status.url}"),
                capture_output=True, text=True, check=False,
            )
            if result.returncode == 0 and result.stdout.strip():
                return result.stdout.strip()
        # The Service in front of the pods (Kyma makes one of the Function's name, port 80, too).
        return f"http://{name}.{namespace}.svc.cluster.local"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
