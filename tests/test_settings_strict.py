"""Strict settings: bad environment values stop start-up naming the variable, every
setting the code reads is declared in settings.py, none is dead, one atomic write."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

from kirocrew_site import env as envmod
from summaries.core.config import write_enabled

ROOT = Path(__file__).resolve().parent.parent
CODE_DIRS = ("transcripts", "summaries", "kirocrew_site")
SETTINGS_PY = ROOT / "kirocrew_site" / "settings.py"


def _code_files() -> list[Path]:
    return sorted(
        path
        for folder in CODE_DIRS
        for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts
    )


# ---------------------------------------------------------------- the typed readers

Reader = Callable[[str, Any], Any]

READERS: dict[str, tuple[Reader, Any, list[str], list[tuple[str, Any]]]] = {
    # name: (reader, default, bad values, (good value, parsed))
    "int": (
        lambda n, e: envmod.env_int(n, 7, env=e),
        7,
        ["abc", "1.5", "-1", "0x10", "5 apples"],
        [("42", 42), (" 0 ", 0)],
    ),
    "float": (
        lambda n, e: envmod.env_float(n, 60.0, env=e),
        60.0,
        ["abc", "nan", "inf", "-2", "1,5"],
        [("2.5", 2.5), ("30", 30.0)],
    ),
    "bool": (
        lambda n, e: envmod.env_bool(n, False, env=e),
        False,
        ["ture", "2", "y es", "enabled"],
        [("1", True), ("TRUE", True), ("off", False), ("no", False)],
    ),
    "duration": (
        lambda n, e: envmod.env_duration(n, 600, minimum=1, env=e),
        600,
        ["10x", "-5", "0", "1.5h", "h", "ten"],
        [("90", 90), ("90s", 90), ("10m", 600), ("2h", 7200), ("1d", 86400)],
    ),
    "list": (
        lambda n, e: envmod.env_list(n, "a,b", env=e),
        ["a", "b"],
        [",", " , ,"],
        [("x", ["x"]), ("x, y ,", ["x", "y"])],
    ),
    "url": (
        lambda n, e: envmod.env_url(n, "", schemes=("redis", "rediss", "unix"), env=e),
        "",
        ["localhost:6379", "http://h:6379", "redis://", "redis://h:notaport", "redis:/h"],
        [
            ("redis://127.0.0.1:6379/7", "redis://127.0.0.1:6379/7"),
            ("unix:///s.sock", "unix:///s.sock"),
        ],
    ),
}


@pytest.mark.parametrize(
    ("kind", "bad"), [(kind, bad) for kind, spec in READERS.items() for bad in spec[2]]
)
def test_bad_value_raises_naming_the_variable(kind: str, bad: str) -> None:
    reader = READERS[kind][0]
    with pytest.raises(ImproperlyConfigured, match="KIROCREW_PROBE_VAR"):
        reader("KIROCREW_PROBE_VAR", {"KIROCREW_PROBE_VAR": bad})


@pytest.mark.parametrize(
    ("kind", "raw", "parsed"),
    [(kind, raw, parsed) for kind, spec in READERS.items() for raw, parsed in spec[3]],
)
def test_good_value_parses(kind: str, raw: str, parsed: object) -> None:
    assert READERS[kind][0]("V", {"V": raw}) == parsed


@pytest.mark.parametrize("kind", list(READERS))
@pytest.mark.parametrize("env", [{}, {"V": ""}, {"V": "   "}])
def test_unset_or_empty_is_the_default(kind: str, env: dict[str, str]) -> None:
    reader, default, _bad, _good = READERS[kind]
    assert reader("V", env) == default


def test_choice_and_proxy_header_name_the_variable() -> None:
    with pytest.raises(ImproperlyConfigured, match="KIROCREW_TRANSCRIPT_FSYNC"):
        envmod.env_choice(
            "KIROCREW_TRANSCRIPT_FSYNC",
            "rotate",
            ("never", "rotate"),
            {"KIROCREW_TRANSCRIPT_FSYNC": "sometimes"},
        )
    assert envmod.env_choice("C", "rotate", ("never", "rotate"), {"C": "NEVER"}) == "never"
    with pytest.raises(ImproperlyConfigured, match="DJANGO_SECURE_PROXY_SSL_HEADER"):
        envmod.env_proxy_header(
            "DJANGO_SECURE_PROXY_SSL_HEADER",
            {"DJANGO_SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto"},
        )


# ---------------------------------------------------------------- settings.py uses them


def _load_settings(tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("KIROCREW_", "DJANGO_", "CELERY_"))
        and key not in ("DATABASE_URL", "REDIS_URL")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="kirocrew_site.settings",
        KIROCREW_HOME=str(tmp_path / "home"),
        DJANGO_DEBUG="1",
        **extra,
    )
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.KIROCREW_SUMMARY_IN_FLIGHT_TTL, s.KIROCREW_OPENAI_TIMEOUT, s.KIROCREW_TLS)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("variable", "bad"),
    [
        ("KIROCREW_SUMMARY_QUEUE", "lots"),  # int: fell back to the default silently
        ("KIROCREW_OPENAI_TIMEOUT", "sixty"),  # float: crashed with a bare ValueError
        ("KIROCREW_TLS", "ture"),  # bool: read as off
        ("KIROCREW_SLOT_DIRTY_TTL", "1 minute"),  # duration
        ("DJANGO_ALLOWED_HOSTS", ","),  # list: no host at all
        ("REDIS_URL", "127.0.0.1:6379"),  # URL without a scheme
        ("KIROCREW_SUMMARY_ENABLED", "perhaps"),  # config.json's override: was ignored
        ("KIROCREW_SUMMARY_MAX_INTENTS", "lots"),  # likewise
    ],
)
def test_settings_refuse_a_bad_environment_value(tmp_path: Path, variable: str, bad: str) -> None:
    result = _load_settings(tmp_path, **{variable: bad})
    assert result.returncode != 0, result.stdout
    assert "ImproperlyConfigured" in result.stderr
    assert f"{variable}={bad!r}" in result.stderr


def test_settings_accept_typed_values(tmp_path: Path) -> None:
    result = _load_settings(
        tmp_path,
        KIROCREW_SUMMARY_IN_FLIGHT_TTL="10m",
        KIROCREW_OPENAI_TIMEOUT="2.5",
        KIROCREW_TLS="yes",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["600", "2.5", "True"]


# ---------------------------------------------------------------- declared once, none dead


def test_no_getattr_defaults_on_settings() -> None:
    pattern = re.compile(r"getattr\(\s*(django\.conf\.)?settings\s*,")
    hits = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _code_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == [], "declare the setting in settings.py and read settings.X"


def test_every_setting_the_code_reads_is_declared() -> None:
    # An undeclared name would raise AttributeError at the first request that reads it.
    used = {
        name
        for path in _code_files()
        if path != SETTINGS_PY
        for name in re.findall(r"\bsettings\.([A-Z][A-Z0-9_]+)\b", path.read_text())
    }
    assert used, "the scan found nothing: the pattern is wrong"
    missing = sorted(name for name in used if not hasattr(django_settings, name))
    assert missing == []


def test_no_dead_project_settings() -> None:
    source = SETTINGS_PY.read_text()
    declared = re.findall(r"^((?:KIROCREW|TRANSCRIPT)_[A-Z0-9_]+) = ", source, re.MULTILINE)
    assert "KIROCREW_SUMMARY_DISPATCH" in declared
    others = "\n".join(p.read_text() for p in _code_files() if p != SETTINGS_PY)
    dead = [
        name
        for name in declared
        if not re.search(rf"\b{name}\b", others)
        and len(re.findall(rf"\b{name}\b", source)) < 2  # nor used by another setting
    ]
    assert dead == []
    # The one task ignores its result: a result backend would be configured for nothing.
    assert not re.search(r"^CELERY_RESULT_BACKEND\b", source, re.MULTILINE)


def test_every_environment_variable_is_in_the_readme() -> None:
    source = SETTINGS_PY.read_text()
    read = set(re.findall(r"env_[a-z_]+\(\s*\"([A-Z][A-Z0-9_]+)\"", source))
    read |= set(re.findall(r"os\.environ\.get\(\"([A-Z][A-Z0-9_]+)\"", source))
    assert {"KIROCREW_HOME", "KIROCREW_OPENAI_TIMEOUT", "DATABASE_URL"} <= read
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Configuration (environment)", 1)[1].split("\n## ", 1)[0]
    documented = {
        name
        for row in table.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split(" | ")[0])
    }
    assert sorted(read - documented) == []


# ---------------------------------------------------------------- one atomic write


def test_one_atomic_write_implementation() -> None:
    replacing = [
        str(path.relative_to(ROOT))
        for path in _code_files()
        if re.search(r"os\.replace\(|os\.rename\(|\.replace\(tmp|mkstemp\(", path.read_text())
    ]
    assert replacing == ["transcripts/core/fsutil.py"]


def test_config_write_keeps_private_modes(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "config.json"
    write_enabled(path, True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # new: may hold API keys
    path.chmod(0o640)
    write_enabled(path, False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # existing: its own mode
    assert path.read_text() == '{\n  "session_summary": {\n    "enabled": false\n  }\n}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.json"]  # no temp left
