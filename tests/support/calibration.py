"""How slow this machine is right now, measured, so timing bounds scale instead of being widened by hand.

A test that checks an answer came on time (a 408 at the deadline) needs a
bound tight enough to see an answer that is late: ``deadline + 0.2 s`` on an
idle machine catches a watchdog that answers ~0.45 s late. On a busy
two-core machine (other test servers, other builds) the same answer can
honestly take longer. So the slack is multiplied by a factor measured here:

- **speed**: the CPU time of a fixed Python loop against what it took on the
  development machine when idle (``REFERENCE_LOOP_SECONDS``), and
- **contention**: how much longer the same loop takes by the wall clock than
  in CPU time, i.e. how long this process waits for a core.

The factor is at least 1 and at most ``MAX_FACTOR`` (a bound must stay a
bound). Standard library only: the conformance kit uses it too.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

#: CPU seconds of :func:`fixed_loop` on the idle two-core development machine (1 December 2026).
REFERENCE_LOOP_SECONDS = 0.034
MAX_FACTOR = 10.0


def fixed_loop(count: int = 1_000_000) -> int:
    total = 0
    for number in range(count):
        total += number * number % 7
    return total


@dataclass(frozen=True)
class Calibration:
    speed: float  # CPU time of the loop / the reference (1 = as fast as the development machine)
    contention: float  # wall time / CPU time of the loop (1 = a core was always free)

    @property
    def factor(self) -> float:
        return min(MAX_FACTOR, max(1.0, self.speed) * max(1.0, self.contention))

    def slack(self, idle_seconds: float) -> float:
        """``idle_seconds`` of slack on an idle machine, scaled for this one."""
        return idle_seconds * self.factor

    def __str__(self) -> str:
        return f"speed x{self.speed:.2f}, contention x{self.contention:.2f}: timing slack x{self.factor:.2f}"


def measure(repeats: int = 5, count: int = 1_000_000) -> Calibration:
    """Run the loop ``repeats`` times: the fastest CPU time gives the speed, the median ratio the contention."""
    cpu: list[float] = []
    ratios: list[float] = []
    for _ in range(repeats):
        cpu_began, wall_began = time.process_time(), time.perf_counter()
        fixed_loop(count)
        cpu_took, wall_took = time.process_time() - cpu_began, time.perf_counter() - wall_began
        cpu.append(cpu_took)
        ratios.append(wall_took / cpu_took if cpu_took > 0 else 1.0)
    reference = REFERENCE_LOOP_SECONDS * count / 1_000_000
    return Calibration(speed=min(cpu) / reference, contention=statistics.median(ratios))
