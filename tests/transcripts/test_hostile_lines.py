"""A transcript line of the right shape with a field of another JSON type (hand-edited, or an
original-format file imported as it was) never breaks a read or a rewrite: it folds as a
stray record or an odd row, and every read, page, fork, rewind and rotation still answers.

Before the fold compared an unhashable ``_type`` (a list, an object) with the revision kinds,
such a line raised out of every read of the session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.odd_json import field_paths, replaced
from transcripts.core import paging, rewrite
from transcripts.core.errors import RowNotFound
from transcripts.core.store import TranscriptStore

from .import_attack_helpers import run

ODD: list[Any] = ["s", ["x"], {"a": 1}, 5, 2**70, True, None]


STEPS: list[tuple[str, Callable[[TranscriptStore, str], Any]]] = [
    ("read", lambda store, _: store.read_session("k")),
    ("page", lambda store, _: paging.read_page(store, "k", None, 10, cache=paging.IndexCache())),
    ("marks", lambda store, _: paging.turn_marks(store, "k", cache=paging.IndexCache())),
    ("append", lambda store, _: store.append_row("k", "user", "more")),
    ("title", lambda store, _: rewrite.update_metadata(store, "k", {"title": "x"})),
    ("fork", lambda store, _: rewrite.fork(store, "k", "k2")),
    ("rewind", lambda store, first: rewrite.rewind(store, "k", first)),
    ("rotate", lambda store, _: rewrite.rotate(store, "k", force=True)),
    ("read again", lambda store, _: store.read_session("k")),
    ("delete", lambda store, _: rewrite.delete(store, "k")),
]


@pytest.mark.slow
def test_no_field_of_another_json_type_breaks_a_read_or_a_rewrite(tmp_path: Path) -> None:
    model = TranscriptStore(tmp_path / "model")
    model.create("k", {"title": "t", "source": "api"})
    first = model.append_row("k", "user", "hello").ts[0]
    model.append_row("k", "assistant", "hi", meta={"tool": "x"})
    model.append_revision("k", first, {"content": "hello!"})
    model.append_row("k", "user", "second")
    lines = model.path("k").read_text().splitlines()

    raised = []
    n = 0
    for i, record in enumerate(json.loads(text) for text in lines):
        for path in field_paths(record):
            for value in ODD:
                n += 1
                store = TranscriptStore(tmp_path / f"s{n}")
                store.path("k").parent.mkdir(parents=True, exist_ok=True)
                hostile = [*lines[:i], json.dumps(replaced(record, path, value)), *lines[i + 1 :]]
                store.path("k").write_text("\n".join(hostile) + "\n")
                for name, step in STEPS:
                    try:
                        step(store, first)
                    except RowNotFound:
                        pass  # the rewind's row is the one made unrecognisable: a clear refusal
                    except Exception as exc:  # every other raise is the finding
                        raised.append(f"{name}: line {i} {path} = {value!r}: {exc!r}")
    assert not raised, f"{len(raised)} raises, e.g. {raised[:3]}"


@pytest.mark.django_db
@pytest.mark.parametrize("kind", [["revision"], {"_type": "revision"}])
def test_an_original_file_with_such_a_line_imports_and_reports_it(
    tmp_path: Path, store: TranscriptStore, kind: Any
) -> None:
    folder = tmp_path / "original"
    folder.mkdir()
    sample = Path(__file__).parents[2] / "transcripts/sample_sessions/dashboard_coder-demo.jsonl"
    text = sample.read_text() + json.dumps({"_type": kind, "target_ts": "x"}) + "\n"
    (folder / sample.name).write_text(text)
    code, out = run(str(folder))
    assert code == 0, out
    assert "imported dashboard:coder-demo (anomalies: stray_record=1)" in out
    assert len(store.read_session("dashboard:coder-demo").rows) > 0
