"""The offline summarizer as a :class:`SummaryBackend`: no network, no model."""

from __future__ import annotations

import json
from collections.abc import Sequence

from summaries.core.heuristic.compose import summarize_turns
from summaries.core.transcript_turn import TranscriptTurn


class HeuristicBackend:
    """Answers the summary prompt from the structured turns, never from the prompt text.

    The reply is the payload as a JSON object string, exactly what a model would
    return, so it goes through the same parser and normalizer as any other backend.
    Deterministic: the same turns always give byte-identical output.
    """

    name = "heuristic"
    # It reads the turns, never the prompt: an incremental (update) prompt saves it nothing.
    reads_prompt = False

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        del prompt  # rendered for models; the turns carry the same content, structured
        return json.dumps(summarize_turns(turns), ensure_ascii=False, sort_keys=True)
