"""The names test modules once imported from here; they live in tests/support now (import them from there)."""

from .support.paths import BIN, FUNCTIONS, REPO
from .support.ports import free_port
from .support.processes import Server, base_env, debian_tool, run_to_exit

__all__ = ["BIN", "FUNCTIONS", "REPO", "Server", "base_env", "debian_tool", "free_port", "run_to_exit"]
