"""Line 0 → source and project (pure core), and the list's shortened project path."""

from __future__ import annotations

from transcripts.core.provenance import session_project, session_source, short_project


def test_source_from_line_0() -> None:
    assert session_source({"source": "claude-code", "key": "claude:x"}) == "claude-code"
    assert session_source({"source": "codex"}) == "codex"
    assert session_source({"source": "cli", "key": "dashboard:s1"}) == "api"  # not ours
    assert session_source({"key": "dashboard:s1"}) == "api"  # session_create writes a key
    assert session_source({"created_at": "2026-01-01"}) == "kirocrew"  # the original's
    assert session_source(None) == "kirocrew"


def test_project_prefers_cwd_then_the_originals_keys() -> None:
    assert session_project({"cwd": "/a", "project": "/b"}) == "/a"
    assert session_project({"cwd": " ", "project": "/b", "workspace": "/c"}) == "/b"
    assert session_project({"workspace": "/c"}) == "/c"
    assert session_project({"cwd": 7}) == ""
    assert len(session_project({"cwd": "/" + "x" * 5000})) == 1024


def test_short_project() -> None:
    assert short_project("/home/ann/src/dateparse", home="/root") == "~/src/dateparse"
    assert short_project("/Users/bo/p", home="/root") == "~/p"
    assert short_project("/root/work/p", home="/root") == "~/work/p"
    assert short_project("/srv/p", home="/root") == "/srv/p"
    deep = "/srv/" + "/".join(["segment"] * 10) + "/proj"
    assert short_project(deep, home="/") == "…/segment/proj"
    long_name = "/srv/" + "n" * 80
    assert short_project(long_name, home="/") == "…" + "n" * 39
