"""One bounded wrk run against a server, with the server's CPU time over the same window."""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from .processes import cpu_times, pinned

REPORT_SCRIPT = Path(__file__).with_name("wrk_report.lua")
MARKER = "BENCH-JSON "


@dataclass
class LoadResult:
    connections: int
    requests: int
    seconds: float
    requests_per_s: float
    p50_us: int
    p99_us: int
    mean_us: float
    errors: int  # non-2xx/3xx answers plus socket errors
    cpu_us_per_request: float
    system_us_per_request: float  # the kernel's part of it: the sockets, loopback TCP included

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def run_wrk(port: int, server_pid: int, *, connections: int, seconds: float, core: int | None) -> LoadResult:
    """``connections`` keep-alive connections on one wrk thread for ``seconds`` (wrk rounds to whole seconds below 1)."""
    duration = max(1, round(seconds))
    command = pinned(
        ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--timeout", "5s", "-s", str(REPORT_SCRIPT), f"http://127.0.0.1:{port}/"],
        core,
    )
    user_before, system_before = cpu_times(server_pid)
    finished = subprocess.run(command, capture_output=True, text=True, timeout=duration + 30)
    user_after, system_after = cpu_times(server_pid)
    if finished.returncode != 0:
        raise RuntimeError(f"wrk failed ({finished.returncode}): {finished.stderr.strip() or finished.stdout.strip()}")
    report = parse_report(finished.stdout)
    requests = int(report["requests"])
    per_request = 1e6 / requests if requests else 0.0
    elapsed = report["duration_us"] / 1e6
    errors = sum(int(report[key]) for key in ("status_errors", "connect_errors", "read_errors", "write_errors", "timeouts"))
    return LoadResult(
        connections=connections,
        requests=requests,
        seconds=round(elapsed, 3),
        requests_per_s=round(requests / elapsed, 1) if elapsed else 0.0,
        p50_us=int(report["p50_us"]),
        p99_us=int(report["p99_us"]),
        mean_us=float(report["mean_us"]),
        errors=errors,
        cpu_us_per_request=round((user_after - user_before + system_after - system_before) * per_request, 1),
        system_us_per_request=round((system_after - system_before) * per_request, 1),
    )


def parse_report(output: str) -> dict[str, float]:
    for line in output.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])  # type: ignore[no-any-return]
    raise RuntimeError(f"wrk printed no {MARKER.strip()} line:\n{output}")
