"""Dedicated PostgreSQL and Redis resources for the services-profile end-to-end tests."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import psycopg
import pytest
import redis

from tests.e2e.processes import with_path


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database on the server DATABASE_URL names; dropped afterwards."""
    server = os.environ["DATABASE_URL"]
    name = f"kirocrew_e2e_{secrets.token_hex(4)}"
    admin = with_path(server, "/postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_path(server, f"/{name}")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def redis_urls() -> Iterator[tuple[str, str]]:
    """(channel layer URL, broker URL): two dedicated database numbers, flushed around."""
    server = os.environ["REDIS_URL"]
    numbers = os.environ.get("KIROCREW_E2E_REDIS_DBS", "14,15").split(",")
    urls = (with_path(server, f"/{int(numbers[0])}"), with_path(server, f"/{int(numbers[1])}"))

    def flush() -> None:
        for url in urls:
            client = redis.Redis.from_url(url)
            try:
                client.flushdb()
            finally:
                client.close()

    flush()
    try:
        yield urls
    finally:
        flush()
