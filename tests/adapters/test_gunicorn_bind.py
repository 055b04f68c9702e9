"""gunicorn's own --bind read against SERVER_HOST and SERVER_PORT (funcwsgi/adapters/gunicorn_bind.py)."""

from __future__ import annotations

import pytest

from funcwsgi.adapters.gunicorn_bind import listening_config
from funcwsgi.config import Config
from funcwsgi.errors import ConfigError


@pytest.mark.parametrize(
    ("environ", "listening", "host", "port"),
    [
        pytest.param({}, [("127.0.0.1", 9000)], "127.0.0.1", 9000, id="defaults-yield"),
        pytest.param({"SERVER_PORT": "9000"}, [("localhost", 9000)], "127.0.0.1", 9000, id="a-name-bound"),
        pytest.param({"SERVER_HOST": "::"}, [("127.0.0.1", 9000), ("::", 9001)], "::", 9001, id="the-agreeing-one-of-two"),
        pytest.param({"LISTEN_ADDRESS": "0.0.0.0:9000"}, [("", 9000)], "0.0.0.0", 9000, id="every-interface"),
        pytest.param({}, ["unix:/run/fn.sock"], "0.0.0.0", 8080, id="a-unix-socket"),
    ],
)
def test_a_bind_wins_where_no_explicit_setting_contradicts_it(environ, listening, host, port):
    config = listening_config(Config.from_env(environ), listening, environ)
    assert (config.server_host, config.server_port) == (host, port)


@pytest.mark.parametrize(
    ("environ", "listening", "message"),
    [
        ({"SERVER_PORT": "8080"}, [("127.0.0.1", 9000)], "SERVER_PORT='8080' contradicts gunicorn's bind 127.0.0.1:9000: bind where it says, or unset it"),
        ({"FUNC_PORT": "8080"}, ["unix:/run/fn.sock"], "FUNC_PORT='8080' contradicts gunicorn's bind unix:/run/fn.sock: bind where it says, or unset it"),
        (
            {"SERVER_HOST": "::", "SERVER_PORT": "9000"},
            [("::", 9001), ("0.0.0.0", 9000)],
            "SERVER_HOST='::' and SERVER_PORT='9000' contradict gunicorn's bind [::]:9001, 0.0.0.0:9000: bind where they say, or unset them",
        ),
    ],
)
def test_an_explicit_setting_the_bind_contradicts_is_refused(environ, listening, message):
    with pytest.raises(ConfigError) as raised:
        listening_config(Config.from_env(environ), listening, environ)
    assert str(raised.value) == message
