from __future__ import annotations

from pathlib import Path

from funcwsgi.cli.settings_doc import effective_settings, settings_block, settings_table, specs
from funcwsgi.config import Config

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_docs_table_is_current():
    assert settings_block() in DOC.read_text(), "docs/configuration.md is stale: run `make settings-doc`"


def test_every_setting_and_alias_is_in_the_table():
    table = settings_table()
    for _, _, spec in specs():
        assert f"`{spec.env}`" in table
        for alias in spec.aliases:
            assert f"`{alias.name}`" in table


def test_effective_settings_show_values():
    text = effective_settings(Config.from_env({"SERVER_PORT": "9", "FUNC_LABELS": "a=b"}))
    assert "SERVER_PORT=9\n" in text
    assert 'FUNC_LABELS={"a": "b"}\n' in text
    assert "TRACE_COLLECTOR_ENDPOINT=\n" in text


def test_secrets_are_not_shown():
    text = effective_settings(Config.from_env({"KAFKA_SASL_PASSWORD": "hunter2", "KAFKA_CLIENT_CONFIG": "sasl.oauthbearer.client.secret=s3"}))
    assert "hunter2" not in text and "s3" not in text
    assert "KAFKA_SASL_PASSWORD=(set, not shown)\n" in text
    assert "KAFKA_SASL_USERNAME=\n" in text


def shown(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_derived_defaults_are_shown_as_the_runtime_uses_them():
    values = shown(effective_settings(Config.from_env({"FUNC_NAME": "orders"}), "req-res"))
    assert values["KAFKA_GROUP_ID"] == "orders"
    assert values["KAFKA_SECURITY_PROTOCOL"] == "plaintext"
    assert values["HANDLER_SIGNATURE"] == "req-res"
    assert shown(effective_settings(Config.from_env({})))["KAFKA_GROUP_ID"] == "funcwsgi"
    forced = shown(effective_settings(Config.from_env({"HANDLER_SIGNATURE": "none", "KAFKA_GROUP_ID": "g"}), "req-res"))
    assert (forced["HANDLER_SIGNATURE"], forced["KAFKA_GROUP_ID"]) == ("none", "g")


def test_values_are_spelled_as_the_docs_and_the_settings_write_them():
    values = shown(effective_settings(Config.from_env({"SERVER_ACCESS_LOG": "yes"})))
    assert (values["SERVER_ACCESS_LOG"], values["SERVER_METRICS"], values["SERVER_RELOAD"]) == ("true", "true", "false")
    assert values["SERVER_CALL_TIMEOUT"] == "180"
    table = settings_table()
    assert "| `SERVER_CALL_TIMEOUT` | `180` |" in table and "| `SERVER_METRICS` | `true` |" in table
    for name, value in values.items():  # every shown value reads back as the same setting
        if value and "not shown" not in value:
            assert Config.from_env({**values, name: value}) == Config.from_env(values), name


def test_the_settings_command_detects_the_signature_from_the_function():
    import subprocess

    from ..support.paths import BIN, function_folder
    from ..support.processes import base_env

    result = subprocess.run(
        [str(BIN / "funcwsgi"), "settings"], env=base_env(HANDLER_FOLDER=function_folder("req_only"), FUNC_NAME="orders"),
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    values = shown(result.stdout)
    assert (values["HANDLER_SIGNATURE"], values["KAFKA_GROUP_ID"]) == ("req", "orders")
    missing = subprocess.run(
        [str(BIN / "funcwsgi"), "settings"], env=base_env(HANDLER_FOLDER="/nonexistent"), capture_output=True, text=True, timeout=60
    )
    assert missing.returncode == 0 and shown(missing.stdout)["HANDLER_SIGNATURE"] == ""
    assert missing.stderr.startswith("funcwsgi: note: HANDLER_SIGNATURE is detected from the function, which did not load:")
