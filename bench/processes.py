"""Server processes: start pinned to a core, time the first 200, read CPU and memory from /proc."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.processes import children, http_get, process_tree, stop_group

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def cores() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def server_and_load_cores() -> tuple[int | None, int | None]:
    """The core a measured server is pinned to and the one its load runs on (none pinned on one core)."""
    available = cores()
    return (available[0], available[1]) if len(available) >= 2 else (None, None)


def pinned(command: list[str], core: int | None) -> list[str]:
    """``command`` run on one core only (children inherit it), when the machine has two or more."""
    if core is None:
        return command
    return ["taskset", "-c", str(core), *command]


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU time of ``pid`` and its descendants, in seconds."""
    user = system = 0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        user += int(fields[11])  # utime and stime: fields 14 and 15 of stat
        system += int(fields[12])
    return user / CLOCK_TICKS, system / CLOCK_TICKS


def worker_rss_mb(pid: int) -> float:
    """Resident memory of one serving process: the mean over the tree's leaves (the workers)."""
    tree = process_tree(pid)
    leaves = [member for member in tree if not children(member)] or [pid]
    sizes = []
    for member in leaves:
        try:
            resident_pages = int(Path(f"/proc/{member}/statm").read_text().split()[1])
        except OSError:
            continue
        sizes.append(resident_pages * PAGE_KB / 1024)
    return sum(sizes) / len(sizes) if sizes else 0.0


class ServerFailed(RuntimeError):
    """A server exited, or did not answer 200, within its start-up time."""


@dataclass
class RunningServer:
    process: subprocess.Popen[bytes]
    port: int
    cold_start_ms: float
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        stop_group(self.process)


def start(
    command: list[str], env: dict[str, str], cwd: Path, port: int, log: Path, *, core: int | None, expect: bytes, timeout: float = 60.0
) -> RunningServer:
    """Start a server and wait for its first 200 on ``/``; the wait is its cold start."""
    with log.open("ab") as output:
        started = time.perf_counter()
        process = subprocess.Popen(
            pinned(command, core), env=env, cwd=str(cwd), stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = RunningServer(process, port, 0.0, log)
    deadline = started + timeout
    last = "no answer"
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise ServerFailed(f"exited with status {process.returncode} before answering; see {log}:\n{tail(log)}")
        try:
            status, body = http_get("127.0.0.1", port)
        except OSError:
            time.sleep(0.005)
            continue
        if status == 200 and expect in body:
            server.cold_start_ms = (time.perf_counter() - started) * 1000
            return server
        last = f"status {status}, body {body[:80]!r}"
        time.sleep(0.005)
    server.stop()
    raise ServerFailed(f"no 200 with {expect!r} within {timeout:.0f} s (last: {last}); see {log}:\n{tail(log)}")


def tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
