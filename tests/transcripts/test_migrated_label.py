"""The migrate check names the database it checked, never with its password."""

from __future__ import annotations

from transcripts.management.migrated import database_label


def test_a_server_database_is_named_by_url_without_its_password() -> None:
    label = database_label(
        {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": "kirocrew",
            "USER": "kiro",
            "PASSWORD": "s3cret-pw",
            "HOST": "db.local",
            "PORT": 5432,
        }
    )
    assert label == "postgresql://kiro@db.local:5432/kirocrew"


def test_sqlite_is_named_by_its_file() -> None:
    label = database_label({"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/var/k.sqlite3"})
    assert label == "/srv/var/k.sqlite3"
