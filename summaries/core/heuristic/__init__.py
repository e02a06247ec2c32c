"""Offline, deterministic intent summarizer: the default ``heuristic`` backend.

It applies the prompt's boundary signals and traps with lexicons and evidence
rules instead of a model. Pure Python, no Django, linear in the number of turns,
and it reads only what a model would read: the extracted turns and their ts.

Modules, in pipeline order: ``exchanges`` (turns grouped per person turn,
automation set aside), ``signals`` with ``lexicon`` (what a person turn does),
``segment`` with ``draft`` (intent boundaries), ``evidence`` and ``status``
(status and verified), ``constraints``, ``compose`` (titles, runbook, next steps,
payload). Its quality is measured by bench/summary_quality.py against the labelled
sessions in tests/data/summary_quality/.
"""

from summaries.core.heuristic.backend import HeuristicBackend
from summaries.core.heuristic.compose import summarize_turns

__all__ = ["HeuristicBackend", "summarize_turns"]
