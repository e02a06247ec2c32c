"""Status (about the work) and verified (about the result), read from evidence in order.

They are decided apart because they disagree where it matters: merged-but-never-run is
completed and unverified. Status, first match wins: a drop abandons (new work or "bring it
back" reopens; dropping only an added ask leaves finished work finished); questions only,
answered, is completed; a close (a push waiting on its run is none yet) completes, a
failing run or a reported regression after it reopens; the person accepting, a pass after
the last change, or a change made with nothing left open completes; else active.
Verified is true after a pass that follows the last change (a run of one part is none) or
the person's own "that did the trick"; false when a change never ran, the last run
failed, or the person will check later; null when there is nothing to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from summaries.core.heuristic import lexicon as lx
from summaries.core.heuristic.draft import Draft, Entry, Role
from summaries.core.heuristic.evidence import DISCARDED, Ev, is_tool_change, reply_evidence
from summaries.core.heuristic.lexicon import CODE_FILE, DOCS, rx

_BROKE = rx(
    r"\bbroke\b|\bbroken\b|\bdoesn'?t work\b|\bdidn'?t work\b|\bstill\b|\bfails?\b|\bwrong\b"
)

# A document by its name: prose for people, nothing to run ("Changed docs/runbook.md.").
_DOC_FILE = rx(
    r"\.(?:md|markdown|mdx|rst|txt|adoc|org)\.$|/(?:README|CHANGELOG|LICENSE|NOTICE|AUTHORS)\.$"
    r"| (?:README|CHANGELOG|LICENSE|NOTICE|AUTHORS)\.$"
)

# A red CI run: other jobs passing in the same reply do not make it green.
_CI_RED = rx(r"\b(?:is|are|was|were|went|turned|still|now) red\b|\bCI failed\b")


@dataclass(slots=True)
class Verdict:
    status: str = "active"
    verified: bool | None = None
    last_change: str | None = None
    last_pass: str | None = None
    last_fail: str | None = None
    last_run_green: bool | None = None  # the outcome of the latest run, whichever it was
    confirmed_by: Entry | None = None  # the person said it works
    deferred: Entry | None = None  # the person said they will check later
    decisions: list[Entry] = field(default_factory=list)  # "OK, decision: SSE with ..."
    last_close: str | None = None
    open_note: str | None = None
    handoffs: list[str] = field(default_factory=list)
    changed: bool = False
    code_changed: bool = False
    informational: bool = False
    corrections: list[Entry] = field(default_factory=list)
    drop: Entry | None = None
    # the turn whose tool rows threw the work away (restored, branch deleted, PR closed)
    # with nothing done for it since: dropped, in whatever words the person said it
    discarded_by: Entry | None = None
    # Where the deciding evidence stood, for the summary's ``evidence``: (person turn, the
    # reply text that said it), the reply None when the person's own row said it.
    pass_at: tuple[int, str | None] | None = None
    fail_at: tuple[int, str | None] | None = None
    close_at: tuple[int, str | None] | None = None


def is_doc_intent(draft: Draft) -> bool:
    """Nothing to run: text-only work (README, changelog, wording) or work without code,
    or edit tool rows that changed documents only (README.md, a runbook, a draft reply),
    whatever language the person wrote in."""
    edited = [r for e in draft.entries for r in e.replies if is_tool_change(r)]
    if edited and all(_DOC_FILE.search(r) for r in edited):
        return True
    texts = [e.text for e in draft.entries if e.role is Role.WORK]
    if any(DOCS.search(t) for t in texts) and not any(CODE_FILE.search(t) for t in texts):
        return True
    said = [*texts, *(r for e in draft.entries for r in e.replies)]
    return not any(lx.CODE_MARKERS.search(t) for t in said)


def _is_new_ask(entry: Entry) -> bool:
    sig = entry.sig
    asks = sig.work_order or sig.problem or sig.correction
    return asks and not (sig.ack or sig.close_request or sig.user_close)


@dataclass(slots=True)
class _Run:
    v: Verdict
    verified: bool | None = None
    closed: bool = False
    accepted: bool = False
    dropped: bool = False
    open: bool = False
    failed: bool = False  # verified is False because something failed, not because unchecked
    discarded: bool = False  # the tools threw the work away and nothing was done since
    # The state just before the latest ask, when the work was settled then: dropping that
    # ask ("could we also ...?" / "nah") retracts only the ask, not the finished work.
    before_ask: tuple[bool | None, bool, bool, bool] | None = None
    at: tuple[int, str | None] | None = None  # the row being read, for the Verdict's *_at

    def _settled(self) -> bool:
        return self.closed or self.accepted or (self.verified is True and not self.open)

    def user(self, entry: Entry) -> None:
        sig = entry.sig
        if entry.role is Role.DROP or (sig.retract and not sig.partial_retract):
            if self.before_ask is not None:
                self.verified, self.closed, self.accepted, self.open = self.before_ask
                self.before_ask = None
                return
            if entry.role is not Role.DROP:
                return  # retracting an ask that changed nothing settled leaves the work as it is
            self.dropped, self.closed = True, False
            self.v.drop = entry
            return
        if sig.resume or (self.dropped and sig.user_close):
            self.dropped = False  # "bring the guide back", "merged it after all": reopened
        if _is_new_ask(entry):
            snapshot = (self.verified, self.closed, self.accepted, self.open)
            # a correction ("revert that") undoes the work; only an added ask can be retracted
            additive = self._settled() and not sig.correction
            self.before_ask = snapshot if additive else None
            self.closed = self.accepted = self.dropped = False
        if sig.correction:
            self.v.corrections.append(entry)
            if _BROKE.search(entry.text):
                self.verified, self.failed = False, True
        # "it's live, BUT the test button still fetches it": once something was done, the
        # person reporting it broken is the latest word, whatever else the turn says
        broke = sig.regression and (self.v.changed or self.closed or self.verified is not None)
        if broke:
            self.verified, self.closed, self.accepted, self.failed = False, False, False, True
            self.v.last_fail, self.v.last_run_green = entry.text, False
            self.v.fail_at = (entry.turn, None)
        elif sig.user_close:
            self.closed, self.v.close_at = True, (entry.turn, None)
        if lx.DECISION.search(entry.text):
            self.v.decisions.append(entry)
        if broke:
            return
        if sig.deferred_check:
            # "deployed but haven't checked", "I'll look tomorrow": not verified, not failed
            self.verified, self.failed, self.v.deferred = False, False, entry
        elif sig.claims_works:
            self.verified, self.accepted, self.v.confirmed_by = True, True, entry
            self.failed = False
        elif sig.ack or (sig.accept and not (_is_new_ask(entry) or sig.close_request)):
            self.accepted = True  # "great. ship it tonight" accepts nothing until it ships

    def reply(
        self, text: str, doc_intent: bool, *, prose_changes: bool = True, runs_only: bool = False
    ) -> None:
        v = self.v
        if text == DISCARDED:
            self.discarded = True
            return
        red = False  # a red CI this reply reported, with no change since
        for ev in reply_evidence(text, doc_intent=doc_intent):
            if not prose_changes and ev.kind in (Ev.CHANGE, Ev.DOC_CHANGE):
                continue
            if runs_only and ev.kind not in (Ev.GREEN, Ev.RED):
                continue
            if ev.kind is Ev.GREEN and red:
                continue  # "CI is red on MSRV; stable and nightly pass": still red
            ci_red = ev.kind is Ev.RED and _CI_RED.search(ev.sentence) is not None
            red = (red or ci_red) and ev.kind is not Ev.CHANGE
            if ev.kind in (Ev.CHANGE, Ev.DOC_CHANGE, Ev.GREEN, Ev.CLOSE):
                self.discarded = False
            if ev.kind is Ev.CHANGE:
                v.changed = v.code_changed = True
                self.verified, self.open, v.last_change = None, False, ev.sentence
                self.failed = False
            elif ev.kind is Ev.DOC_CHANGE:
                v.changed, self.open, v.last_change = True, False, ev.sentence
            elif ev.kind is Ev.GREEN:
                self.verified, self.open, v.last_pass = True, False, ev.sentence
                v.last_run_green, self.failed, v.pass_at = True, False, self.at
            elif ev.kind is Ev.RED:
                # a failure after a close means the work is not over
                self.verified, self.closed, v.last_fail = False, False, ev.sentence
                v.last_run_green, self.failed, v.fail_at = False, True, self.at
            elif ev.kind is Ev.CLOSE:
                self.closed, v.last_close, v.close_at = True, ev.sentence, self.at
            elif ev.kind is Ev.OPEN:
                self.open, v.open_note = True, ev.sentence
            elif ev.kind is Ev.HANDOFF and ev.sentence not in v.handoffs:
                v.handoffs.append(ev.sentence)


def _asked_for_nothing(draft: Draft) -> bool:
    """No turn of the intent asked for a change, reported a problem or corrected one, and
    every turn was answered: a check or a question, however it was worded."""
    asks = [e for e in draft.entries if e.role is Role.WORK and not e.sig.ack]
    return bool(asks) and all(
        e.replies
        and not (e.sig.work_order or e.sig.problem or e.sig.correction or e.sig.close_request)
        for e in asks
    )


def judge(draft: Draft, *, moved_on: bool = False) -> Verdict:
    """The intent's status and verification from its turns and replies. ``moved_on``: the
    person opened other work after this intent's last turn (how a check or a question that
    was answered is taken, in any language, when nobody says "ok")."""
    v = Verdict()
    run = _Run(v)
    doc_intent = is_doc_intent(draft)
    for entry in draft.entries:
        for reply in entry.runs:  # a side turn's test runs: pass or fail, nothing else
            run.at = (entry.turn, reply)
            run.reply(reply, doc_intent, runs_only=True)
        if entry.role in (Role.WORK, Role.DROP):
            run.user(entry)
        # Where edit tool rows recorded the changes, they say what changed and in which
        # order with the runs; the reply's own account of them ("HPA template added, lint
        # passes") comes after the runs and must not undo what they showed.
        tools_changed = any(is_tool_change(r) for r in entry.replies)
        for reply in entry.replies:
            run.at = (entry.turn, reply)
            thrown = run.discarded
            run.reply(reply, doc_intent, prose_changes=not tools_changed or is_tool_change(reply))
            if run.discarded and not thrown:
                v.discarded_by = entry
    # a check or a question answered, then other work: the answer was taken
    answered = all(e.replies for e in draft.entries if e.role is Role.WORK)
    taken = moved_on and answered and not (v.changed or run.open or run.failed)
    if draft.late_accept or taken:
        run.accepted = True
    # questions only, the last one answered, nothing changed or closed
    asks = [e for e in draft.entries if e.role in (Role.WORK, Role.QUESTION) and not e.sig.ack]
    questions = bool(asks) and bool(asks[-1].replies) and all(e.sig.question for e in asks)
    v.informational = questions and not v.changed and v.last_close is None
    # nothing left open, nothing failed, and the assistant's last word was not a question
    last_reply = next((e.replies[-1] for e in reversed(draft.entries) if e.replies), "")
    settled = not (run.open or run.failed or last_reply.rstrip(" *_`)").endswith("?"))
    unrun = False if v.code_changed else None
    if not run.discarded:
        v.discarded_by = None
    if run.dropped or run.discarded:
        v.status, v.verified = "abandoned", None
    elif v.informational:
        # Explanations mention failures and fixes in the abstract; nothing was run.
        v.status, v.verified = "completed", None
    elif run.closed:
        # Merged or shipped without a run is unverified, unless there is nothing to run.
        text_only = doc_intent and not v.code_changed
        nothing_to_run = text_only and run.verified is None
        v.status, v.verified = "completed", None if nothing_to_run else run.verified is True
    elif run.accepted and not v.changed and (settled or _asked_for_nothing(draft)):
        # "morning. backup" answered with a report, then "ok": a check the person took,
        # whatever language it was asked in, or a result that changed nothing ("dedupe
        # it into a new file" -> counts -> "good"); verified only if a run passed for it
        v.status, v.verified = "completed", run.verified if run.verified is True else None
    elif run.accepted and (v.changed or run.verified is not None):
        v.status = "completed"
        v.verified = run.verified if run.verified is not None else unrun
    elif run.verified is True and not run.open:
        v.status, v.verified = "completed", True
    elif run.verified is False and not run.failed and v.changed and not run.open:
        v.status, v.verified = "completed", False  # made, and the person will check it later
    elif run.verified is False:
        v.status, v.verified = "active", False
    elif v.changed and not run.open:
        v.status, v.verified = "completed", unrun
    else:
        v.status, v.verified = "active", unrun
    return v
