"""The panel says what failed when the model does: the POST's 409 for a model failure is
shown in the server's words (whether waiting helps, where to look), not as the generic
"try again in a moment". The answer is the API's own row (``summaries.api``), served to
the page in place of the server's, since the browser server runs the offline model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from summaries.api import BACKEND_REFUSALS, REFUSALS
from summaries.core.gate import PassResult
from tests.browser.conftest import Server, open_session

CASES = {
    "unreachable": BACKEND_REFUSALS["BackendUnavailable"],
    "runaway": BACKEND_REFUSALS["BackendRunaway"],
    "unusable": REFUSALS[PassResult.UNUSABLE_REPLY],
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_model_failure_is_shown_in_the_servers_words(
    page: Any, server: Server, case: str
) -> None:
    status, code, message = CASES[case]
    slot = server.new_slot(f"model-{case}", "Model failure", turns=2)
    open_session(page, slot)
    page.route(
        f"**/api/chat/slots/{slot}/summary",
        lambda route: (
            route.fulfill(
                status=status,
                content_type="application/json",
                body=json.dumps({"error": message, "code": code}),
            )
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    page.locator("#summarize").click()
    shown = message[0].upper() + message[1:] + "."
    page.locator("#summary-status").get_by_text(shown).wait_for()
    assert "Try again in a moment" not in page.locator("#summary-status").inner_text()
