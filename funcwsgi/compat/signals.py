"""Each platform's signals, asked without importing its contract: a plain function never loads those.

:func:`funcwsgi.compat.recognise` asks every platform whether the function
is its own, at every start. Each answer is a few environment variables and
files (what docs/platforms.md lists); the contract modules themselves (their
event shapes, routes, replies) are imported only for the platform chosen.
Each function here is named after its contract's module and returns why the
function is that platform's, or ``None``; the layout helpers the contracts
use to locate the files they recognised live here too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .sources import defines, project_root

if TYPE_CHECKING:
    from ..config import Config

#: AWS SAM's template files.
SAM_TEMPLATE_NAMES = ("template.yaml", "template.yml")
#: The package Knative func-python's and OpenFaaS's templates put the function in.
FUNCTION_PACKAGE = "function"
#: Where Fission mounts the function's code.
FISSION_VOLUME = "/userfunc"


def aws_lambda(config: Config) -> str | None:
    if config.lambda_handler:
        return f"_HANDLER={config.lambda_handler}"
    if config.aws_lambda_function_name:
        return f"AWS_LAMBDA_FUNCTION_NAME={config.aws_lambda_function_name}"
    if config.aws_execution_env:
        return f"AWS_EXECUTION_ENV={config.aws_execution_env}"
    root = config.lambda_task_root or project_root(config)
    for name in SAM_TEMPLATE_NAMES:
        try:
            with open(os.path.join(root, name), encoding="utf-8") as handle:
                if "AWS::Serverless::Function" in handle.read():
                    return f"{os.path.join(root, name)} declares an AWS::Serverless::Function"
        except OSError:
            continue
    return None


def azure(config: Config) -> str | None:
    root = project_root(config)
    if (config.functions_worker_runtime or "").lower() == "python":
        return "FUNCTIONS_WORKER_RUNTIME=python"
    if is_azure_app(root):
        return f"{os.path.join(root, 'host.json')} beside function_app.py or */function.json"
    return None


def is_azure_app(root: str) -> bool:
    if not os.path.isfile(os.path.join(root, "host.json")):
        return False
    if os.path.isfile(os.path.join(root, "function_app.py")):
        return True
    return any(os.path.isfile(os.path.join(root, entry, "function.json")) for entry in entries(root))


def entries(root: str) -> list[str]:
    try:
        return sorted(os.listdir(root))
    except OSError:
        return []


def openfaas(config: Config) -> str | None:
    root = project_root(config)
    located = os.path.basename(os.path.normpath(root)) == FUNCTION_PACKAGE and os.path.isfile(os.path.join(root, "handler.py"))
    path = os.path.join(root, "handler.py") if located else openfaas_handler_file(root)
    if not defines(path, "handle"):
        return None
    if config.openfaas_fprocess:
        return f"fprocess={config.openfaas_fprocess!r} and {path} defines handle"
    if config.openfaas_mode == "http":
        return f"mode=http and {path} defines handle"
    return f"{path} defines handle (the python3-http/python3-flask layout)"


def openfaas_handler_file(root: str) -> str:
    return os.path.join(root, FUNCTION_PACKAGE, "handler.py")


def fission(config: Config) -> str | None:
    if config.fission_userfunc_volume:
        return f"USERFUNCVOL={config.fission_userfunc_volume}"
    if os.path.isdir(FISSION_VOLUME) and not os.path.isfile(config.handler_path):
        return f"{FISSION_VOLUME} exists and {config.handler_path} does not"
    return None


def knative(config: Config) -> str | None:
    root = project_root(config)
    folder = knative_package_folder(root)
    path = knative_module_file(folder)
    if path is None:
        return None
    if config.knative_listen_address:
        return f"LISTEN_ADDRESS={config.knative_listen_address} and {path} defines new or handle"
    project = os.path.dirname(folder)
    if func_yaml(project, "runtime") == "python":
        return f"{os.path.join(project, 'func.yaml')} names the python runtime and {path} defines new or handle"
    return None


def knative_module_file(folder: str) -> str | None:
    for name in ("func.py", "__init__.py"):
        path = os.path.join(folder, name)
        if defines(path, "new") or defines(path, "handle"):
            return path
    return None


def knative_package_folder(root: str) -> str:
    if os.path.basename(os.path.normpath(root)) == FUNCTION_PACKAGE and knative_module_file(root):
        return root  # already located
    return os.path.join(root, FUNCTION_PACKAGE)


def func_yaml(root: str, key: str) -> str | None:
    """A top-level value of the project's ``func.yaml`` (``runtime``, ``invoke``), if there is one."""
    path = os.path.join(root, "func.yaml")
    if not os.path.isfile(path):
        return None
    import yaml  # only when there is a func.yaml: recognising platforms must not import it for every function

    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError):
        return None
    value = document.get(key) if isinstance(document, dict) else None
    return str(value) if value else None
