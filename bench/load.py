"""One bounded wrk run (HTTP/1.1) or h2load run (HTTP/2) against a server, with the server's CPU time over the same window."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
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
    requests_per_s: float  # every answer, refusals included
    ok_per_s: float  # answered calls: 2xx (wrk counts an answer of 400 or more as a status error)
    other_answers: int  # answers that were not 2xx (the benchmark's functions answer 200 or a refusal)
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
        ok_per_s=round((requests - int(report["status_errors"])) / elapsed, 1) if elapsed else 0.0,
        other_answers=int(report["status_errors"]),
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


#: h2load's summary line: "requests: 1000 total, 1000 started, 1000 done, 998 succeeded, 2 failed, 2 errored, 0 timeout".
H2LOAD_REQUESTS = re.compile(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout")
H2LOAD_FINISHED = re.compile(r"finished in ([\d.]+)(m?s)")


def run_h2load(port: int, server_pid: int, *, connections: int, seconds: float, core: int | None) -> LoadResult:
    """As :func:`run_wrk`, over HTTP/2 without TLS (prior knowledge): ``connections`` connections, one stream at a time each.

    One stream per connection keeps the load what wrk's is (as many requests
    in flight as connections), so the two protocols compare request for
    request. Only answered calls count: a request's latency and the rate come
    from the 2xx answers in h2load's per-request log.
    """
    h2load = shutil.which("h2load")
    if h2load is None:
        raise RuntimeError("h2load is not installed: install the Debian package nghttp2-client (make setup does, as root)")
    duration = max(1, round(seconds))
    with tempfile.NamedTemporaryFile("r", prefix="h2load-", suffix=".tsv") as log:
        command = pinned([h2load, "-t1", f"-c{connections}", "-m1", f"-D{duration}", f"--log-file={log.name}", f"http://127.0.0.1:{port}/"], core)
        user_before, system_before = cpu_times(server_pid)
        finished = subprocess.run(command, capture_output=True, text=True, timeout=duration + 30)
        user_after, system_after = cpu_times(server_pid)
        answers = [line.split("\t") for line in log.read().splitlines() if line.count("\t") >= 2]
    summary = H2LOAD_REQUESTS.search(finished.stdout)
    took = H2LOAD_FINISHED.search(finished.stdout)
    if finished.returncode != 0 or summary is None or took is None:
        raise RuntimeError(f"h2load failed ({finished.returncode}): {finished.stderr.strip() or finished.stdout.strip()[-500:]}")
    elapsed = float(took.group(1)) / (1000 if took.group(2) == "ms" else 1)
    latencies = sorted(int(elapsed_us) for _, status, elapsed_us, *_ in answers if status.startswith("2"))
    requests = len(latencies)
    per_request = 1e6 / requests if requests else 0.0
    return LoadResult(
        connections=connections,
        requests=requests,
        seconds=round(elapsed, 3),
        requests_per_s=round(len(answers) / elapsed, 1) if elapsed else 0.0,
        ok_per_s=round(requests / elapsed, 1) if elapsed else 0.0,
        other_answers=len(answers) - requests,
        p50_us=latencies[len(latencies) // 2] if latencies else 0,
        p99_us=latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)] if latencies else 0,
        mean_us=round(sum(latencies) / requests, 1) if requests else 0.0,
        errors=int(summary.group(5)) + int(summary.group(7)),  # failed (socket errors and non-2xx answers), timed out
        cpu_us_per_request=round((user_after - user_before + system_after - system_before) * per_request, 1),
        system_us_per_request=round((system_after - system_before) * per_request, 1),
    )
