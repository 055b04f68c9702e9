from __future__ import annotations

from funcwsgi.config import Config
from funcwsgi.startup import startup_lines


def test_lines_with_defaults():
    assert startup_lines(Config.from_env({})) == [
        "Importing function sources from /handler.py:main",
        "Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set",
        "Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set",
        "Starting python314 server 0.0.0.0:8080",
    ]


def test_lines_with_endpoints():
    config = Config.from_env(
        {
            "HANDLER_FOLDER": "/src",
            "HANDLER_FUNCTION_NAME": "run",
            "TRACE_COLLECTOR_ENDPOINT": "http://collector:4318/v1/traces",
            "PUBLISHER_PROXY_ADDRESS": "http://proxy/publish",
            "FUNC_RUNTIME": "python312",
            "SERVER_PORT": "9000",
        }
    )
    assert startup_lines(config) == [
        "Importing function sources from /src/handler.py:run",
        "Tracing configured with endpoint http://collector:4318/v1/traces",
        "Publisher Proxy available on address http://proxy/publish",
        "Starting python312 server 0.0.0.0:9000",
    ]
