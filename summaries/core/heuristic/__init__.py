"""Offline, deterministic intent summarizer: the default ``heuristic`` backend.

It applies the prompt's boundary signals and traps with lexicons and evidence rules
instead of a model: pure Python, no Django, linear in the number of turns, reading only
what a model would read (the extracted turns and their ts). Pipeline: ``exchanges``,
``signals`` with ``lexicon``, ``segment`` with ``boundary`` and ``draft``, ``evidence``
and ``status``, ``constraints``, ``compose``. Quality: bench/summary_quality.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from summaries.core.heuristic.compose import summarize_turns
from summaries.core.transcript_turn import TranscriptTurn

__all__ = ["HeuristicBackend", "summarize_turns"]


class HeuristicBackend:
    """Answers the summary prompt from the structured turns, never from the prompt text.

    The reply is the payload as a JSON object string, exactly what a model would return,
    so it goes through the same parser and normalizer as any other backend.
    """

    name = "heuristic"
    # It reads the turns, never the prompt: an incremental (update) prompt saves it nothing.
    reads_prompt = False

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str:
        del prompt  # rendered for models; the turns carry the same content, structured
        return json.dumps(summarize_turns(turns), ensure_ascii=False, sort_keys=True)
