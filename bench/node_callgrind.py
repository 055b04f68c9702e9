"""Instructions per request of the Node servers over HTTP, under callgrind.

A Node server's CPU per request moves by a tenth between runs on a loaded
machine, which is as much as the nodejs26 targets' margins. Instructions do
not move: each Node target (bare node:http, nodejs26, the Express shape) is
started under callgrind, V8's generated code included, warmed up until V8 has
compiled its hot code, its counters zeroed, loaded with wrk for a few
seconds, and its instructions divided by the requests wrk counted. Two runs
of the same server agree within about 1%.

Only user space is counted. The kernel's part of a request (the socket reads
and writes, loopback TCP and waking the client up) is the same for every Node
server and is what the system CPU column of the HTTP runs measures.

    python -m bench.node_callgrind                 # the three Node hello worlds
    python -m bench.node_callgrind nodejs26        # one of them
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.ports import free_port
from tests.support.processes import http_get

from .callgrind import available, total_instructions
from .environment import node_binary
from .load import run_wrk
from .processes import server_and_load_cores, start
from .targets import NODE, Target, all_targets, environment

#: The Node rows whose instructions are counted, in the table's order.
TARGETS = ("bare-node-http", "nodejs26", "kyma-nodejs26-shaped")
#: Requests before counting, as the HTTP runs warm a Node server up (bench/run.py NODE_WARMUP_REQUESTS).
WARMUP_REQUESTS = 40_000
WARMUP_LIMIT_S = 120
COUNTED_SECONDS = 8


def callgrind_command(out_dir: Path, command: list[str]) -> list[str]:
    # --trace-children: nodejs26's bin/serve is a shell script that execs node (the pid stays the same).
    return [
        "valgrind", "--tool=callgrind", "--trace-children=yes", "--smc-check=all-non-file",
        f"--callgrind-out-file={out_dir}/callgrind.%p", *command,
    ]


def control(action: str, pid: int, env: dict[str, str]) -> None:
    # The server's environment: valgrind names the pipe callgrind_control talks through after
    # $USER and $HOST, and the bare node:http target's HOST is its listening address.
    subprocess.run(["callgrind_control", action, str(pid)], env=env, check=True, capture_output=True, timeout=60)


def dump_of(path: Path, port: int, name: str, timeout: float = 30) -> bytes:
    """The dump callgrind_control asked for, which a server asleep in epoll writes only once something wakes it."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"callgrind wrote no dump of {name} within {timeout:.0f} s")
        http_get("127.0.0.1", port)  # one request after the count: it wakes the server, which then writes the dump first
        time.sleep(0.2)
    time.sleep(0.5)  # the dump is written at once; let it finish
    return path.read_bytes()


def counted(target: Target, server_core: int | None, load_core: int | None) -> dict[str, int]:
    """Instructions per request of ``target`` warmed up, and the requests they were counted over."""
    port = free_port()
    command = [str(node_binary()) if part == NODE else part for part in target.command(port)]
    with tempfile.TemporaryDirectory(prefix=f"bench-node-callgrind-{target.name}-") as tmp:
        out_dir = Path(tmp)
        env = environment(target, port, None, None)
        server = start(
            callgrind_command(out_dir, command), env, target.cwd, port,
            out_dir / "server.log", core=server_core, expect=b"Hello, world!", timeout=180,
        )
        try:
            served, began = 0, time.monotonic()
            while served < WARMUP_REQUESTS and time.monotonic() - began < WARMUP_LIMIT_S:
                served += run_wrk(port, server.pid, connections=16, seconds=2, core=load_core).requests
            control("--zero", server.pid, env)
            requests = run_wrk(port, server.pid, connections=16, seconds=COUNTED_SECONDS, core=load_core).requests
            control("--dump", server.pid, env)
            instructions = total_instructions(dump_of(out_dir / f"callgrind.{server.pid}.1", port, target.name), f"the callgrind dump of {target.name}")
        finally:
            server.stop()
    return {"instructions_per_request": round(instructions / max(1, requests)), "requests": requests, "warmup_requests": served}


def count_all(names: tuple[str, ...] = TARGETS, server_core: int | None = None, load_core: int | None = None) -> dict[str, dict[str, int]]:
    by_name = {target.name: target for target in all_targets()}
    return {name: counted(by_name[name], server_core, load_core) for name in names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.node_callgrind", description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"Node targets to count: {', '.join(TARGETS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.targets if name not in TARGETS]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r}: expected one of {', '.join(TARGETS)}")
    if not available():
        print("bench.node_callgrind: valgrind is not installed (make setup installs it)", file=sys.stderr)
        return 2
    for name, count in count_all(tuple(args.targets) or TARGETS, *server_and_load_cores()).items():
        print(f"{name}: {count['instructions_per_request']:,} instructions per request over {count['requests']:,} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
