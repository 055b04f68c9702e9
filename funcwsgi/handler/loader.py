"""Find, import and check the user's function at start-up.

Every failure is a :class:`LoadError` whose message is one line naming the
file, the function and what was found instead; when the user's own module
raised, the user's traceback (not the runtime's frames) rides along.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from types import ModuleType
from typing import Any

from ..config import DEFAULT_FOLDERS, DEFAULT_MODULES, Config
from ..errors import LoadError
from .signatures import Signature, detect_signature

_LISTED_ENTRIES = 20

#: The extra that installs a framework, for the message when it is missing.
EXTRAS = {"flask": "funcwsgi[flask]", "functions_framework": "functions-framework"}


def source_tree(path: str) -> ast.Module | None:
    """The syntax tree of the Python file ``path``, without running it; None when it is missing or does not parse."""
    try:
        with open(path, "rb") as handle:
            return ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None


def imported_modules(module: ModuleType | None) -> frozenset[str]:
    """Top-level names of the modules ``module``'s source imports anywhere in it."""
    path = getattr(module, "__file__", None)
    tree = source_tree(path) if path else None
    if tree is None:
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".", 1)[0])
    return frozenset(names)


class LoadedFunction:
    """The user's function and what was learnt about it once, at load time.

    Immutable, with equality and a ``repr`` as a frozen dataclass has them, but
    written out: a frozen dataclass compiles six methods at every start, about
    4 million instructions (docs/performance.md, issue 44).
    """

    __slots__ = ("function", "signature", "name", "path", "module", "hooks", "imports", "folder", "routes")

    function: Callable[..., Any]
    signature: Signature
    name: str
    path: str
    module: ModuleType | None
    hooks: dict[str, Callable[..., Any]]
    #: Top-level modules the function's module imports (``flask``, ``bottle``...).
    imports: frozenset[str]
    #: The folder the module was loaded from.
    folder: str
    #: ``POST`` paths the platform's contract answers itself, not calls of the function (Fission's specialise calls).
    routes: dict[str, Callable[..., Any]]

    def __init__(
        self,
        function: Callable[..., Any],
        signature: Signature,
        name: str,
        path: str = "<callable>",
        module: ModuleType | None = None,
        hooks: dict[str, Callable[..., Any]] | None = None,
        imports: frozenset[str] = frozenset(),
        folder: str = ".",
        routes: dict[str, Callable[..., Any]] | None = None,
    ) -> None:
        values = (function, signature, name, path, module, {} if hooks is None else hooks, imports, folder, {} if routes is None else routes)
        for slot, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, slot, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, slot) for slot in self.__slots__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # hooks is a dict

    def __repr__(self) -> str:
        shown = ", ".join(f"{slot}={getattr(self, slot)!r}" for slot in self.__slots__)
        return f"LoadedFunction({shown})"

    def replace(self, **changes: Any) -> LoadedFunction:
        """A copy with ``changes``, as ``dataclasses.replace`` makes one."""
        return LoadedFunction(**{slot: changes.pop(slot, getattr(self, slot)) for slot in self.__slots__}, **changes)


HOOK_NAMES = ("start", "stop", "ready", "alive")


def find_sources(config: Config) -> Config:
    """``config`` with the folder and module that no setting named found among the files that exist.

    Done at start-up, before the function is loaded (reading the settings does
    no I/O). An explicit setting is never second-guessed. Unset, the folder is
    the first of :data:`~funcwsgi.config.DEFAULT_FOLDERS` holding the module
    file and the module the first of :data:`~funcwsgi.config.DEFAULT_MODULES`
    found there. When none is found the module stays the default and the
    folder is the last of them that exists, so the loading error names the
    most specific place: the runtime image's empty ``/function``, else the
    reference document's ``/handler.py``.
    """
    folders = [config.handler_folder] if "handler_folder" in config.given else list(DEFAULT_FOLDERS)
    modules = [config.handler_module_name] if "handler_module_name" in config.given else list(DEFAULT_MODULES)
    if len(folders) == 1 and len(modules) == 1:
        return config
    for folder in folders:
        for module in modules:
            if os.path.isfile(os.path.join(folder, module + ".py")):
                return config.replace(handler_folder=folder, handler_module_name=module)
    if len(folders) > 1:
        return config.replace(handler_folder=next((folder for folder in reversed(folders) if os.path.isdir(folder)), folders[0]))
    return config


def load_function(config: Config) -> LoadedFunction:
    """Import ``HANDLER_FOLDER/HANDLER_MODULE_NAME.py`` and return its function."""
    folder = os.path.abspath(config.handler_folder)
    path = os.path.join(folder, config.handler_module_name + ".py")
    _check_folder(config.handler_folder, folder, path)
    module = _import_module(config.handler_module_name, folder, path)
    name = config.handler_function_name
    function = getattr(module, name, None)
    if function is None:
        found = _callables(module)
        listing = ", ".join(found) if found else "no functions"
        raise LoadError(f"no function {name!r} in {path}; found: {listing}")
    if not callable(function):
        kind = type(function).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        raise LoadError(f"{name!r} in {path} is {article} {kind}, not a function")
    hooks = {hook: checked_hook(module, hook, path) for hook in HOOK_NAMES if hook != name and hasattr(module, hook)}
    return _learnt(function, config, name, path, module, folder, where=f"{name!r} in {path}", hooks=hooks)


def checked_hook(module: ModuleType, hook: str, path: str) -> Callable[..., Any]:
    """The module's ``hook`` (``start``, ``stop``, ``ready``, ``alive``), checked as the runtime will call it: with no arguments.

    Raises :class:`LoadError` when it is not callable or needs arguments, so a
    hook that would fail at its first use stops the server before it serves.
    """
    value: object = getattr(module, hook)
    if not callable(value):
        raise LoadError(f"{hook!r} in {path} is a {type(value).__name__}, not a function; the runtime calls {hook}() with no arguments")
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return value  # builtins and some C callables hide their signature: trusted, as for the function
    required = [
        parameter.name
        for parameter in parameters
        if parameter.default is inspect.Parameter.empty
        and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if required:
        raise LoadError(
            f"{hook}() in {path} requires {len(required)} argument(s) ({', '.join(required)}); the runtime calls {hook}() with none"
        )
    return value


def wrap_callable(function: Callable[..., Any], config: Config) -> LoadedFunction:
    """A function handed over in code (``make_app(function)``), checked like a loaded one."""
    if not callable(function):
        raise LoadError(f"make_app() needs a callable, got a {type(function).__name__}")
    name = getattr(function, "__name__", type(function).__name__)
    module = inspect.getmodule(function)
    path = getattr(module, "__file__", None) or "<callable>"
    folder = os.path.dirname(path) if path != "<callable>" else os.getcwd()
    return _learnt(function, config, name, path, module, folder, where=f"{name!r}")


def _learnt(
    function: Callable[..., Any], config: Config, name: str, path: str, module: ModuleType | None, folder: str,
    *, where: str, hooks: dict[str, Callable[..., Any]] | None = None,
) -> LoadedFunction:
    """``function`` with what is learnt about it once, however it came: its signature and its module's imports."""
    return LoadedFunction(
        function=function,
        signature=detect_signature(function, config.handler_signature, where=where),
        name=name,
        path=path,
        module=module,
        hooks=hooks or {},
        imports=imported_modules(module),
        folder=folder,
    )


def _check_folder(configured: str, folder: str, path: str) -> None:
    if not os.path.exists(folder):
        raise LoadError(f"HANDLER_FOLDER {configured!r} does not exist")
    if not os.path.isdir(folder):
        raise LoadError(f"HANDLER_FOLDER {configured!r} is a file, expected the folder that holds the function")
    if os.path.isfile(path):
        return
    if os.path.isdir(path):
        raise LoadError(f"{path} is a folder, expected the function's module file")
    try:
        entries = sorted(os.listdir(folder))
    except OSError as error:
        raise LoadError(f"HANDLER_FOLDER {configured!r} cannot be read: {error.strerror}") from None
    if not entries:
        raise LoadError(f"no {os.path.basename(path)} in {folder}: the folder is empty")
    shown = ", ".join(entries[:_LISTED_ENTRIES])
    more = f" and {len(entries) - _LISTED_ENTRIES} more" if len(entries) > _LISTED_ENTRIES else ""
    raise LoadError(f"no {os.path.basename(path)} in {folder}; the folder holds: {shown}{more}")


def _import_module(module_name: str, folder: str, path: str) -> ModuleType:
    # The folder goes first on sys.path so the function can import its siblings.
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for exotic paths
        raise LoadError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        _restore(module_name, previous)
        # A null byte in the source is a SyntaxError with no line number.
        where = f"{error.filename or path}" + (f" line {error.lineno}" if error.lineno else "")
        detail = "".join(traceback.format_exception_only(type(error), error))
        raise LoadError(f"syntax error in {where}: {error.msg}", detail) from None
    except ImportError as error:
        _restore(module_name, previous)
        missing = error.name or "a module"
        extra = EXTRAS.get(missing.split(".", 1)[0])
        hint = f"install {extra}" if extra else "is it in the function's requirements?"
        raise LoadError(
            f"{path} failed to import {missing!r}: {error}; {hint}",
            user_traceback(error, path),
        ) from None
    except BaseException as error:  # the user's module may raise anything, SystemExit included
        _restore(module_name, previous)
        raise LoadError(
            f"importing {path} raised {type(error).__name__}: {error}",
            user_traceback(error, path),
        ) from None
    return module


def _restore(module_name: str, previous: ModuleType | None) -> None:
    if previous is None:
        sys.modules.pop(module_name, None)
    else:
        sys.modules[module_name] = previous


def user_traceback(error: BaseException, path: str) -> str:
    """The traceback from the user's file onwards, without the runtime's frames."""
    tb = error.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb or error.__traceback__))


def _callables(module: ModuleType) -> list[str]:
    own = [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and callable(value) and getattr(value, "__module__", None) == module.__name__
    ]
    return sorted(own)
