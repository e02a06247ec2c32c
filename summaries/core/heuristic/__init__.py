"""Offline, deterministic intent summarizer: the default ``heuristic`` backend.

It applies the prompt's boundary signals and traps with lexicons and evidence
rules instead of a model. Pure Python, no Django, linear in the number of turns,
and it reads only what a model would read: the extracted turns and their ts.

Modules, in pipeline order: ``exchanges`` (turns grouped per person turn,
automation set aside), ``signals`` (what a person turn does), ``segment``
(intent boundaries), ``evidence`` and ``status`` (status/verified), ``constraints``,
``compose`` (titles, runbook, next steps, payload).
"""

from summaries.core.heuristic.backend import HeuristicBackend
from summaries.core.heuristic.compose import summarize_turns

__all__ = ["HeuristicBackend", "summarize_turns"]
