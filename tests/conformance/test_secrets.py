"""C15: sdk.secret(name) reads HANDLER_SECRETS_PATH's folders: first wins, a newline off, rotation, errors."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kit import Runtime, serve

VALUE = "kit-secret-value-91c2"


@pytest.fixture(scope="module")
def folders() -> Iterator[tuple[Path, Path]]:
    with tempfile.TemporaryDirectory(prefix="kit-secrets-") as top:
        first, second = Path(top, "first"), Path(top, "second")
        first.mkdir()
        second.mkdir()
        (first / "token").write_text(VALUE + "\n")
        (second / "token").write_text("the second folder's\n")
        (second / "only-second").write_text("two\n\n")
        (first / "crlf").write_text("windows\r\n")
        yield first, second


@pytest.fixture(scope="module")
def secrets(launcher, folders) -> Iterator[Runtime]:
    first, second = folders
    with serve(launcher, "main", {"HANDLER_SECRETS_PATH": f"{first}:{second}"}) as running:
        yield running


def read(runtime: Runtime, name: str) -> tuple[int, dict[str, str]]:
    response = runtime.get("/secret", params={"name": name})
    return response.status_code, response.json()


def test_the_first_folder_holding_the_file_wins_and_one_newline_goes(secrets):
    assert read(secrets, "token") == (200, {"value": VALUE})
    assert read(secrets, "only-second") == (200, {"value": "two\n"})
    assert read(secrets, "crlf") == (200, {"value": "windows"})


def test_a_rotated_secret_is_read_again(secrets, folders):
    first, _ = folders
    (first / "rotating").unlink(missing_ok=True)  # left by the previous runtime's run
    assert read(secrets, "rotating")[0] == 404
    # As Kubernetes rotates a mounted secret: a new file put in place of the old one.
    for value in ("old", "new-and-longer"):
        staged = first / ".staged"
        staged.write_text(value + "\n")
        os.replace(staged, first / "rotating")
        assert read(secrets, "rotating") == (200, {"value": value})


def test_a_missing_secret_names_itself_and_every_folder(secrets, folders):
    first, second = folders
    status, answer = read(secrets, "absent")
    assert status == 404 and answer["kind"] == "SecretNotFound"
    assert answer["error"] == f"secret 'absent' not found: no file 'absent' in {first}, {second} (HANDLER_SECRETS_PATH)"


def test_no_value_reaches_the_log(secrets):
    read(secrets, "token")
    secrets.get("/log", params={"id": "after-secret"})
    secrets.wait_for_log("after-secret")
    assert VALUE not in secrets.read_log() and VALUE not in secrets.process.stderr
