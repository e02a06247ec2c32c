"""A progress line cut inside a code span reads as code in the panel, not as a stray
backtick before the command ("`pytest…")."""

from __future__ import annotations

from kirocrew_site.dashboard.markdown import render_inline
from summaries.core.heuristic.words import clip

LINE = "Ran `pytest -q tests/test_export.py --maxfail=1 -k accented_names` and all 48 passed."


def test_a_line_cut_inside_a_code_span_renders_the_span_as_code() -> None:
    cut = clip(LINE, 40)
    assert len(cut) <= 40
    html = render_inline(cut)
    assert "`" not in html
    assert html.startswith("Ran <code>pytest -q")


def test_a_line_cut_after_a_closed_span_is_left_as_it_is() -> None:
    assert clip(LINE, 80) == LINE[:78].rsplit(" ", 1)[0] + "\u2026"
