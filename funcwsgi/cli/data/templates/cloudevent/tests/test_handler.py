"""Tests of the function, without a server: `python -m pytest` in the function's folder."""

from pathlib import Path

from funcwsgi.testing import FunctionClient

client = FunctionClient(Path(__file__).resolve().parent.parent)


def test_replies_with_a_cloud_event():
    response = client.cloud_event({"n": 1}, type="com.example.ping", source="/tests")
    assert response.status_code == 200
    reply = response.cloud_event
    assert reply is not None
    assert reply.type == "com.example.ping.reply"
    assert reply.data == {"received": {"n": 1}, "from": "/tests"}


def test_refuses_a_plain_request():
    assert client.post("/", json={"n": 1}).status_code == 400
