"""The session page's JS holds no rule of its own: it shows what the server sends.

Every rule the page needs (turn numbering, positions, gap splitting, the badge and evidence
labels, which state an intent is in, the count's wording) is the server's. Here the server's
answers are swapped, in a real Chromium, for ones no client-side rule could have produced:
opaque positions and gap tokens, labels the code has never seen, rows without turn numbers.
The page must echo the positions and tokens exactly, put the markup where the answer says,
and show the labels it was given. A JS copy of a rule (parsing a cursor, numbering a turn,
wording a count, a label table of its own) shows up as a difference here.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

from summaries.core.payload import EVIDENCE_KINDS
from tests.browser.conftest import Server, open_session
from tests.browser.test_long_session import IN_VIEW, long_session

REWRITE_PAGE_STATE = """
if (location.pathname === %s) {
  const served = %s;
  new MutationObserver((records, observer) => {
    const node = document.getElementById("page-state");
    let state;
    try { state = JSON.parse(node.textContent); } catch { return; }  // not all parsed yet
    observer.disconnect();
    const { intents, ...rest } = served;
    Object.assign(state, rest);
    state.summary = { ...state.summary, enabled: true, intents };
    node.textContent = JSON.stringify(state);
  }).observe(document, { childList: true, subtree: true, characterData: true });
}
"""
STATES = ["needs-you", "in-progress", "done", "dropped"]


def label(kind: str) -> str:
    return f"Served label for {kind}"


def served_intents() -> list[dict[str, Any]]:
    """One intent per evidence kind (states in turn), and one with no evidence."""
    intents: list[dict[str, Any]] = [
        {
            "title": f"Intent {kind}",
            "state": STATES[i % len(STATES)],
            "ranges": [[1, 1]],
            "evidence": {"kind": kind, "turn": 1},
        }
        for i, kind in enumerate(sorted(EVIDENCE_KINDS))
    ]
    intents.append({"title": "Intent without evidence", "state": "done", "ranges": [[1, 1]]})
    return intents


def with_served_panel(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "enabled": True, "intents": served_intents()}


def row(cursor: str, text: str, id_: str = "") -> str:
    anchor = f' id="{id_}"' if id_ else ""
    return f'<li class="row" data-cursor="{cursor}"{anchor}><p>{text}</p></li>'


def gap_item(token: str) -> str:
    return (
        f'<li class="gap" data-gap="{token}"><span class="gap-text">Served gap</span>'
        ' <button type="button" class="gap-load">Load these turns</button></li>'
    )


class ServedAnswers:
    """Playwright routes that answer the session page's reads in the server's stead."""

    def __init__(self, page: Any, slot: str) -> None:
        self.live: list[dict[str, list[str]]] = []  # the queries of the live rows reads
        self.gaps: list[dict[str, list[str]]] = []  # the queries of the gap reads
        self.live_answers = [
            {"html": row("served-a", "Served row A"), "cursor": "opaque-1",
             "turns_text": "Served count one", "replace": None},
            {"html": row("served-b", "Served row B"), "cursor": "opaque-2",
             "turns_text": "Served count two", "replace": "served-a"},
        ]  # fmt: skip
        self.gap_answers: list[dict[str, Any]] = []
        base = f"/s/{slot}/"
        # The page state, rewritten as the parser inserts it (before the modules run). Not a
        # routed document: Chromium treats one as public and blocks its socket to loopback.
        served = {
            "cursor": "opaque-0",
            "stateLabels": {s: label(s) for s in STATES},
            "evidenceLabels": {k: label(k) for k in EVIDENCE_KINDS},
            "noEvidence": "Served: no evidence",
            "intents": served_intents(),
        }
        page.add_init_script(REWRITE_PAGE_STATE % (json.dumps(base), json.dumps(served)))
        page.route(re.compile(rf"{re.escape(base)}summary/$"), self.summary)
        page.route(re.compile(rf"{re.escape(base)}timeline/$"), self.timeline)
        page.route(re.compile(rf"{re.escape(base)}rows/\?"), self.rows)

    def summary(self, route: Any) -> None:
        route.fulfill(json=with_served_panel(route.fetch().json()))

    def timeline(self, route: Any) -> None:
        html = '<section id="intent-timeline"><p id="served-timeline">Served timeline</p></section>'
        route.fulfill(json={"html": html})

    def rows(self, route: Any) -> None:
        query = parse_qs(urlsplit(route.request.url).query)
        if "at" in query:
            self.live.append(query)
            at = query["at"][0]
            answer = self.live_answers.pop(0) if self.live_answers else {"html": "", "cursor": at}
        else:
            self.gaps.append(query)
            answer = self.gap_answers.pop(0)
        route.fulfill(json=answer)


def test_the_session_page_shows_what_the_server_sends(page: Any, server: Server) -> None:
    slot = long_session(server, "served")
    served = ServedAnswers(page, slot)
    open_session(page, slot)
    transcript = page.locator("#transcript")

    # The panel: every badge and evidence line in the labels the page state carried.
    panel = page.locator("#summary-panel")
    for i, kind in enumerate(sorted(EVIDENCE_KINDS)):
        card = panel.locator("details.intent", has_text=f"Intent {kind}")
        expect(card.locator("summary .badge")).to_have_text(label(STATES[i % len(STATES)]))
        expect(card.locator("summary .evidence")).to_contain_text(f"{label(kind)} (turn 1)")
    bare = panel.locator("details.intent", has_text="Intent without evidence")
    expect(bare.locator("summary .evidence")).to_have_text("Served: no evidence")
    expect(page.locator("#served-timeline")).to_have_text("Served timeline")

    # Live rows: the first read echoes the page's opaque position, the next one the
    # position the answer gave; rows go where the answer says, the count in its words.
    expect(transcript.locator("li.row").last).to_have_text("Served row A")
    expect(page.locator("#turn-count")).to_have_text("Served count one")
    server.api("POST", f"/slots/{slot}/turns", {"content": "A live question."}, expect=201)
    expect(transcript.locator("li.row").last).to_have_text("Served row B")
    expect(transcript.get_by_text("Served row A")).to_have_count(0)  # the answer replaced it
    expect(page.locator("#turn-count")).to_have_text("Served count two")
    assert [q["at"] for q in served.live[:2]] == [["opaque-0"], ["opaque-1"]]
    assert served.live[0]["why"] == ["hello"]
    assert served.live[1]["why"] == ["user"]  # the frame's role: why the page reads

    # The gap's button sends the gap's own token; the answer's markup takes its place.
    gap = transcript.locator("li.gap")
    token = gap.get_attribute("data-gap")
    served.gap_answers.append(
        {
            "gap": token,
            "html": gap_item("opaque-gap-2")
            + row("served-g", "Served gap row", "served-gap-row")
            + gap_item("opaque-gap-3"),
        }
    )
    gap.get_by_role("button").click()
    expect(page.locator("#served-gap-row")).to_have_text("Served gap row")
    expect(transcript.locator("li.gap")).to_have_text([re.compile("Served gap")] * 2)
    assert served.gaps == [{"gap": [token]}]

    # A link to an element not on the page asks the server which gap holds it, with every
    # gap's token; the markup replaces the gap the answer names, not another.
    served.gap_answers.append(
        {"gap": "opaque-gap-3", "html": row("served-t", "Served target", "served-target")}
    )
    page.evaluate("location.hash = '#served-target'")
    page.locator("#served-target").wait_for(state="attached")
    page.wait_for_function(IN_VIEW, arg="served-target")
    assert served.gaps[1] == {"target": ["served-target"], "gap": ["opaque-gap-2", "opaque-gap-3"]}
    assert transcript.locator("li.gap").get_attribute("data-gap") == "opaque-gap-2"
    served_ids = "els => els.map(e => e.id).filter(id => id.startsWith('served'))"
    order = page.eval_on_selector_all("#transcript > li", served_ids)
    assert order == ["served-gap-row", "served-target"]
