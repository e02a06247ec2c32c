"""Evidence for status and verified: in assistant replies (changes, runs, closes, open
ends) and in tool rows (what ran, how it exited, what the runner itself reported).

A passing run verifies the work only after the last change; a close (commit, merge, PR,
push, deploy) ends the work whether or not anything ran. Tool rows say the same in any
language: each call/result pair becomes at most one short sentence in the words the reply
rules read ("Tests failed.", "Committed."), placed where the row was, so order is kept.
An unknown command failing (a ``grep`` with no match) adds nothing: it is no failed check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from summaries.core.heuristic.lexicon import CODE_FILE, NON_CODE_OBJECT, rx
from summaries.core.heuristic.words import sentences
from summaries.core.transcript_turn import ToolRow

_I = re.IGNORECASE


class Ev(Enum):
    CHANGE = "change"
    DOC_CHANGE = "doc_change"  # text-only edits (PR title, changelog): nothing to run
    GREEN = "green"  # a passing test, build or run
    RED = "red"  # a failing one
    CLOSE = "close"
    OPEN = "open"  # the reply itself says something is left: "haven't run", "tests next"
    HANDOFF = "handoff"  # a step only the person can do: "you'll need to archive the flag"


@dataclass(frozen=True, slots=True)
class Evidence:
    kind: Ev
    sentence: str


_CHANGE = rx(
    r"(?:^|[.;:!?\n]\s*|\band\s+|,\s*|\bthen\s+)"
    r"(?:i\s+(?:have\s+)?|i'?ve\s+|done[,:.]?\s+|ok[,:.]?\s+|right[,:.]?\s+|also\s+)?"
    r"(added|changed|updated|replaced|removed|fixed|implemented|set|bumped|converted|extracted"
    r"|switched|renamed|created|edited|wrote|rewrote|refactored|moved|wrapped|deleted|reverted"
    r"|re-applied|reapplied|applied|regenerated|generated|pointed|raised|lowered|increased"
    r"|reduced|enabled|disabled|configured|installed|dropped|made|patched|upgraded|downgraded"
    r"|migrated|introduced|adjusted|tweaked|corrected|modified|ported|restored|wired|swapped"
    r"|exported|uploaded|mounted|marked|registered|deprecated|renumbered|shortened"
    r"|restarted|rebooted|redeployed)\b"
    r"|\bnow (uses|reads|renders|stores|routes|carries|offers|writes|sends|points|imports"
    r"|calls|checks|validates|ignores|skips|handles|supports|accepts|rejects|excludes|includes"
    r"|filters|logs|waits|retries|falls back|defaults|requires|escapes|sorts|caches|batches)\b"
    r"|^\W*done\b\s*[,.:;!]"  # "Done, ..." reports the asked-for change as made
)
_NEG = r"(?<!n't )(?<!not )(?<!never )(?<!without )"


@dataclass(frozen=True, slots=True)
class _Rule:
    """A pattern run only when one of its cheap substrings occurs: most sentences carry no
    evidence, and scanning each with every alternation made long sessions slow."""

    needles: tuple[str, ...]
    rx: re.Pattern[str]

    def starts(self, sentence: str, low: str) -> list[int]:
        if not any(n in low for n in self.needles):
            return []
        return [m.start() for m in self.rx.finditer(sentence)]


def _rule(needles: str, pattern: str, flags: int = _I) -> _Rule:
    return _Rule(tuple(needles.split("|")), re.compile(pattern, flags))


_GREEN = (
    _rule("passed", r"\b[1-9][\d,]*\s+(?:tests?\s+)?passed\b"),
    _rule(
        "pass|green",
        r"\b(?:tests?|suite|checks?|build|ci|pipeline|everything|all|lint|linters?|typecheck|mypy"
        r"|e2e|smoke|jobs?|runs?|workflows?|checks)\s+(?:now\s+|is\s+|are\s+)?"
        r"(?:pass|passes|passed|passing|is green|are green|green)\b|\ball green\b"
        r"|\b(?:all|both|every)\s(?:[\w.#-]+\s){0,3}(?:passed|green|passing)\b",
    ),
    _rule("succe", r"\bbuild successful\b|" + _NEG + r"\bsucceed(?:s|ed)\b|\bsuccessful(?:ly)?\b"),
    _rule(
        " is | are | was | were ",
        r"\b(?:is|are|was|were) (?:clean|ok|okay|green|present|correct|there|up)\b",
    ),
    _rule("clean|\u2713|expected", r"\bclean\b|\u2713|\bas expected\b"),
    _rule(
        "deliver|arriv|reconnect|confirm|verif|tested",
        _NEG + r"\b(?:delivered|arrived|reconnected|confirmed|verified|tested)\b",
    ),
    _rule(
        "match|return|loads|upload|rollout|applied",
        r"\bmatch(?:es)? the\b|\bnow returns\b|\breturns (?:a )?200\b|\bloads with\b"
        r"|\b(?:counts?|numbers|totals|checksums?|hashes|sums)\b[^.;]{0,20}\bmatch(?:es|ed)?\b"
        r"|\bupload ok\b|\brollout complete\b|\bapplied ok\b",
    ),
    # a health probe or a request that answered with success: "reports Healthy", "201 Created"
    _rule(
        "health|200|201|202|204",
        r"\b(?:reports?|is|are|shows?|went|now|and)\s+healthy\b|\b20[0-4] (?:ok|created|accepted"
        r"|no content)\b",
    ),
    # a run reported with its timing has run to the end: "the build is 1m38s in CI"
    _rule(
        "build|run|ci|pipeline|suite|job",
        r"\b(?:build|run|ci|pipeline|suite|job)\b[^.;]{0,30}\b(?:is|took|ran in|finished in"
        r"|now) ~?\d+(?:[.,]\d+)?\s*(?:ms|secs?|seconds?|s|mins?|minutes?|m|h)(?:\d+s)?\b",
    ),
    _rule("pass|ok", r"\bPASS(?:ED)?\b|(?<=\w )OK\b", 0),
)
# A runner's tally with failures in it, either order: "2 failed, 49 passed" (pytest, jest),
# "49 passed, 1 error".
_FAILED_N = r"[1-9][\d,]*\s+(?:tests?\s+)?(?:failed|errors?)"
_PASSED_N = r"[\d,]+\s+(?:tests?\s+)?passed"
_COUNTED_FAIL = rx(rf"\b{_FAILED_N}\b[,;]?\s+{_PASSED_N}\b|\b{_PASSED_N}\b[,;]?\s+{_FAILED_N}\b")
_RED = (
    _rule(
        "fail|error",
        # "a lockout after 5 failures", "more than 3 errors" describe settings, not a run
        r"(?<!after )(?<!than )(?<!over )(?<!max )(?<!to )(?<!of )"
        r"\b[1-9][\d,]*\s+(?:tests?\s+)?(?:failed|failures?|errors?|failing)\b"
        r"|(?<!0 )(?<!no )\b(?:failed|fails|failing)\b|\bfailures (?:are )?(?:down to|at) [1-9]",
    ),
    _rule("still", r"\bstill (?:climbing|failing|fails|broken|growing|leaking|crashing|slow)\b"),
    _rule(
        "timed out|rolled back|return|exit|match|0 rows",
        r"\btimed out\b|\brolled back\b|\breturn(?:ed|s|ing)? (?:a )?5\d\d\b"
        r"|\bexit (?:code |status )?[1-9]\b|\breturned nothing\b|\bno \w+ match\b|\b0 rows\b",
    ),
    _rule("fail", r"\bFAIL(?:ED)?\b|\bBUILD FAILED\b", 0),
    # "CI is red on the MSRV job", "the build went red"
    _rule(
        "red",
        r"\b(?:ci|build|pipeline|checks?|tests?|suite|jobs?|main)\b[^.;?]{0,20}\b(?:is|are|was"
        r"|were|went|turned|still|now) (?:still )?red\b",
    ),
)
_CLOSE = _rule(
    "committed|merged|pushed|deployed|shipped|released|published|opened|tagged|rolled out|live"
    "|went out|landed|posted|sent|emailed|delivered|pr #|mr #",
    r"(?<!\bare )(?<!\bwere )(?<!\bbe )(?<!\bbeen )(?<!\bget )(?<!\bgot )(?<!n't )(?<!not )"
    r"(?<!never )\b(?:committed|merged|pushed|deployed|shipped|released|published)\b"
    r"(?!\s+(?:synchronously|automatically|asynchronously|after|before|when|per|every|by))"
    r"|\bopened (?:a |the )?(?:draft )?(?:pr|mr|cr|pull request|merge request)\b"
    r"|\bopened #\d+|\btagged v?\d"
    # "PR #1290 against develop", "PR #287 skapad": the request exists, in any language
    r"|\b(?:pr|mr) #\d+ (?:against|into|onto|opened|created|skapad|erstellt|créée?|creado"
    r"|criado|aperta|otwarty|vytvořen\w*|oluşturuldu|aangemaakt)\b"
    # "rolled out to all pods", "it's live", "went out with the 02:00 train"
    r"|(?<!n't )(?<!not )\b(?:rolled out|went (?:out|live)|landed on (?:main|master|prod\w*))\b"
    r"|\b(?:it'?s|is|are|now) live\b(?! ?\?)"
    # "Posted to #finance-ops", "sent it to the auditors": handed to whoever reads it
    r"|(?<!n't )(?<!not )(?<!never )(?<!be )\b(?:posted|sent|emailed|delivered)\b(?: it| them| the \w+)?"
    r" (?:to|in|into) (?:#|@|the |them|him|her)"
    r"|^\W*(?:posted|sent|emailed|delivered)\b(?! (?:by|from)\b)",
)
_OPEN = rx(
    r"\b(?:haven'?t|have not|didn'?t|did not|not yet|never|hasn'?t|couldn'?t|can'?t|cannot"
    r"|wasn'?t able to) (?:yet )?(?:run|ran|tested|test|checked|check|confirmed|confirm|verified"
    r"|verify|benchmarked|loaded|seen|looked|measured|tried)\b"
    r"|\buntested\b|\b(?:tests?|verification|benchmark) next\b|\bnext,? i'?ll\b"
    r"|\bi'?ll (?:watch|check|monitor|verify|run|test|look)\b|\bwill (?:watch|check|monitor"
    r"|verify)\b"
    r"|\bstill running\b|\bneeds? (?:updating|to be updated|fixing|a fix|work)\b|\btodo\b"
    r"|\bchecking whether\b|\binvestigating\b|\blooking into\b|\bnot (?:on|in) \w+ yet\b"
    r"|\bscheduled (?:it |the \w+ )?for\b|\bqueued for\b|\bwill (?:go out|run|deploy|ship)\b"
)
# A run under way has no outcome yet: "Pushed to #3302; CI is running".
_RUNNING = rx(
    r"\b(?:ci|tests?|suite|build|pipeline|checks?|jobs?)\b[^.;]{0,20}\b(?:is|are) (?:still )?"
    r"(?:running|pending|queued|in progress)\b"
)
_PUSH = rx(r"\bpushed\b")
# A run of one part ("I ran only its SELECT part") checks that part, not the change.
_PARTIAL_RUN = rx(
    r"\b(?:ran|run|tested|executed|checked|tried) (?:only|just) (?:its|the|a|one|that)\b"
    r"|\bonly (?:ran|tested|executed|checked|tried)\b"
)
_HANDOFF = rx(r"\byou'?ll (?:need|have) to\b|\byou need to\b|\byou'?ll want to\b")
_RUN_LEAD = rx(
    r"^\W*(?:i\s+)?(?:ran|re-?ran|retried|replayed|executed|running|run:|tried)\b"
    # "On a staging copy: no lock over 200ms" / "Applied on staging: 4ms" report a run
    r"|^\W*(?:(?:applied|tried|checked|tested)(?: it)? )?(?:on|against|in) (?:a |the )?"
    r"(?:staging|prod|production|test|local|dev)\b[^:]{0,20}:"
    r"|^\W*`[^`]+`\s*(?:->|\u2192|:)"
)
_SHIPPING = rx(r"\b(deploy|release|publish|push|merge)\w*|\./deploy")


def _sentence_events(sentence: str, doc_intent: bool) -> list[tuple[int, Ev]]:
    low = sentence.lower()
    changes = [m.start() for m in _CHANGE.finditer(sentence)]
    doc = changes and (
        NON_CODE_OBJECT.search(sentence) or (doc_intent and not CODE_FILE.search(sentence))
    )
    found = [(p, Ev.DOC_CHANGE if doc else Ev.CHANGE) for p in changes]
    found.extend((p, Ev.RED) for rule in _RED for p in rule.starts(sentence, low))
    # A run's tally with failures in it ("2 failed, 49 passed") is a red run, whatever
    # order it lists them in: its passed count is no green of its own.
    counted_red = bool(_COUNTED_FAIL.search(sentence))
    found.extend(
        (p, Ev.GREEN)
        for rule in _GREEN
        if not (counted_red and rule is _GREEN[0])
        for p in rule.starts(sentence, low)
    )
    # "Ran `x`: <output>" is a run that worked unless the sentence says otherwise; a
    # deploy command is the shipping itself, not a check of it.
    offset = 0
    for clause in re.split(r"(?<=;)\s+|(?<=,)\s+(?=then\b|and\b)", sentence):
        ran = _RUN_LEAD.search(clause) and not _SHIPPING.search(clause)
        if _PARTIAL_RUN.search(clause):
            found.append((offset, Ev.OPEN))
        elif ran and not any(rule.starts(clause, clause.lower()) for rule in _RED):
            found.append((offset, Ev.GREEN))
        offset += len(clause) + 1
    found.extend((p, Ev.CLOSE) for p in _CLOSE.starts(sentence, low))
    for kind, pattern in ((Ev.OPEN, _OPEN), (Ev.OPEN, _RUNNING), (Ev.HANDOFF, _HANDOFF)):
        found.extend((m.start(), kind) for m in pattern.finditer(sentence))
    found.sort(key=lambda item: item[0])
    return found


def reply_evidence(text: str, *, doc_intent: bool = False) -> tuple[Evidence, ...]:
    """Evidence found in one assistant reply, in reading order.

    Cached: segmentation and status both read every reply, and a resent question often
    gets the same reply text again; ``forget_replies`` empties the cache after a pass, so
    no transcript text outlives the call that read it. (One positional key: a keyword in
    the key would cache each reply twice.)
    """
    return _evidence(text, doc_intent)


@lru_cache(maxsize=4096)
def _evidence(text: str, doc_intent: bool) -> tuple[Evidence, ...]:
    out: list[Evidence] = []
    for sentence in sentences(text):
        for _, kind in _sentence_events(sentence, doc_intent):
            out.append(Evidence(kind, sentence))
    if any(_RUNNING.search(e.sentence) for e in out if e.kind is Ev.OPEN):
        # "Pushed to #3302; CI is running": a push waiting on its run is not a close yet (a
        # merge or a deploy is, whatever runs after it)
        out = [e for e in out if not (e.kind is Ev.CLOSE and _PUSH.search(e.sentence))]
    return tuple(out)


def forget_replies() -> None:
    _evidence.cache_clear()


# --- tool rows ----------------------------------------------------------------------

# A test runner by its command line.
_TEST_CMD = rx(
    r"\b(?:pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|playwright test"
    r"|go test|cargo (?:test|nextest)|mvn\b[^|;&]*\b(?:test|verify)"
    # Gradle tasks by name: test, check, testDebugUnitTest, connectedAndroidTest
    r"|gradlew?\b[^|;&]*\b(?:test|check|\w+Test)\w*|dotnet test|(?:npm|yarn|pnpm|bun)(?: run)? test\w*|make (?:test|check)\w*"
    r"|manage\.py test|unittest|(?:flutter|dart) test)\b"
)
_LINT_CMD = rx(
    r"\b(?:ruff|flake8|pylint|mypy|pyright|eslint|tsc|clippy|golangci-lint|go vet"
    r"|shellcheck|rubocop|stylelint|(?:npm|yarn|pnpm)(?: run)? (?:lint|typecheck)"
    r"|(?:flutter|dart) analyze)\b"
)
_BUILD_CMD = rx(
    r"\b(?:(?:npm|yarn|pnpm|bun)(?: run)? build|cargo build|go build|docker build"
    r"|python -m build|mvn\b[^|;&]*\bpackage|gradlew?\b[^|;&]*\b(?:build|assemble)"
    r"|make(?: build| all)?$|dotnet build|xcodebuild|flutter build)\b"
)
_COMMIT_CMD = rx(r"\bgit\b[^|;&]*\bcommit\b")
_PUSH_CMD = rx(r"\bgit\b[^|;&]*\bpush\b")
_PR_OPEN_CMD = rx(r"\b(?:gh pr create|glab mr create|hub pull-request)\b")
_PR_MERGE_CMD = rx(r"\b(?:gh pr merge|glab mr merge)\b")
_CI_CMD = rx(r"\b(?:gh (?:pr checks|run (?:watch|view))|glab ci (?:status|view))\b")
_DEPLOY_CMD = rx(
    r"\b(?:kubectl (?:apply|rollout (?:restart|undo)|set (?:image|resources))|helm (?:upgrade"
    r"|install)|fly(?:ctl)? deploy|terraform apply|vercel\b[^|;&]{0,400}--prod|ansible-playbook"
    r"|cap \w+ deploy|eb deploy|serverless deploy|sls deploy|gcloud \w+ deploy|az \w+ deploy"
    r"|(?:make|npm run|yarn|pnpm|just|task) deploy\w*)\b"
    # a program named deploy: "./deploy.sh prod", "bin/deploy staging"
    # (path segments are read once each: "\S*/" re-scanned the word from every "/")
    r"|(?:^|[;&|]\s*)(?:[^\s/;&|]*+/)*deploy(?:[\w-]*\.sh)?(?=\s|$)"
)
_PUBLISH_CMD = rx(
    r"\b(?:twine upload|npm publish|cargo publish|gem push|gh release create|poetry publish"
    r"|uv publish|docker push|flit publish)\b"
)
# A check by its name ("restore-check.sh", "verify_backup", "healthcheck", "smoke"), run
# rather than read: a program whose name says it checks reports pass or fail by exit code.
_CHECK_CMD = rx(r"(?<![\w./-])[\w./-]*(?:check(?!out)|verify|validate|smoke|health|probe)[\w.-]*")
# Operational checks that report health by exit code and output: a rollout that finished,
# an Argo app that is healthy, manifests or configs that validate, dbt's tests. What a
# person on call reads as "it works now".
_OPS_CHECK_CMD = rx(
    r"\b(?:kubectl\b[^|;&]*\brollout status|argocd app (?:wait|get)|kubeconform|helm lint"
    r"|promtool check|nginx -t|terraform validate|dbt (?:test|build)|systemctl is-active"
    r"|logrotate -d)\b"
)
# A count of none is not a failure: "1 chart(s) linted, 0 chart(s) failed", "0 errors".
_ZERO_COUNT = rx(r"\b0\s+(?:[\w()]+\s+)?(?:failed|failures?|errors?)\b")
_OPS_BAD = rx(
    r"\b(?:Degraded|OutOfSync|CrashLoopBackOff|ImagePullBackOff|Progressing|failed|inactive"
    r"|timed out|error(?!=0\b|s?: 0\b))\b"
)
# Dry runs that check the live state against the code: a plan with nothing to change.
# After a change, "it matches" is a verification.
_DRY_RUN = re.compile(r"--dry-run|--check\b|\bdiff\b|\bplan\b|DRY_RUN")
_PLAN_CMD = rx(r"\b(?:terraform|tofu|terragrunt) plan\b")
_NO_DRIFT = rx(r"\bNo changes\.|\bmatches the configuration\b")
_READ_CMD = rx(
    r"^\s*(?:grep|rg|cat|less|head|tail|sed|awk|ls|find|vim?|nano|code|git (?:log|show|diff|grep)"
    r"|journalctl|echo|wc|diff)\b"
)
_EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "str_replace", "apply_patch", "create"})
_EDIT_CALL = rx(r"^\s*(?:edit|write|create|apply_patch)\b\s*(\S*)")
# A file written from the shell: "cat > path <<'EOF'", "tee path <<EOF" (not "> /dev/null").
_SHELL_WRITE = rx(r"^\s*(?:cat\s+>|(?:sudo\s+)?tee(?:\s+-a)?)\s*([\w./-]+)\s*<<")

# A runner's own summary, failures first: "1 failed, 5 passed", "Tests: 2 failed",
# "test result: FAILED", "--- FAIL", "BUILD FAILURE", "Failures: 3".
_FAILED = re.compile(
    r"\b[1-9]\d*\s+(?:failed|failing|failures?|errors?)\b|\btest result: FAILED\b|^--- FAIL\b"
    r"|^FAIL\b|\bBUILD FAIL\w*|\bFailures: [1-9]|\bErrors: [1-9]|\bTests failed\b"
    # (a count is read from the start of its digit run, never from each digit)
    r"|\bFAILED\b|(?<!\d)0*+[1-9]\d* (?:problems?|errors?) \(",
    re.MULTILINE,
)
_PASSED = re.compile(
    r"\b[1-9]\d*\s+(?:passed|passing|tests? passed)\b|\btest result: ok\b|^ok\s+\S"
    r"|\b[1-9]\d* tests completed, 0 failed\b"
    r"|^PASS\b|\bBUILD SUCCESS\w*|\bTests run: [1-9]\d*, Failures: 0, Errors: 0"
    r"|\bAll checks passed\b|\bSuccess: no issues\b|\bFound 0 errors\b|\b0 errors\b",
    re.MULTILINE,
)
_CI_FAIL = re.compile(r"(?:^|\s)(?:X|✗|fail(?:ed|ure)?)\s", _I | re.MULTILINE)
_CI_PASS = rx(r"\bpass\b|✓")
_PR_NUM = re.compile(r"/(?:pull|merge_requests)/(\d+)\b|#(\d+)")
# Throwing the work away: its changes restored, its branch deleted, its PR closed. Only a
# command line that does nothing else: "git checkout -- base.yaml && cat > overlay.yaml"
# moves the work, and "git checkout -- v2.py && pytest" goes on with it.
_DISCARD_CMD = rx(
    r"\bgit (?:checkout|restore) (?:--\s|\.\s*(?:$|&&))|\bgit reset --hard\b|\bgit clean -\w*f"
    r"|\bgit branch -D\b|\bgit push \S+ --delete\b|\b(?:gh pr|glab mr) close\b|\bgit stash drop\b"
)
_AFTER_DISCARD = rx(
    r">|\btee\b|\bsed -i|\b(?:cp|mv|apply|install|add|commit|test|pytest|build|run|move)\b|superseded"
)
DISCARDED = "Discarded the changes."
_NOTHING = rx(r"\bnothing to commit\b|\beverything up-to-date\b|\brejected\b")

PASSED_CHECK, FAILED_CHECK = "The check passed.", "The check failed."
_TOOL_CHANGE = re.compile(r"Changed(?: \S+)?\.")


def is_tool_change(sentence: str) -> bool:
    """The sentence an edit tool row became ("Changed src/a.py.")."""
    return _TOOL_CHANGE.fullmatch(sentence) is not None


# What a notification posted by CI, a deploy tool or a job runner says of its run:
# "CI for PR #921: passed", "argocd sync: Synced / Healthy", "atlantis apply succeeded",
# "1 failed, 399 passed", "FAILED (job: lint)". Machine-written, so the same in any
# session language. A failure outranks a pass; a count of none is neither.
_NOTE_FAIL = rx(
    r"\b(?:fail(?:ed|ure|ing|s)?|errored|timed out|Degraded|CrashLoopBackOff|broken)\b"
    r"|\berror\b(?!\s+(?:rate|budget))"
)
_NOTE_PASS = rx(
    r"\b(?:pass(?:ed|es)?|success(?:ful)?|succeeded|Healthy|green|OK|ok)\b|PASS=[1-9]|✓"
)

# Where a notification's headline ends: its verdict is stated there ("... failed — job
# lint: ..."); what follows is detail, and a finding in a report ("the ACME order failed")
# is not the run's outcome.
_HEADLINE_END = re.compile(r" — | - |\. |; |\n")
HEADLINE_CHARS = 160


def notification_verdict(text: str) -> str | None:
    """An automation row's verdict on a run as an evidence sentence ("The check passed." /
    "The check failed."), or None when its headline reports no run outcome (an alert, an
    approval, a plan, a schedule, a subagent's findings)."""
    body = text.split("]", 1)[1] if text.startswith("[") and "]" in text else text
    head = _HEADLINE_END.split(body.strip(), maxsplit=1)[0][:HEADLINE_CHARS]
    said = _ZERO_COUNT.sub("", head)
    if _NOTE_FAIL.search(said):
        return FAILED_CHECK
    if _NOTE_PASS.search(said):
        return PASSED_CHECK
    return None


def _run_outcome(code: int | None, out: str) -> bool | None:
    """True passed, False failed, None unknown. The runner's own summary outranks the
    exit code (a wrapper may swallow it); an exit code alone still decides."""
    if _FAILED.search(out) or (code is not None and code != 0):
        return False
    return True if _PASSED.search(out) or code == 0 else None


def _pr_number(*texts: str) -> str:
    for text in texts:
        m = _PR_NUM.search(text)
        if m:
            return f" #{m.group(1) or m.group(2)}"
    return ""


def _discards(cmd: str) -> bool:
    """A command line that only throws work away (``git status`` after it is a look)."""
    if _DISCARD_CMD.search(cmd) is None:
        return False
    rest = _DISCARD_CMD.sub(" ", cmd.replace("--theirs", "").replace("--ours", ""))
    return "--theirs" not in cmd and "--ours" not in cmd and not _AFTER_DISCARD.search(rest)


_RM = re.compile(r"^\s*rm\s+(?:-\w+\s+)*([\w./-]+)\s*$")


def _runs_edited(cmd: str, edited: set[str]) -> bool:
    """The command runs a file changed earlier in the same stretch ("Edit retention.sh",
    then "/opt/hv/bin/retention.sh"): an observed run of the change."""
    if _READ_CMD.match(cmd) or _RM.match(cmd):
        return False
    return any(path in cmd for path in edited if "." in path)


def _pair_sentences(
    cmd: str, tool: str | None, code: int | None, out: str, edited: set[str]
) -> list[str]:
    """Sentences for one call and its result; a chained command can yield several."""
    ok = code is None or code == 0
    said: list[str] = []
    edit = _EDIT_CALL.match(cmd) or _SHELL_WRITE.match(cmd)
    if (tool or "").lower() in _EDIT_TOOLS or (edit and tool in (None, "edit", "bash")):
        target = edit.group(1) if edit else ""
        if target:
            edited.add(target.rsplit("/", 1)[-1])
        return [f"Changed {target}".rstrip() + "."] if ok else []
    if _TEST_CMD.search(cmd) or (not cmd and (_FAILED.search(out) or _PASSED.search(out))):
        passed = _run_outcome(code, out)
        if passed is not None:
            said.append("Tests passed." if passed else "Tests failed.")
    elif _LINT_CMD.search(cmd) or _BUILD_CMD.search(cmd):
        what = "Lint" if _LINT_CMD.search(cmd) else "Build"
        passed = _run_outcome(code, out)
        if passed is not None:
            said.append(f"{what} passed." if passed else f"{what} failed.")
    elif _PLAN_CMD.search(cmd):
        if ok and _NO_DRIFT.search(out):
            said.append(PASSED_CHECK)
    elif code is not None and _OPS_CHECK_CMD.search(cmd):
        said_out = _ZERO_COUNT.sub("", out)
        healthy = code == 0 and not _OPS_BAD.search(said_out) and not _FAILED.search(said_out)
        said.append(PASSED_CHECK if healthy else FAILED_CHECK)
    elif code is not None and not _READ_CMD.match(cmd) and _CHECK_CMD.search(cmd):
        said.append(PASSED_CHECK if _run_outcome(code, out) else FAILED_CHECK)
    elif (
        code == 0 and "DRY_RUN" not in cmd and "--dry-run" not in cmd and _runs_edited(cmd, edited)
    ):
        said.append("The run passed.")
    if _CI_CMD.search(cmd):
        if not ok or _CI_FAIL.search(out):
            said.append("CI failed.")
        elif _CI_PASS.search(out):
            said.append("CI checks passed.")
    if not ok:
        if (_DEPLOY_CMD.search(cmd) or _PUBLISH_CMD.search(cmd)) and not _DRY_RUN.search(cmd):
            said.append("The deploy failed.")
        return said
    if _discards(cmd):
        return [*said, DISCARDED]
    if _COMMIT_CMD.search(cmd) and not _NOTHING.search(out):
        said.append("Committed.")
    if _PUSH_CMD.search(cmd) and not _NOTHING.search(out):
        said.append("Pushed.")
    if _PR_OPEN_CMD.search(cmd):
        said.append(f"Opened PR{_pr_number(out, cmd)}.")
    if _PR_MERGE_CMD.search(cmd):
        said.append(f"Merged PR{_pr_number(cmd, out)}.")
    if _PUBLISH_CMD.search(cmd):
        said.append("Published.")
    elif _DEPLOY_CMD.search(cmd) and not _DRY_RUN.search(cmd):
        said.append("Deployed.")
    return said


def tool_sentences_at(
    rows: Sequence[ToolRow], edited: set[str] | None = None
) -> list[tuple[str, str | None]]:
    """Evidence sentences for a run of tool rows, in order, each with the stamp of the
    result row it came from, so a summary's evidence can link to the row that showed it.
    ``edited`` collects the file names changed so far in the session, so a later run of one
    of them is recognised."""
    out: list[tuple[str, str | None]] = []
    edited = set() if edited is None else edited
    call: ToolRow | None = None
    for row in rows:
        if row.kind == "call":
            call = row  # a call with no result may never have run: it says nothing
            continue
        cmd = " ".join(call.text.strip().splitlines()[:1])[:400] if call is not None else ""
        tool = row.tool or (call.tool if call is not None else None)
        said = _pair_sentences(cmd, tool, row.exit_code, row.text, edited)
        out.extend((s, row.ts) for s in said)
        call = None
    return out
