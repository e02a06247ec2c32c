"""KIROCREW_LOCAL_MODEL_URLS: where the settings page looks for a local model server.
Ollama's and llama.cpp's usual addresses by default, ``off`` for none, and a value that
is not a list of http(s) URLs stops start-up naming the variable."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from kirocrew_site.env import env_url_list

NAME = "KIROCREW_LOCAL_MODEL_URLS"
DEFAULT = "http://127.0.0.1:11434/v1,http://127.0.0.1:8080/v1"


def read(value: str | None) -> list[str]:
    env = {} if value is None else {NAME: value}
    return env_url_list(NAME, DEFAULT, schemes=("http", "https"), env=env)


def test_unset_means_the_usual_local_addresses() -> None:
    assert read(None) == ["http://127.0.0.1:11434/v1", "http://127.0.0.1:8080/v1"]
    assert read("  ") == read(None)


def test_a_list_is_read_and_off_means_none() -> None:
    assert read(" http://10.0.0.5:8000/v1 , https://gpu.lan/v1,") == [
        "http://10.0.0.5:8000/v1",
        "https://gpu.lan/v1",
    ]
    assert read("off") == []


@pytest.mark.parametrize("bad", ["127.0.0.1:11434", "ftp://h/v1", "http://", "http://h:x/v1"])
def test_a_bad_address_names_the_variable(bad: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=NAME):
        read(f"http://127.0.0.1:11434/v1,{bad}")
