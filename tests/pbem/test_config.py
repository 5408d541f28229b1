"""Settings from file and environment; a corrupt config is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.config import ConfigError, load_settings, mask_url


def test_defaults_are_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = load_settings(data_dir=tmp_path / "d")
    assert cfg.db_url.startswith("sqlite:///") and cfg.db_url.endswith("pbem.sqlite")
    assert cfg.inbound.startswith("maildir:") and cfg.outbound.startswith("maildir:")
    assert cfg.address == "cribbage@pbem.localhost"


def test_file_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pbem.toml"
    path.write_text('[pbem]\ndomain = "example.org"\nreminder_hours = 12\n')
    monkeypatch.setenv("PBEM_REMINDER_HOURS", "6")
    cfg = load_settings(path)
    assert cfg.domain == "example.org"
    assert cfg.reminder_hours == 6


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")


def test_corrupt_toml(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("domain = = 'x'\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(path)


def test_bad_value_and_unknown_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('timeout_action = "explode"\n')
    with pytest.raises(ConfigError, match="timeout_action"):
        load_settings(path)
    path.write_text("no_such_setting = 1\n")
    with pytest.raises(ConfigError, match="no_such_setting"):
        load_settings(path)


def test_secrets_masked() -> None:
    assert (
        mask_url("imap://bob:s3cret@127.0.0.1:10143/INBOX")
        == "imap://bob:***@127.0.0.1:10143/INBOX"
    )
    assert "s3cret" not in mask_url("smtp://bob:s3cret@mail.example.org?tls=starttls")
    assert mask_url("maildir:/tmp/x") == "maildir:/tmp/x"


def test_masked_settings_hide_passwords(tmp_path: Path) -> None:
    cfg = load_settings(
        None,
        data_dir=tmp_path,
        inbound_url="imap://u:pw123@127.0.0.1:1/INBOX",
        outbound_url="smtp://u:pw123@127.0.0.1:2",
    )
    assert "pw123" not in repr(cfg.masked())


def test_outbox_max_age_reaches_the_sender(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Days, 5 by default (as Postfix); no attempt limit unless one is set; a zero or
    negative age is refused."""
    from datetime import timedelta

    from pbem.run.runtime import build_daemon
    from pbem.store.db import make_engine

    monkeypatch.chdir(tmp_path)
    cfg = load_settings(data_dir=tmp_path / "d")
    assert (cfg.outbox_max_age, cfg.outbox_max_attempts) == (5.0, None)
    monkeypatch.setenv("PBEM_OUTBOX_MAX_AGE", "0.5")
    cfg = load_settings(data_dir=tmp_path / "d")
    engine = make_engine(cfg.db_url)
    try:
        daemon = build_daemon(cfg, engine)
        daemon.wakeup.close()
        assert (daemon.sender.max_age, daemon.sender.max_attempts) == (timedelta(hours=12), None)
    finally:
        engine.dispose()
    monkeypatch.setenv("PBEM_OUTBOX_MAX_AGE", "0")
    with pytest.raises(ConfigError, match="outbox_max_age"):
        load_settings(data_dir=tmp_path / "d")
