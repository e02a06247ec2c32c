"""SessionSummaryConfig: defaults, clamps, disk parsing, overrides, reload, toggle; the
environment's overrides read strictly."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from summaries.core.config import (
    ConfigCache,
    ConfigWriteError,
    SessionSummaryConfig,
    SummaryOverrides,
    _opt_int,
    load_config,
    write_enabled,
)
from summaries.envconfig import summary_overrides_read

DEFAULTS = {
    "enabled": False,
    "min_user_turns": 2,
    "regenerate_after_turns": 1,
    "max_intents": 50,
    "max_constraints": 50,
    "assistant_excerpt_chars": 400,
}


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("name", "value", "floor", "message"),
    [
        ("min_user_turns", 0, 1, "min_user_turns 0 < 1, using 1"),
        ("regenerate_after_turns", -3, 1, "regenerate_after_turns -3 < 1, using 1"),
        ("max_intents", 0, 1, "max_intents 0 < 1, using 1"),
        ("max_constraints", -1, 0, "max_constraints -1 < 0, using 0"),
        ("assistant_excerpt_chars", 10, 80, "assistant_excerpt_chars 10 < 80, using 80"),
    ],
)
def test_clamps_warn_then_set(
    caplog: pytest.LogCaptureFixture, name: str, value: int, floor: int, message: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="summaries.core.config"):
        cfg = SessionSummaryConfig(**{name: value})  # type: ignore[arg-type]
    assert getattr(cfg, name) == floor
    assert [r.getMessage() for r in caplog.records] == [message]
    assert caplog.records[0].levelno == logging.WARNING


def test_boundary_values_are_not_clamped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        cfg = SessionSummaryConfig(
            min_user_turns=1,
            regenerate_after_turns=1,
            max_intents=1,
            max_constraints=0,
            assistant_excerpt_chars=80,
        )
    assert cfg.max_constraints == 0
    assert caplog.records == []


def test_no_upper_bounds() -> None:
    cfg = SessionSummaryConfig(max_intents=10_000, assistant_excerpt_chars=1_000_000)
    assert (cfg.max_intents, cfg.assistant_excerpt_chars) == (10_000, 1_000_000)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (7, 7),
        (-2, -2),
        (True, None),
        (False, None),
        (3.0, 3),
        (3.5, None),
        (float("nan"), None),
        (float("inf"), None),
        ("12", 12),
        (" 12 ", 12),
        ("-4", -4),
        ("5.0", 5),
        ("5.5", None),
        ("twelve", None),
        ("", None),
        (None, None),
        ([3], None),
        ({"n": 3}, None),
    ],
)
def test_opt_int(value: object, expected: int | None) -> None:
    assert _opt_int(value) == expected


@pytest.mark.parametrize("section", [None, [], "on", 5, True])
def test_non_dict_section_means_defaults(section: object) -> None:
    assert SessionSummaryConfig.from_section(section).to_dict() == DEFAULTS


def test_from_section_reads_every_key() -> None:
    cfg = SessionSummaryConfig.from_section(
        {
            "enabled": True,
            "min_user_turns": 3,
            "regenerate_after_turns": "4",
            "max_intents": 9.0,
            "max_constraints": 0,
            "assistant_excerpt_chars": 200,
            "unknown": "ignored",
        }
    )
    assert cfg.to_dict() == {
        "enabled": True,
        "min_user_turns": 3,
        "regenerate_after_turns": 4,
        "max_intents": 9,
        "max_constraints": 0,
        "assistant_excerpt_chars": 200,
    }


def test_malformed_values_fall_back_per_key() -> None:
    cfg = SessionSummaryConfig.from_section(
        {"min_user_turns": "lots", "max_intents": True, "max_constraints": 2.5, "enabled": 1}
    )
    assert cfg.to_dict() == DEFAULTS


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("TRUE", True),
        (" yes ", True),
        ("on", True),
        ("1", True),
        ("false", False),  # the original's bool("false") bug would read this as True
        ("off", False),
        ("no", False),
        ("0", False),
        ("maybe", False),
        ("", False),
        (1, False),
        (None, False),
        ({}, False),
    ],
)
def test_enabled_parsing(value: object, expected: bool) -> None:
    assert SessionSummaryConfig.from_section({"enabled": value}).enabled is expected


def test_clamp_applies_to_parsed_values(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        cfg = SessionSummaryConfig.from_section({"assistant_excerpt_chars": "5"})
    assert cfg.assistant_excerpt_chars == 80
    assert "assistant_excerpt_chars 5 < 80, using 80" in caplog.text


def test_load_missing_file_is_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path / "config.json").to_dict() == DEFAULTS


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b"[1, 2]", b'"text"', b"\xff\xfe\x00", b"[" * 100_000, b"null"],
)
def test_load_garbage_is_defaults(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    assert load_config(path).to_dict() == DEFAULTS


def test_load_unreadable_is_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.mkdir()  # reading a directory raises IsADirectoryError
    assert load_config(path).to_dict() == DEFAULTS


def test_load_reads_section(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "config.json",
        {"other": {"x": 1}, "session_summary": {"enabled": "yes", "max_intents": 4}},
    )
    cfg = load_config(path)
    assert cfg.enabled is True
    assert cfg.max_intents == 4


def test_load_non_dict_section(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {"session_summary": ["enabled"]})
    assert load_config(path).to_dict() == DEFAULTS


@pytest.mark.parametrize(
    ("env_value", "file_value", "expected"),
    [
        ("1", False, True),
        ("on", False, True),
        ("Yes", False, True),
        ("0", True, False),
        ("off", True, False),
        ("false", True, False),
        ("", False, False),  # blank: not set, the file decides
        ("", True, True),
    ],
)
def test_env_enabled_override(
    tmp_path: Path, env_value: str, file_value: bool, expected: bool
) -> None:
    path = _write(tmp_path / "config.json", {"session_summary": {"enabled": file_value}})
    overrides = summary_overrides_read({"KIROCREW_SUMMARY_ENABLED": env_value})
    assert load_config(path, overrides).enabled is expected


def test_env_enabled_without_file(tmp_path: Path) -> None:
    overrides = summary_overrides_read({"KIROCREW_SUMMARY_ENABLED": "true"})
    assert load_config(tmp_path / "missing.json", overrides).enabled


def test_env_int_overrides(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "config.json",
        {"session_summary": {"min_user_turns": 5, "max_intents": 7, "max_constraints": 3}},
    )
    env = {
        "KIROCREW_SUMMARY_MIN_USER_TURNS": "3",
        "KIROCREW_SUMMARY_REGENERATE_AFTER_TURNS": "2",
        "KIROCREW_SUMMARY_MAX_INTENTS": "",  # blank: not set, the file's 7 stays
        "KIROCREW_SUMMARY_MAX_CONSTRAINTS": "0",  # its floor: suppress the notes
        "KIROCREW_SUMMARY_ASSISTANT_EXCERPT_CHARS": " 120 ",
    }
    cfg = load_config(path, summary_overrides_read(env))
    assert cfg.to_dict() == {
        "enabled": False,
        "min_user_turns": 3,
        "regenerate_after_turns": 2,
        "max_intents": 7,
        "max_constraints": 0,
        "assistant_excerpt_chars": 120,
    }


@pytest.mark.parametrize(
    ("variable", "bad"),
    [
        ("KIROCREW_SUMMARY_ENABLED", "perhaps"),  # was ignored: the file decided
        ("KIROCREW_SUMMARY_MAX_INTENTS", "not a number"),  # was ignored
        ("KIROCREW_SUMMARY_MIN_USER_TURNS", "2.0"),  # was read as 2
        ("KIROCREW_SUMMARY_MAX_CONSTRAINTS", "-5"),  # was clamped to 0
        ("KIROCREW_SUMMARY_ASSISTANT_EXCERPT_CHARS", "10"),  # below its floor of 80
    ],
)
def test_a_bad_env_override_is_refused_naming_it(variable: str, bad: str) -> None:
    # One policy for every environment value: a typo is an error, never a silent default
    # (config.json, edited by hand at run time, keeps degrading instead).
    with pytest.raises(ImproperlyConfigured, match=f"{variable}={bad!r} is not valid"):
        summary_overrides_read({variable: bad})


def test_env_overrides_default_to_process_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIROCREW_SUMMARY_ENABLED", "on")
    monkeypatch.delenv("KIROCREW_SUMMARY_MAX_INTENTS", raising=False)
    assert summary_overrides_read() == SummaryOverrides(enabled=True)


def test_cache_rereads_only_on_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import summaries.core.config as config_mod

    path = _write(tmp_path / "config.json", {"session_summary": {"enabled": False}})
    calls: list[Path] = []
    real = config_mod.load_config

    def counting(p: Path, overrides: SummaryOverrides) -> SessionSummaryConfig:
        calls.append(p)
        return real(p, overrides)

    monkeypatch.setattr(config_mod, "load_config", counting)
    cache = ConfigCache(path)
    first = cache.get()
    assert first.enabled is False
    assert cache.get() is first
    assert len(calls) == 1

    write_enabled(path, True)  # turning the feature on takes effect without a restart
    assert cache.get().enabled is True
    assert len(calls) == 2

    st = path.stat()
    path.write_text(json.dumps({"session_summary": {"enabled": False, "max_intents": 3}}))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    cfg = cache.get()
    assert (cfg.enabled, cfg.max_intents) == (False, 3)
    assert len(calls) == 3


def test_cache_tracks_overrides_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    cache = ConfigCache(path)
    assert cache.get().enabled is False
    assert cache.get(SummaryOverrides(enabled=True)).enabled is True
    _write(path, {"session_summary": {"enabled": True}})
    assert cache.get().enabled is True
    path.unlink()
    assert cache.get().enabled is False


def test_write_enabled_creates_file(tmp_path: Path) -> None:
    path = tmp_path / "home" / "config.json"
    write_enabled(path, True)
    assert json.loads(path.read_text()) == {"session_summary": {"enabled": True}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]  # no temp left


def test_write_enabled_preserves_everything_else(tmp_path: Path) -> None:
    data: dict[str, Any] = {
        "agent": {"model": "x", "nested": [1, {"a": None}]},
        "session_summary": {"enabled": False, "max_intents": 9, "extra": "kept"},
        "zeta": "ünïcode",
    }
    path = _write(tmp_path / "config.json", data)
    path.chmod(0o644)
    write_enabled(path, True)
    after = json.loads(path.read_text(encoding="utf-8"))
    assert after == {**data, "session_summary": {**data["session_summary"], "enabled": True}}
    assert list(after) == list(data)  # key order kept for the person who edits the file
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    write_enabled(path, False)
    assert load_config(path).enabled is False
    assert load_config(path).max_intents == 9


def test_write_enabled_replaces_non_dict_section(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {"session_summary": "on", "k": 1})
    write_enabled(path, True)
    assert json.loads(path.read_text()) == {"session_summary": {"enabled": True}, "k": 1}


@pytest.mark.parametrize("content", ["{broken", "[1]"])
def test_write_enabled_refuses_to_clobber(tmp_path: Path, content: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ConfigWriteError):
        write_enabled(path, True)
    assert path.read_text() == content


def test_write_enabled_is_atomic_replace(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {"session_summary": {"enabled": False}})
    before = path.stat().st_ino
    write_enabled(path, True)
    assert path.stat().st_ino != before  # a new file renamed over the old one


def test_config_is_immutable() -> None:
    cfg = SessionSummaryConfig()
    with pytest.raises(AttributeError):
        cfg.enabled = True  # type: ignore[misc]


def test_core_imports_no_django() -> None:
    # The pure core must stay importable and testable without Django configured.
    code = (
        "import sys\n"
        "import summaries.core.config, summaries.core.extract, summaries.core.prompt\n"
        "import summaries.core.reply, summaries.core.gate, summaries.core.payload\n"
        "bad = [m for m in sys.modules if m == 'django' or m.startswith('django.')]\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    subprocess.run([sys.executable, "-c", code], cwd=root, env=env, check=True, timeout=60)
