from __future__ import annotations

import json
import socket
from pathlib import Path

from funcwsgi.cli.runs import claim_port, live_runs

from ..support.ports import free_port


def test_claims_the_requested_port_when_free(tmp_path: Path):
    runs = tmp_path / "runs"
    folder = runs / "0"
    folder.mkdir(parents=True)
    port = free_port()
    record = claim_port(runs, folder, "127.0.0.1", port, "127.0.0.1")
    assert record.port == port and record.url == f"http://127.0.0.1:{port}"
    assert json.loads((folder / "run.json").read_text())["port"] == port
    assert live_runs(runs) == [record]


def test_a_port_in_use_or_held_by_a_live_run_is_skipped(tmp_path: Path):
    runs = tmp_path / "runs"
    first, second, third = (runs / str(n) for n in range(3))
    for folder in (first, second, third):
        folder.mkdir(parents=True)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = claim_port(runs, first, "127.0.0.1", port, "127.0.0.1")
        assert taken.port != port
    # The port is free again, but the first run holds it in its record.
    again = claim_port(runs, second, "127.0.0.1", taken.port, "127.0.0.1")
    assert again.port not in (taken.port,)
    assert [record.index for record in live_runs(runs)] == [0, 1]


def test_dead_runs_are_not_live(tmp_path: Path):
    folder = tmp_path / "runs" / "0"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"folder": str(folder), "pid": 2**22 + 7, "port": 1, "url": "http://x:1"}))
    (tmp_path / "runs" / "1").mkdir()
    (tmp_path / "runs" / "1" / "run.json").write_text("{broken")
    assert live_runs(tmp_path / "runs") == []
