"""The summarization prompt.

The judgement traps cannot be detected in code, so the prompt names each one and the
tests pin every phrase: a later trim fails a test instead of quietly degrading every
summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from .extract import MAX_INPUT_CHARS, render_bounded_input
from .transcript_turn import TranscriptTurn

PROMPT = """\
Summarize the chat session below by INTENT, for a side panel whose only job is to make \
returning to the session cheap. The reader kicked off this work, got pulled away, and is \
coming back: they need why they asked, what actually happened, and what is left to do, \
without re-reading the transcript.

An INTENT is a goal the person pursued. It can span many turns. It is NOT one message and \
NOT a topic label. A session where the person pivoted has several intents. Every turn \
number you write is a USER turn number, as printed in "USER (turn N)".

Return ONLY a JSON object, no prose around it, in exactly this shape:
{"intents": [{"title": "...", "ranges": [[first_user_turn, last_user_turn]],
  "status": "active" | "completed" | "abandoned", "verified": true | false | null,
  "origin_turn": <user turn or null>, "initial_intent": "...",
  "progress": ["what is actually true now", ...],
  "next_steps": [{"what": "...", "why": "...", "expect": "..."}]}],
 "constraints": ["how this project has to be run -- recurring operational facts"]}

FIELD RULES
- "title": the goal, short, in the person's own terms.
- "ranges" is a LIST of [first_user_turn, last_user_turn] pairs. It may have several \
entries (work that went dormant and resumed) and may overlap another intent's ranges (a \
question asked in the middle of other work).
- "status" is about the WORK: active, completed, or abandoned.
- "verified" is about the RESULT and is independent of status. true = the outcome was \
confirmed; false = never confirmed: shipped but never looked at, diagnosed but never \
fixed, merged but never run; null = not applicable.
- "origin_turn": the user turn that triggered this intent, or null.
- "initial_intent": why the work started, in one or two sentences.
- "progress" is a RUNBOOK, not a history: what is true now, the state someone picking \
this up needs. Its value is inversely proportional to its length.
- "next_steps" are YOUR inferences about what remains: only genuinely open steps, each \
with what to do, why, and what to expect. An empty list if nothing is needed.
- "constraints" are recurring operational facts about how THIS project has to be run: a \
required flag, a step that has to happen after a change, a name they corrected you on. \
Not general preferences. At most a handful, or leave it empty.

BOUNDARY SIGNALS, most reliable first
1. A commit, merge, or PR being opened ends a piece of work more reliably than any \
phrasing.
2. Timestamps: they separate a routine re-run daily from a failed-and-retried request. \
A message repeated across days is a routine, not a retry.
3. A correction from the person ("no", "revert that", "that broke it") is the \
highest-value signal per character in the transcript. Never summarize away a correction.

TRAPS -- each of these has produced a wrong summary before
1. A row labelled "[automation, not the user]" is not the person. It is never an intent \
and never a request.
2. A row labelled as a resend of an earlier turn is not insistence and not evidence that \
the request was ignored; the earlier request may well have succeeded.
3. A later message can RETRACT an earlier one. The retraction is the truth; do not \
report the retracted claim.
4. Option lines ("I could do A, B or C") are offers from the assistant, mostly DECLINED. \
They are not requests.
5. Work being merged is not work being verified: merged but never run is "completed" \
with "verified": false.
6. A question is not a work order ("How hard would it be to...", "do not change \
anything yet"). Record it as the next intent's origin_turn, not as work that was asked \
for.
7. Facts go stale inside one session. When two statements disagree, prefer the latest.
8. A context reset or compaction mid-session is not a topic boundary.
9. The session's own title covers only its beginning. Do not anchor on it.

TRANSCRIPT

"""


def build_prompt(turns: Sequence[TranscriptTurn], max_chars: int = MAX_INPUT_CHARS) -> str:
    return PROMPT + render_bounded_input(turns, max_chars)
