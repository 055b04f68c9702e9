"""`funcwsgi run` and `funcwsgi invoke` against real processes on 127.0.0.1.

One project is run once for the module (with --reload); other tests start
their own runs where they need another project or flag.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import requests

from ...support.ports import free_port
from ...support.processes import FUNCWSGI, Server

URL = re.compile(r"running(?: with reload)? at (http://127\.0\.0\.1:(\d+))/ \((.+)\); Ctrl-C stops it")


def start_run(project: Path, env: dict[str, str], *args: str, port: int | None = None) -> tuple[Server, str, Path]:
    """Start `funcwsgi run` and wait for the line with its URL; returns the server, URL and its folder."""
    port = port or free_port()
    server = Server([*FUNCWSGI, "run", "--port", str(port), *args], env, port, cwd=project)
    try:
        output = server.wait_for_output("Ctrl-C stops it", timeout=120)
    except AssertionError:
        server.stop()
        raise
    match = URL.search(output)
    assert match, output
    return server, match.group(1), Path(match.group(3))


def invoke(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FUNCWSGI, "invoke", *args], cwd=project, env=env, capture_output=True, text=True, timeout=60)


def wait_for_body(url: str, expected: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = requests.get(url, timeout=2).text
            if expected in last:
                return
        except requests.RequestException as error:  # restarting: refused, reset or slow
            last = str(error)
        time.sleep(0.1)
    raise AssertionError(f"{expected!r} never answered by {url}; last: {last!r}")


@pytest.fixture(scope="module")
def module_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from ...support.processes import base_env

    return base_env(FUNCWSGI_CACHE_DIR=str(tmp_path_factory.getbasetemp() / "venv-cache-run"))


@pytest.fixture(scope="module")
def reloading(tmp_path_factory: pytest.TempPathFactory, module_env: dict[str, str]):
    """A created function, run with --reload: (project, server, url, folder)."""
    root = tmp_path_factory.mktemp("run")
    assert subprocess.run([*FUNCWSGI, "create", "hello"], cwd=root, env=module_env, capture_output=True).returncode == 0
    project = root / "hello"
    server, url, folder = start_run(project, module_env, "--reload")
    yield project, server, url, folder
    server.stop()


def test_create_run_invoke(reloading, module_env):
    project, server, url, folder = reloading
    assert folder == project / ".func" / "runs" / "0"
    assert (folder / "f").resolve() == project.resolve()
    assert json.loads((folder / "run.json").read_text())["url"] == url
    assert requests.get(url + "/?name=you").json() == {"message": "Hello, you!"}
    result = invoke(project, module_env, "--data", '{"name": "invoke"}')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "HTTP 200 OK"
    assert "Content-Type: application/json" in lines
    body = result.stdout.split("\n\n", 1)[1]
    assert json.loads(body) == {"message": "Hello, invoke!"}


def test_startup_lines_and_function_env(reloading):
    project, server, url, folder = reloading
    output = server.wait_for_output("Starting ")
    assert f"Importing function sources from {project.resolve()}/handler.py:main" in output, "the link f is followed to the real files"


def test_edit_reloads(reloading, module_env):
    project, server, url, folder = reloading
    handler = project / "handler.py"
    original = handler.read_text()
    try:
        handler.write_text(original.replace('f"Hello, {name}!"', 'f"Howdy, {name}!"'))
        wait_for_body(url + "/?name=edit", "Howdy, edit!")
        result = invoke(project, module_env, "/?name=again")
        assert json.loads(result.stdout.split("\n\n", 1)[1]) == {"message": "Howdy, again!"}
    finally:
        handler.write_text(original)
    wait_for_body(url + "/?name=back", "Hello, back!")


def test_concurrent_run_gets_its_own_folder_and_port(reloading, module_env):
    project, server, url, folder = reloading
    taken_port = int(url.rsplit(":", 1)[1])
    second, second_url, second_folder = start_run(project, module_env, port=taken_port)
    try:
        assert second_folder == project / ".func" / "runs" / "1"
        assert second_url != url
        assert f"Port {taken_port} is taken; using" in second.stderr
        assert requests.get(second_url + "/").json() == {"message": "Hello, world!"}
        result = invoke(project, module_env)
        assert result.returncode == 0
        assert f"2 runs are live; calling {url}" in result.stderr
        direct = invoke(project, module_env, second_url + "/?name=two")
        assert "Hello, two!" in direct.stdout
    finally:
        second.signal(signal.SIGINT)
        assert second.wait_exit(30) == 0
        second.stop()
    assert not second_folder.exists(), "the run's folder is removed when it ends"
    assert (project / "handler.py").exists()
    with pytest.raises(requests.ConnectionError):
        requests.get(second_url + "/", timeout=2)


def test_keep_leaves_the_folder(tmp_path: Path, cli, cli_env):
    assert cli("create", "kept", cwd=tmp_path).returncode == 0
    project = tmp_path / "kept"
    server, url, folder = start_run(project, cli_env, "--keep")
    try:
        assert requests.get(url + "/").status_code == 200
        server.signal(signal.SIGTERM)
        assert server.wait_exit(30) == 0
        assert f"Kept {folder}" in server.stderr
    finally:
        server.stop()
    assert sorted(path.name for path in folder.iterdir()) == ["Dockerfile", "build.sh", "f", "gunicorn.conf.py", "run.json", "run.sh", "service.py"]
    result = invoke(project, cli_env)
    assert result.returncode == 2
    assert result.stderr.strip() == f"funcwsgi: error: no function is running for {project}; start one with 'funcwsgi run', or pass its URL"


def test_scaffolded_project_runs_from_dist(tmp_path: Path, cli, cli_env):
    assert cli("create", "owned", cwd=tmp_path).returncode == 0
    project = tmp_path / "owned"
    (project / "handler.py").write_text(
        "import os\n\n\ndef main(req, res):\n"
        "    res.set_body({k: os.environ.get(k) for k in ('GREETING', 'FROM_DIST', 'FUNC_NAME', 'SERVER_LOG_LEVEL')})\n"
    )
    text = (project / "func.yaml").read_text()
    text = text.replace("envs: {}", "envs: {GREETING: Howdy}").replace('args: []             # appended to the service command', 'args: ["SERVER_LOG_LEVEL=debug"]')
    (project / "func.yaml").write_text(text)
    assert cli("scaffold", cwd=project).returncode == 0
    run_sh = project / "dist" / "run.sh"
    run_sh.write_text(run_sh.read_text().replace("exec ", "export FROM_DIST=yes\nexec ", 1))
    server, url, folder = start_run(project, cli_env)
    try:
        assert requests.get(url + "/").json() == {"GREETING": "Howdy", "FROM_DIST": "yes", "FUNC_NAME": "owned", "SERVER_LOG_LEVEL": "debug"}
        assert folder == project / "dist"
        state = project / ".func" / "runs" / "0"
        assert sorted(path.name for path in state.iterdir()) == ["run.json"], "nothing is generated for a scaffolded project"
    finally:
        server.stop()


def test_a_function_that_cannot_load_stops_the_run(tmp_path: Path, cli, cli_env):
    assert cli("create", "broken", cwd=tmp_path).returncode == 0
    project = tmp_path / "broken"
    (project / "handler.py").write_text("def main(req, res)\n    pass\n")
    result = cli("run", "--port", str(free_port()), cwd=project, timeout=120)
    assert result.returncode == 2
    assert "funcwsgi: error: syntax error in" in result.stderr
    assert "funcwsgi: error: the function exited with status 2 before it listened; see its output above" in result.stderr
    assert not (project / ".func" / "runs" / "0").exists()


def test_invoke_cloudevent_shows_the_reply(tmp_path: Path, cli, cli_env):
    assert cli("create", "events", "--template", "cloudevent", cwd=tmp_path).returncode == 0
    project = tmp_path / "events"
    server, url, folder = start_run(project, cli_env)
    try:
        result = invoke(project, cli_env, "--cloudevent", "--type", "com.example.ping", "--source", "/cli", "--data", '{"n": 1}')
        assert result.returncode == 0, result.stderr
        assert "CloudEvent:" in result.stdout
        assert "  type: com.example.ping.reply" in result.stdout
        assert "  source: /functions/events" in result.stdout
        assert json.loads(result.stdout.split("  data:\n", 1)[1]) == {"received": {"n": 1}, "from": "/cli"}
        plain = invoke(project, cli_env, "--data", "hi")
        assert plain.returncode == 1, "a 4xx answer exits 1"
        assert plain.stdout.startswith("HTTP 400 BAD REQUEST") or plain.stdout.startswith("HTTP 400 Bad Request")
    finally:
        server.stop()


def test_invoke_errors(tmp_path: Path, cli):
    port = free_port()
    refused = cli("invoke", f"http://127.0.0.1:{port}/", cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"funcwsgi: error: cannot call http://127.0.0.1:{port}/: ")
    assert refused.stderr.strip().endswith("is the function running ('funcwsgi run')?")
    nowhere = cli("invoke", cwd=tmp_path)
    assert nowhere.returncode == 2
    assert nowhere.stderr.strip() == "funcwsgi: error: no URL given and no func.yaml here; pass the function's URL, e.g. funcwsgi invoke http://127.0.0.1:8080/"
    header = cli("invoke", "http://127.0.0.1:1/", "--header", "nocolon", cwd=tmp_path)
    assert header.returncode == 2 and "--header 'nocolon' is invalid: expected 'NAME: VALUE'" in header.stderr


def test_run_container_without_an_engine(tmp_path: Path, cli):
    assert cli("create", "boxed", cwd=tmp_path).returncode == 0
    result = cli("run", "--container", cwd=tmp_path / "boxed", env={"PATH": str(tmp_path / "empty")})
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "funcwsgi: error: run --container needs docker or podman and neither is installed; "
        "install one (or set CONTAINER_ENGINE), or run without --container"
    )
    assert not (tmp_path / "boxed" / ".func" / "runs" / "0").exists()


def test_run_serves_secrets_from_a_folder_outside_the_project(tmp_path: Path, module_env):
    env = {**module_env, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    assert subprocess.run([*FUNCWSGI, "create", "vault"], cwd=tmp_path, env=env, capture_output=True).returncode == 0
    project = tmp_path / "vault"
    (project / "handler.py").write_text("import sdk\n\n\ndef main(req, res):\n    return sdk.secret(req.args['name'])\n")
    folder = tmp_path / "config" / "funcwsgi" / "secrets" / "vault"
    folder.mkdir(parents=True)
    (folder / "token").write_text("local-token\n")
    server, url, _ = start_run(project, env)
    try:
        assert f"Secrets: sdk.secret(NAME) reads the file NAME in {folder}" in server.stderr
        assert requests.get(url + "/?name=token", timeout=10).text == "local-token"
        missing = requests.get(url + "/?name=other", timeout=10)
        assert missing.status_code == 500 and "local-token" not in server.stdout + server.stderr
        assert f"secret 'other' not found: no file 'other' in {folder} (HANDLER_SECRETS_PATH)" in server.stdout
    finally:
        server.stop()


def test_run_debug_prints_a_vs_code_configuration_and_a_debugger_answers(tmp_path: Path, module_env):
    from ...support.dap import DEBUGGED, DapClient, breakpoint_line, stop_one_call

    assert subprocess.run([*FUNCWSGI, "create", "probe"], cwd=tmp_path, env=module_env, capture_output=True).returncode == 0
    project = tmp_path / "probe"
    shutil.copy(DEBUGGED / "handler.py", project / "handler.py")
    debug_port = free_port()
    server, url, _ = start_run(project, module_env, "--debug", "--debug-port", str(debug_port))
    try:
        server.wait_for_output(f"listening on 127.0.0.1:{debug_port}")
        printed = server.stderr.split("configuration in .vscode/launch.json's \"configurations\":\n", 1)[1]
        launch = json.loads(printed[: printed.index("\n}\n") + 2])
        assert launch["type"] == "debugpy" and launch["request"] == "attach"
        assert launch["connect"] == {"host": "127.0.0.1", "port": debug_port}
        assert launch["pathMappings"] == [{"localRoot": "${workspaceFolder}", "remoteRoot": str(project.resolve())}]
        assert launch["stopAllThreadsOnSuspend"] is False
        client = DapClient(debug_port)
        try:
            assert client.request("initialize", {"clientID": "vscode", "adapterID": "debugpy", "pathFormat": "path"})["success"] is True
            pid = requests.get(url + "/", timeout=10).text
            frame, other, paused = stop_one_call(client, launch, project, breakpoint_line(), url)
            assert (frame["source"]["path"], frame["line"]) == (str(project / "handler.py"), breakpoint_line()), frame
            assert other == pid, "one call waits at the breakpoint; the others are answered"
            assert paused.text == "past the breakpoint"
        finally:
            client.close()
    finally:
        server.stop()


def test_debug_port_without_debug_is_refused(tmp_path: Path, cli):
    assert cli("create", "plain", cwd=tmp_path).returncode == 0
    result = cli("run", "--debug-port", "5678", cwd=tmp_path / "plain")
    assert result.returncode == 2
    assert result.stderr.strip() == "funcwsgi: error: --debug-port 5678 is invalid: expected an integer from 1 to 65535, with --debug"


# -- run --container: the engine's network arguments -----------------------------------------


@pytest.mark.parametrize(
    ("host", "debugger", "arguments", "settings"),
    [
        pytest.param(
            "127.0.0.1", 5678,
            ["-p", "127.0.0.1:8080:8080", "-p", "127.0.0.1:5678:5678"],
            {"SERVER_HOST": "0.0.0.0", "SERVER_PORT": "8080", "SERVER_DEBUG_HOST": "0.0.0.0", "SERVER_DEBUG_PORT": "5678"},
            id="debug",
        ),
        pytest.param("127.0.0.1", None, ["-p", "127.0.0.1:8080:8080"], {"SERVER_HOST": "0.0.0.0", "SERVER_PORT": "8080"}, id="no-debug"),
        pytest.param(
            "0.0.0.0", 9229,
            ["-p", "0.0.0.0:8080:8080", "-p", "127.0.0.1:9229:9229"],
            {"SERVER_HOST": "0.0.0.0", "SERVER_PORT": "8080", "SERVER_DEBUG_HOST": "0.0.0.0", "SERVER_DEBUG_PORT": "9229"},
            id="every-interface-the-debugger-on-loopback",
        ),
        pytest.param("::1", None, ["-p", "[::1]:8080:8080"], {"SERVER_HOST": "0.0.0.0", "SERVER_PORT": "8080"}, id="ipv6"),
    ],
)
def test_on_a_bridge_both_ports_are_published_and_the_debugger_only_on_loopback(host, debugger, arguments, settings):
    from funcwsgi.cli.commands.run import network_arguments

    assert network_arguments(True, host, 8080, debugger) == (arguments, settings)


@pytest.mark.parametrize(("host", "debugger"), [("127.0.0.1", 5678), ("0.0.0.0", None)])
def test_without_a_bridge_the_container_has_the_hosts_network(host, debugger):
    from funcwsgi.cli.commands.run import network_arguments

    expected = {"SERVER_HOST": host, "SERVER_PORT": "8080"}
    if debugger is not None:
        expected.update(SERVER_DEBUG_HOST="127.0.0.1", SERVER_DEBUG_PORT=str(debugger))
    assert network_arguments(False, host, 8080, debugger) == (["--network", "host"], expected)


def test_a_host_that_is_not_an_address_names_the_option(call, tmp_path: Path):
    status, _, err = call("run", str(tmp_path), "--host", "localhost")
    assert (status, err) == (2, "funcwsgi: error: --host 'localhost' is invalid: expected an IP address such as 0.0.0.0 or ::\n")
