"""Tests of the function, without a server: `python -m pytest` in the function's folder."""

from pathlib import Path

from funcwsgi.testing import FunctionClient

client = FunctionClient(Path(__file__).resolve().parent.parent)
PATH = "{{path}}"


def test_greets_the_world_by_default():
    response = client.get(PATH)
    assert response.status_code == 200
    assert response.json == {"message": "Hello, world!"}


def test_greets_by_query_name():
    assert client.get(PATH + "?name=you").json == {"message": "Hello, you!"}


def test_greets_by_json_name():
    assert client.post(PATH, json={"name": "JSON"}).json == {"message": "Hello, JSON!"}
