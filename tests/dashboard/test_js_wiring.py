"""The page's JS only wires (issue 10): every rule the page needs is computed on the server.

Structural checks on the shipped modules: ``dashboard.js`` holds no turn numbering, no
cursor parsing and no row or gap markup, and the panel takes its labels and intent states
from the server. The browser tests prove the wiring still works.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kirocrew_site.dashboard.present import EVIDENCE_LABELS, STATE_LABELS
from summaries.core.payload import EVIDENCE_KINDS

JS = Path(__file__).resolve().parents[2] / "static" / "js"


def code(name: str) -> str:
    """The module without its comments (a comment may name what the code must not do)."""
    text = (JS / name).read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$|(?<=[;{},)])\s*//.*$", "", text)


FORBIDDEN_IN_DASHBOARD = {
    "turn numbers read from the page": r"dataset\.(turn|from|to)\b|data-(turn|from|to)\b",
    "numbers parsed from the page or a reply": r"\bNumber\(|parseInt|parseFloat|\.first\b|\.last\b",
    "turn arithmetic": r"[+-]\s*1\b|Math\.(min|max)\([^)]*(turn|gap|from|size|last)",
    "a turn anchor pattern": r"#turn-|turn-\$\{|\\d",
    "ts#n cursor parsing": r"""(split|indexOf|lastIndexOf|includes)\(\s*["'`]#|ts#|partition""",
    "the old turn-range protocol": r"""turn_from|turn_to|["'`]turns["'`]|\.turns\b|userTurns|pageTurns""",
    "a row-kind rule": r"revision|\.role\s*[!=]==",
    "row or gap markup built in JS": (
        r"""\bel\(|createElement|innerHTML|insertAdjacentHTML|["'`]<li|class:\s*["'`](gap|row)"""
    ),
    "a count worded in JS": r"\bplural\(",
}


@pytest.mark.parametrize("rule", sorted(FORBIDDEN_IN_DASHBOARD))
def test_dashboard_js_holds_no_turn_or_cursor_logic(rule: str) -> None:
    found = re.findall(FORBIDDEN_IN_DASHBOARD[rule], code("dashboard.js"))
    assert not found, f"dashboard.js: {rule}: {found}"


def test_the_structural_check_sees_the_old_code() -> None:
    """The patterns catch what dashboard.js used to do (so the check can fail)."""
    old = [
        "let before = Number(last?.dataset.turn || 0);",
        'if (after) query.set("turns", String(before));',
        "if (first > gapFrom) parts.push(gapEl(gapFrom, first - 1, gap.dataset.cursor));",
        "const match = /^#turn-(\\d+)$/.exec(hash);",
        'row(data) { if (mine(data)) transcript.pull(data.role === "revision"); }',
        'el("span", { class: "gap-text" }, `… ${plural(to - from + 1, "turn")} not loaded …`)',
    ]
    for line in old:
        assert any(re.search(p, line) for p in FORBIDDEN_IN_DASHBOARD.values()), line


def test_the_panel_takes_labels_and_states_from_the_server() -> None:
    panel = code("panel.js")
    for kind in EVIDENCE_KINDS:  # no copy of the evidence label table
        assert not re.search(rf"\b{kind}\s*:", panel), kind
    for label in [*EVIDENCE_LABELS.values(), *STATE_LABELS.values()]:
        assert label not in panel, label
    # No copy of the state rule (summaries.core.payload.derive_state).
    assert not re.search(r"intent\.status|intent\.verified|abandoned|completed", panel)
    assert "state.evidenceLabels" in panel
    assert "state.stateLabels" in panel


def test_every_evidence_kind_has_one_label() -> None:
    assert set(EVIDENCE_LABELS) == set(EVIDENCE_KINDS)
