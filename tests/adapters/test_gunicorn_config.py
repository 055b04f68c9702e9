"""The worker's copy of gunicorn's configuration answers what gunicorn's does, each setting read once."""

from __future__ import annotations

import pytest
from gunicorn.config import Config

from funcwsgi.adapters._gunicorn_config import SettingsReadOnce


def configured() -> Config:
    source = Config()
    source.set("limit_request_line", 1234)
    source.set("forwarded_allow_ips", "10.0.0.1,::1")
    return source


def test_every_setting_reads_as_in_the_source() -> None:
    source = configured()
    settings = SettingsReadOnce(source)
    for name in source.settings:
        assert getattr(settings, name) == getattr(source, name), name
    assert settings.limit_request_line == 1234
    assert settings.forwarded_allow_ips == ["10.0.0.1", "::1"]


def test_a_setting_read_once_is_an_ordinary_attribute_after() -> None:
    settings = SettingsReadOnce(configured())
    assert "limit_request_line" not in vars(settings)
    assert settings.limit_request_line == 1234
    assert vars(settings)["limit_request_line"] == 1234


def test_the_properties_built_on_settings_still_work() -> None:
    source = configured()
    settings = SettingsReadOnce(source)
    assert settings.is_ssl is source.is_ssl
    assert settings.address == source.address
    assert [str(network) for network in settings.forwarded_allow_networks()] == ["10.0.0.1/32", "::1/128"]


def test_set_changes_what_is_read_next() -> None:
    settings = SettingsReadOnce(configured())
    assert settings.keepalive == 2
    settings.set("keepalive", 7)
    assert settings.keepalive == 7


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    settings = SettingsReadOnce(configured())
    with pytest.raises(AttributeError, match="no_such_setting"):
        _ = settings.no_such_setting
