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
