"""A row whose fields have the wrong JSON types (an original file imported as it was, or a
hand-edited transcript) is shown, never a 500: the session page, its rows, the summary and
the API all answer for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.transcripts.import_attack_helpers import run
from transcripts.models import Slot

pytestmark = pytest.mark.django_db

SAMPLE = Path(__file__).parents[2] / "transcripts/sample_sessions/dashboard_coder-demo.jsonl"


@pytest.mark.parametrize("role", [["assistant"], {"role": "user"}, 5, None])
def test_a_row_whose_role_is_not_a_string_is_shown_as_a_note(
    tmp_path: Path, client_in: Client, configure: Any, role: Any
) -> None:
    configure(enabled=True, min_user_turns=1)
    lines = SAMPLE.read_text().splitlines()
    odd = {**json.loads(lines[2]), "role": role, "content": "an odd row's words"}
    (tmp_path / SAMPLE.name).write_text("\n".join([*lines[:2], json.dumps(odd), *lines[3:]]))
    code, out = run(str(tmp_path))
    assert code == 0, out
    slot = Slot.objects.get(session__key="dashboard:coder-demo").name

    page = client_in.get(f"/s/{slot}/")
    assert page.status_code == 200
    assert "an odd row&#x27;s words" in page.content.decode()
    for path in (f"/s/{slot}/rows/", f"/s/{slot}/summary/", f"/api/chat/slots/{slot}/transcript"):
        assert client_in.get(path).status_code == 200, path
