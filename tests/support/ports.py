"""Free loopback ports for the servers the tests, the conformance kit and the benchmarks start.

Ports come from below the kernel's ephemeral range (from 32768), so the thousands
of client connections a load test opens can never take a port a server is about
to bind, and each port is handed out once per process (each pytest-xdist worker
has a slice of the range of its own). The start is spread by pid, so two runs at once (two worktrees) rarely probe the same ports. The suite
and the kit draw from separate ranges, so a kit run beside a test run never
hands out the same port.

Standard library only: the conformance kit uses it.
"""

from __future__ import annotations

import os
import socket


def worker_slice(span: range) -> range:
    """The part of ``span`` of this pytest-xdist worker (all of it outside xdist).

    A port one worker checked free has no server bound to it for a while: another
    worker probing the same range could hand it out again meanwhile.
    """
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count < 2:
        return span
    size = len(span) // count
    start = span.start + int(worker[2:]) % count * size
    return range(start, start + size)


class PortRange:
    """Hands out ports of ``span`` (this xdist worker's part of it) that bind now, each once, starting at a point spread by pid."""

    def __init__(self, span: range, spread: int) -> None:
        span = worker_slice(span)
        self.span = span
        self._handed_out: set[int] = set()
        self._next = span.start + (os.getpid() * spread) % len(span)

    def take(self, host: str = "127.0.0.1") -> int:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        for _ in range(len(self.span)):
            port = self._next
            self._next = port + 1 if port + 1 < self.span.stop else self.span.start
            if port in self._handed_out:
                continue
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind((host, port))
                except OSError:
                    continue
            self._handed_out.add(port)
            return port
        raise RuntimeError(f"no free port left in {self.span.start}-{self.span.stop - 1}")


#: The test suite's and the benchmarks' servers.
SUITE = PortRange(range(20000, 32000), 97)
#: The conformance kit's runtimes (and the stand-ins it starts beside them).
KIT = PortRange(range(10000, 20000), 89)


def free_port(host: str = "127.0.0.1") -> int:
    """A port no server of this process was given yet, free on ``host`` (IPv4 or IPv6) now."""
    return SUITE.take(host)
