"""A function project on disk and its ``func.yaml``.

``func.yaml`` is the one file that tells the CLI how to run and build a
function. Its keys are declared once, in :data:`SCHEMA`; :func:`load_project`
reads and checks the file once and returns a frozen :class:`Project`. A bad
value stops the command with the key and the problem; an unknown key is
reported (it may be a typo) and otherwise ignored, so a newer file still works
with an older CLI.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StartupError

FUNC_YAML = "func.yaml"
RUNTIME = "python"
NODEJS26 = "nodejs26"
#: The runtimes a project may name: Python functions (funcwsgi) and Node functions (nodejs26/ of this repository).
RUNTIMES = (RUNTIME, NODEJS26)
#: What each runtime's handler module is called on disk, for func.yaml's comment.
MODULE_FILES = {RUNTIME: "handler.py", NODEJS26: "handler.js"}
DEFAULT_HANDLER_MODULE = "handler"
DEFAULT_HANDLER_FUNCTION = "main"
#: A Kubernetes service name (RFC 1035 label): what a function's name must be. Starting with a letter also
#: keeps YAML from reading the name as a number (``123``, ``0x1f``); ``true`` and ``null`` are quoted when written.
NAME_PATTERN = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
NAME_EXPECTED = "a lower-case name of letters, digits and '-', starting with a letter, at most 63 characters, such as 'hello-world'"
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Where ``funcwsgi scaffold`` writes by default; with ``scaffolded: true``,
#: ``run`` and ``build`` use the scripts there instead of generating any.
DIST = "dist"
#: The runtime setting func.yaml's ``timeout`` sets.
CALL_TIMEOUT_ENV = "SERVER_CALL_TIMEOUT"
#: What ``funcwsgi deploy`` can make (funcwsgi.cli.manifests generates each).
DEPLOY_TARGETS = ("knative", "kubernetes", "kyma")
#: The compute resources func.yaml's ``resources`` may name.
RESOURCE_NAMES = ("cpu", "memory", "ephemeral-storage")
#: A Kubernetes quantity, as the API server parses one (``500m``, ``256Mi``, ``1``).
QUANTITY_PATTERN = re.compile(r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
#: A Kubernetes object name (RFC 1123 subdomain): what a Secret's name must be.
SECRET_NAME_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
#: The setting that lists where sdk.secret() looks (funcwsgi/config/all_settings.py).
SECRETS_ENV = "HANDLER_SECRETS_PATH"
#: Longest call timeout, in seconds: what Knative accepts as a revision's request timeout at most.
MAX_TIMEOUT = 3600


class ProjectError(StartupError):
    """The project or its ``func.yaml`` cannot be used as it is."""


@dataclass(frozen=True)
class Project:
    """A function project: its folder and what its ``func.yaml`` says."""

    root: Path
    name: str
    namespace: str = ""
    runtime: str = RUNTIME
    template: str = "http"
    image: str = ""
    handler_module: str = DEFAULT_HANDLER_MODULE
    handler_function: str = DEFAULT_HANDLER_FUNCTION
    envs: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    build_args: tuple[str, ...] = ()
    run_args: tuple[str, ...] = ()
    scaffolded: bool = False
    # What `funcwsgi deploy` needs besides the above (funcwsgi.cli.manifests reads them).
    timeout: float | None = None
    scale_min: int | None = None
    scale_max: int | None = None
    requests: dict[str, str] | None = None
    limits: dict[str, str] | None = None
    deploy_target: str = ""
    secrets: tuple[str, ...] = ()
    run_secrets: str = ""

    @property
    def is_node(self) -> bool:
        return self.runtime == NODEJS26

    @property
    def func_dir(self) -> Path:
        """The project's private working folder (``.func``), never under source control."""
        return self.root / ".func"

    @property
    def local_secrets(self) -> Path:
        """The folder ``funcwsgi run`` serves secrets from: ``run.secrets``, else one per function outside the project."""
        if self.run_secrets:
            return (self.root / Path(self.run_secrets).expanduser()).resolve()
        config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        return Path(config_home) / "funcwsgi" / "secrets" / self.name

    @property
    def dist(self) -> Path:
        return self.root / DIST

    @property
    def default_image(self) -> str:
        return self.image or f"{self.name}:latest"

    def function_env(self) -> dict[str, str]:
        """The runtime settings this project gives its function, then its own ``envs``."""
        env = {"FUNC_NAME": self.name}
        # A Node function left at handler.js's main() says nothing: nodejs26 looks for the same, and a
        # platform's layout (an Azure app, a Functions Framework function) is then located by its own files.
        if not (self.is_node and (self.handler_module, self.handler_function) == (DEFAULT_HANDLER_MODULE, DEFAULT_HANDLER_FUNCTION)):
            env["HANDLER_MODULE_NAME"] = self.handler_module
            env["HANDLER_FUNCTION_NAME"] = self.handler_function
        if self.namespace:
            env["FUNC_NAMESPACE"] = self.namespace
        if self.labels:
            env["FUNC_LABELS"] = json.dumps(self.labels, sort_keys=True)
        if self.annotations:
            env["FUNC_ANNOTATIONS"] = json.dumps(self.annotations, sort_keys=True)
        if self.timeout is not None:
            env[CALL_TIMEOUT_ENV] = f"{self.timeout:g}"
        env.update(self.envs)
        return env


# -- the schema: key -> (expected, checker) ------------------------------------
# A checker takes the raw YAML value and returns the typed value or raises
# ValueError with what was expected.

Checker = Callable[[Any], Any]


def _describe(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"the boolean {value!r}".lower()
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"{value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def _string(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError("a string")
    return value


def check_name(value: Any) -> str:
    """A function's name as func.yaml and ``create --name`` take it; ValueError says what was expected."""
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise ValueError(NAME_EXPECTED)
    return value


def _runtime(value: Any) -> str:
    if value not in RUNTIMES:
        raise ValueError(" or ".join(repr(name) for name in RUNTIMES))
    return str(value)


def _identifier(value: Any) -> str:
    if not isinstance(value, str) or not all(part.isidentifier() for part in value.split(".")):
        raise ValueError("a Python identifier")
    return value


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ValueError("a string")


def _string_map(key_pattern: re.Pattern[str] | None) -> Checker:
    def check(value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("a mapping of names to strings")
        result: dict[str, str] = {}
        for key, item in value.items():
            if not isinstance(key, str) or (key_pattern is not None and not key_pattern.match(key)):
                raise _KeyProblem(str(key), "is not a valid name: expected letters, digits and '_', not starting with a digit")
            try:
                result[key] = _scalar_text(item)
            except ValueError:
                raise _KeyProblem(key, f"is {_describe(item)}: expected a string") from None
        return result

    return check


def _args(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        raise ValueError("a list of arguments, such as ['--network', 'host'], not one string")
    if not isinstance(value, list) or not all(isinstance(item, (str, int, float)) and not isinstance(item, bool) for item in value):
        raise ValueError("a list of strings")
    return tuple(str(item) for item in value)


def _timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT:
        raise ValueError(f"a number of seconds above 0 and at most {MAX_TIMEOUT}, such as 60")
    return float(value)


def _replicas(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("a whole number of pods, 0 or more")
    return int(value)


def _resources(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"a mapping of {', '.join(RESOURCE_NAMES)} to quantities, such as {{cpu: 500m, memory: 256Mi}}")
    result: dict[str, str] = {}
    for name, quantity in value.items():
        if name not in RESOURCE_NAMES:
            raise _KeyProblem(str(name), f"is not a resource this CLI sets: expected {', '.join(RESOURCE_NAMES)}")
        text = str(quantity) if isinstance(quantity, (int, float)) and not isinstance(quantity, bool) else quantity
        if not isinstance(text, str) or not QUANTITY_PATTERN.match(text):
            raise _KeyProblem(name, f"is {_describe(quantity)}: expected a Kubernetes quantity such as 500m, 1, 256Mi or 1Gi")
        result[name] = text
    return result


def _secret_names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    expected = "a list of Kubernetes Secret names, such as [db-credentials, api-keys]"
    if not isinstance(value, list):
        raise ValueError(expected)
    for item in value:
        if not isinstance(item, str) or len(item) > 253 or not SECRET_NAME_PATTERN.match(item):
            raise ValueError(f"{expected}; {_describe(item)} is not one")
    if len(set(value)) != len(value):
        raise ValueError(f"{expected}, each once")
    return tuple(value)


def _target(value: Any) -> str:
    if value is None:
        return ""
    if value not in DEPLOY_TARGETS:
        raise ValueError(f"one of {', '.join(DEPLOY_TARGETS)}")
    return str(value)


def _bool(value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ValueError("true or false")
    return value


class _KeyProblem(ValueError):
    """A problem with one entry inside a mapping: names the entry's key."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key
        self.problem = problem


@dataclass(frozen=True)
class Key:
    path: str  # dotted, as in error messages
    attribute: str  # the Project field it fills
    check: Checker
    description: str


SCHEMA: tuple[Key, ...] = (
    Key("name", "name", check_name, "The function's name: a Kubernetes service name; FUNC_NAME at run time."),
    Key("namespace", "namespace", _string, "Namespace to deploy into; FUNC_NAMESPACE at run time."),
    Key("runtime", "runtime", _runtime, "'python' (funcwsgi) or 'nodejs26' (the Node runtime); default 'python'."),
    Key("template", "template", _string, "The template it was created from ('http', 'cloudevent' or a folder); its scaffolding/ overrides the default."),
    Key("image", "image", _string, "Image that 'funcwsgi build' tags, unless --image is given (default NAME:latest)."),
    Key("handler.module", "handler_module", _identifier, "Module holding the function (HANDLER_MODULE_NAME)."),
    Key("handler.function", "handler_function", _identifier, "Function to call in the module (HANDLER_FUNCTION_NAME)."),
    Key("envs", "envs", _string_map(ENV_NAME_PATTERN), "Environment variables the function runs with, NAME: value."),
    Key("labels", "labels", _string_map(None), "Labels, given to the function as FUNC_LABELS."),
    Key("annotations", "annotations", _string_map(None), "Annotations, given to the function as FUNC_ANNOTATIONS."),
    Key("build.args", "build_args", _args, "Extra arguments appended to the image build command (build.sh)."),
    Key("run.args", "run_args", _args, "Extra arguments appended to the service command (run.sh)."),
    Key("run.secrets", "run_secrets", _string, "Folder 'funcwsgi run' serves sdk.secret() from (default ~/.config/funcwsgi/secrets/NAME)."),
    Key("secrets", "secrets", _secret_names, f"Kubernetes Secrets 'funcwsgi deploy' mounts where sdk.secret() reads them ({SECRETS_ENV}), each key a file."),
    Key("scaffolded", "scaffolded", _bool, "true once 'funcwsgi scaffold' wrote ./dist: run and build then use its scripts."),
    Key("timeout", "timeout", _timeout, f"Seconds a call may take ({CALL_TIMEOUT_ENV}); on Knative also the request timeout, a little longer."),
    Key("scale.min", "scale_min", _replicas, "Fewest pods 'funcwsgi deploy' keeps (default 1; 0 scales to zero, Knative only)."),
    Key("scale.max", "scale_max", _replicas, "Most pods 'funcwsgi deploy' allows (default 10)."),
    Key("resources.requests", "requests", _resources, "CPU and memory each pod is guaranteed, e.g. {cpu: 500m, memory: 256Mi}."),
    Key("resources.limits", "limits", _resources, "CPU and memory each pod may use at most, e.g. {cpu: '1', memory: 256Mi}."),
    Key("deploy.target", "deploy_target", _target, f"What 'funcwsgi deploy' makes without --target: {', '.join(DEPLOY_TARGETS)} (default knative)."),
)
_SECTIONS = {key.path.split(".")[0] for key in SCHEMA if "." in key.path}
_KNOWN = [key.path for key in SCHEMA] + sorted(_SECTIONS)


def find_root(start: str | os.PathLike[str]) -> Path:
    """The project folder: ``start`` or the nearest parent holding a ``func.yaml``."""
    folder = Path(start).resolve()
    if not folder.exists():
        raise ProjectError(f"{start} does not exist; create a function there with 'funcwsgi create {start}'")
    for candidate in (folder, *folder.parents):
        if (candidate / FUNC_YAML).is_file():
            return candidate
    raise ProjectError(f"no {FUNC_YAML} in {folder} or its parents; create a function with 'funcwsgi create'")


def load_project(start: str | os.PathLike[str] = ".", *, warn: Callable[[str], None] | None = None) -> Project:
    """Read and check ``func.yaml`` of the project at (or above) ``start``."""
    root = find_root(start)
    path = root / FUNC_YAML
    data = parse_yaml(path)
    return project_from_mapping(root, data, where=str(path), warn=warn or _warn)


def parse_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ProjectError(f"{path} cannot be read: {error}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        line = f" line {error.problem_mark.line + 1}" if error.problem_mark is not None else ""
        raise ProjectError(f"{path}{line} is not valid YAML: {error.problem}") from None
    except yaml.YAMLError as error:
        raise ProjectError(f"{path} is not valid YAML: {error}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProjectError(f"{path} must be a mapping of keys (name: ..., envs: ...), found {_describe(data)}")
    return data


def project_from_mapping(root: Path, data: Mapping[str, Any], *, where: str = FUNC_YAML, warn: Callable[[str], None] | None = None) -> Project:
    flat = _flatten(data, where)
    values: dict[str, Any] = {}
    if "name" not in flat:
        raise ProjectError(f"{where}: name is missing: expected the function's name, such as 'name: {suggest_name(root.name) or 'hello'}'")
    for key in SCHEMA:
        if key.path not in flat:
            continue
        raw = flat.pop(key.path)
        try:
            values[key.attribute] = key.check(raw)
        except _KeyProblem as problem:
            raise ProjectError(f"{where}: {key.path}.{problem.key} {problem.problem}") from None
        except ValueError as error:
            raise ProjectError(f"{where}: {key.path} is {_describe(raw)}: expected {error}") from None
    for unknown in sorted(flat):
        close = difflib.get_close_matches(unknown, _KNOWN, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(key.path for key in SCHEMA)}"
        (warn or _warn)(f"{where}: unknown key {unknown!r} ignored{hint}")
    project = Project(root=root, **values)
    check_consistent(project, where)
    return project


def check_consistent(project: Project, where: str) -> None:
    """Refuse keys that contradict each other, naming both."""
    if project.timeout is not None and CALL_TIMEOUT_ENV in project.envs:
        raise ProjectError(f"{where}: timeout and envs.{CALL_TIMEOUT_ENV} both set the call timeout; keep one of them")
    if project.scale_min is not None and project.scale_max is not None and project.scale_min > project.scale_max:
        raise ProjectError(f"{where}: scale.min {project.scale_min} is above scale.max {project.scale_max}: expected min <= max")
    if project.secrets and SECRETS_ENV in project.envs:
        raise ProjectError(f"{where}: secrets and envs.{SECRETS_ENV} both say where secrets are; keep secrets, deploy mounts them where the runtime looks")
    if project.scale_max == 0:
        raise ProjectError(f"{where}: scale.max is 0: expected at least 1 pod")


def _flatten(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``{"handler": {"module": "x"}}`` as ``{"handler.module": "x"}``, for the sections only."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        key = str(key)
        if key in _SECTIONS:
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ProjectError(f"{where}: {key} is {_describe(value)}: expected a mapping")
            for sub, item in value.items():
                flat[f"{key}.{sub}"] = item
        else:
            flat[key] = value
    return flat


def _warn(message: str) -> None:
    print(f"funcwsgi: warning: {message}", file=sys.stderr)


def suggest_name(folder_name: str) -> str:
    """A valid function name made from a folder name: ``My_Func`` becomes ``my-func``."""
    name = re.sub(r"[^a-z0-9]+", "-", folder_name.lower()).strip("-")[:63].strip("-")
    return name if NAME_PATTERN.match(name) else ""


def render_func_yaml(
    name: str, template: str, runtime: str = RUNTIME, *, module: str = "handler", function: str = "main", envs: dict[str, str] | None = None,
) -> str:
    """The commented ``func.yaml`` that ``funcwsgi create`` writes (a platform template names its own handler and platform)."""
    if envs is None:
        module_file = MODULE_FILES[runtime]
        signature = "export function main(req, res)" if runtime == NODEJS26 else "def main(req, res)"
    else:
        module_file, signature = f"the module {module}", f"its export {function}"
    shown_envs = "{" + ", ".join(f"{key}: {json.dumps(value)}" for key, value in (envs or {}).items()) + "}"
    return f"""\
# How funcwsgi runs and builds this function; every key is described in
# the CLI reference (docs/cli.md, "func.yaml").
name: {json.dumps(name)}
namespace: ""
runtime: {runtime}
template: {json.dumps(template)}
handler:
  module: {module}      # {module_file}
  function: {function}       # {signature}
envs: {shown_envs}              # NAME: value, set for the function when it runs
labels: {{}}
annotations: {{}}
build:
  args: []             # appended to the image build command, e.g. ["--network", "host"]
run:
  args: []             # appended to the service command
  # secrets: ~/.config/funcwsgi/secrets/{name}   # sdk.secret(NAME) reads NAME here locally
secrets: []            # Kubernetes Secrets deploy mounts, e.g. [db-credentials]; each key is a file
scaffolded: false      # 'funcwsgi scaffold' sets this when it writes ./dist
# What 'funcwsgi deploy' makes (image above: where the cluster pulls from).
# timeout: 60          # seconds a call may take (SERVER_CALL_TIMEOUT, default 180)
scale:
  min: 1               # 0 lets Knative scale to zero
  max: 10
resources:
  requests: {{cpu: 500m, memory: 256Mi}}
  limits: {{cpu: "1", memory: 256Mi}}
deploy:
  target: knative      # knative, kubernetes or kyma
"""


def set_scaffolded(root: Path, value: bool = True) -> None:
    """Set ``scaffolded`` in ``func.yaml``, keeping the rest of the file (and its comments) as it is."""
    path = root / FUNC_YAML
    text = path.read_text(encoding="utf-8")
    line = f"scaffolded: {'true' if value else 'false'}"
    pattern = re.compile(r"^scaffolded:[ \t]*[^\s#]*", re.MULTILINE)
    if pattern.search(text):
        text = pattern.sub(line, text, count=1)
    else:
        text = text + ("" if text.endswith("\n") or not text else "\n") + line + "\n"
    path.write_text(text, encoding="utf-8")
