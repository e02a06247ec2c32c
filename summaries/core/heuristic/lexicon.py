"""Regex lexicons for the signals the summary prompt names, applied without a model.

Each pattern is deliberately narrow: a false boundary splits one goal into two
intents, and a false "verified" tells the person not to look. Patterns run on
lowercase text unless noted.
"""

from __future__ import annotations

import re

from summaries.core.heuristic.words import wordset

_I = re.IGNORECASE


def rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _I)


# --- person: how a turn relates to the work -------------------------------------------

# A feasibility question or an explicit "not yet" is not a work order (prompt trap 6).
FEASIBILITY = rx(
    r"how (hard|difficult|much work|long|big|risky) (would|will|is) it (be|take)"
    r"|what would it take|would it be (possible|feasible|hard|difficult|a lot)"
    r"|is it (possible|feasible|realistic) to|how much effort"
    # whether it pays off at all: "would partitioning it by day actually be worth it?"
    r"|\bwould\b[^.?!]{0,60}\bbe worth (it|doing|the (effort|trouble|cost))\b"
    r"|\bis (it|that|this) (even |really |actually )?worth (it|doing|the (effort|trouble|cost))\b"
)
NO_CHANGE_YET = rx(
    r"(don'?t|do not) (change|build|touch|implement|start|do|write|modify) (anything|it|that|this)?"
    r"|(just|only) (asking|curious|wondering)|not now\b|no changes( yet)?\b"
    r"|thinking out loud|hypothetically|out of curiosity|idle thought|just an idea"
    # the same ask in the other languages people write to us in
    r"|\bno (cambies|toques|hagas) nada\b|\bpor curiosidad\b|\bpar curiosit[ée]\b"
    r"|\bne (change|touche|modifie) rien\b|\bnichts (ändern|anfassen)\b|\baus neugier\b"
    r"|\bn[ãa]o (mude|mexa|altere) (em )?nada\b|\bpor curiosidade\b"
)
# The step that closes a piece of work: holding it pauses the work, it does not drop it.
_CLOSE_STEP = (
    r"(merge|deploy|deployment|release|rollout|push|launch|mr|pr|pull request|merge request"
    r"|publish|upgrade)"
)
# "Drop the bulk export line" edits a text; these phrases drop the work itself.
DROP = rx(
    r"\bnever ?mind\b|\bforget (about )?(it|that|this|the\b[^.?!]{0,60})"
    # "forget catboost, we stay with lightgbm": the named thing, then the clause ends
    r"|\bforget (about )?[a-z][\w.-]*(?=\s*[,;!]|\s*\.(\s|$)|\s+(entirely|completely|for now))"
    r"|\blet'?s not\b(?=\s*(?:[.!,;]|$|do|bother|go|worry))"
    # "drop it from the list" edits a text; "scrap it from this repo" gives the work up
    r"|\b(scrap|ditch|bin|kill|shelve|park|abandon|cancel) (it|that|this|the idea"
    r"|the whole thing)\b(?!\s+(line|column|field|row|step|flag))"
    r"|\b(drop|skip) (it|that|this|the idea|the whole thing)\b"
    r"(?!\s+(line|from|in|into|column|field|row|step|flag))"
    r"|\b(park|shelve|pause) (the|this|that|our) [\w -]{1,40}\b(for now|until|till|for later)\b"
    r"|\bdon'?t bother\b|\bnot worth (it|the)\b|\b(not|no longer) needed\b|\bdon'?t need (it"
    r"|that|this)\b"
    r"|\bleave it (there|for now|be)\b|\bleave it\W*$|\bgive up on\b"
    r"|\bhold off\b(?! on (\w+ing|(the |that |this )?(\w+ )?" + _CLOSE_STEP + r")\b)"
    r"|\bno need\b(?! to)|\bleave it as (is|it is)\b|\bput (it|that|this) on (hold|ice)\b"
    r"|\b(let'?s|we'?ll) (stop|stop here|call it)\b(?! (a day|done))|\bnot (doing|pursuing"
    r"|touching|tackling) (it|this|that)\b"
    r"|\b(table|shelve|bench) (it|this|that)\b|\bput a pin in (it|this|that)\b|\bback ?burner\b"
    r"|\b(come back to|revisit|return to) (it|this|that)\b(?=[^.?!]{0,30}\b(later|next|another|some"
    r"|once|after))"
    # "scrap the widget for now": the whole thing by name (a column or row is DROP_PART's)
    r"|\b(scrap|ditch|abandon) the [\w-]+\b(?! (line|column|field|row|step|flag|table)\b)"
)
# The object of a drop, when it is a piece of the work rather than all of it: "forget the
# rollback idea" declines only what the assistant offered.
DROP_PART = rx(
    r"\b(hold off|forget|scrap|skip|drop|park|shelve|leave) (on |about )?(the|that"
    r"|this) (?P<obj>(?!idea\b"
    r"|whole\b|rest\b|lot\b|thing\b|work\b|task\b|feature\b|plan\b)\w+( \w+){0,2})"
)
# "eslint-plugin-react one: skip it", "skip the flaky ones": one member of a set of items
# the work goes through; the rest of the set, and the work, go on.
DROP_ITEM = rx(
    # an item is at most 80 characters: a sentence end inside a long dotted run ("x.x.x")
    # would otherwise re-scan the run from each of its dots
    r"(^|[.;!?]\s*)\W*(the |that |this )?[\w.@/-]{1,80}( [\w.@/-]+){0,2} ones?\s*[:,-]\s*(just )?"
    r"(skip|drop|leave|ignore|forget|park|scrap|exclude|bin)\b"
    r"|\b(skip|drop|leave|ignore|exclude|forget) (the|that|those) [\w.@/-]+( [\w.@/-]+){0,2}"
    r" ones?\b"
)
# Holding a close step ("hold off on merging that", "don't deploy yet") pauses the work.
PAUSE_STEP = rx(
    r"\bhold off on (\w+ing|(the |that |this )?(\w+ )?" + _CLOSE_STEP + r")\b"
    # "hold off till Jan is back", "until she has reviewed it": waiting on someone, not a drop
    r"|\bhold off\b[^.?!]{0,50}\b(till|until) \w+ (is back|gets back|returns|reviews?"
    r"|has (looked|reviewed|signed off)|signs? off|approves?|looks)\b"
    r"|\b(don'?t|do not) (merge|deploy|ship|release|push) (it |that |this )?(yet|until|before)\b"
)
NEGATED_FORGET = rx(r"(don'?t|do not|never) forget")
# Retracting part of a request keeps the intent; the retracted part just disappears.
RETRACT = rx(
    r"\bscratch (that|the\b[^.?!]{0,40})|\bignore (what i said|my last|that)\b|\bdisregard\b"
    r"|\bstrike that\b|\bforget (the|that)\b[^.?!]{0,40}\b(part|bit|step)\b"
)
PARTIAL = rx(r"\b(part|bit|step|piece)\b|\bjust the\b|\bonly the\b")
# A correction stays inside its intent and is never summarized away (boundary signal 3).
CORRECTION = rx(
    r"^\s*(no|nope|nah|wrong|wait)\b[\s,.!:;-]"
    r"|\bthat'?s (wrong|not (right|it|what))|\bthat is (wrong|not right)"
    r"|\b(revert|undo|roll back) (that|it|this)\b|\bthat broke\b|\bbroke (the|it|my)\b"
    r"|\b(it'?s|is called|named|should be) `?[\w./:@-]+`?,? not `?[\w./:@-]+"
    r"|\bnot `?[\w./:@-]+`?,? (it'?s|but|use)\b|\byou forgot\b|\bmistyped\b|\bmisspelled\b"
    r"|\b(still|now) (fails|failing|broken|crashes|crashing|errors|white|wrong|slow)\b"
    r"|\bdoesn'?t work\b|\bdidn'?t work\b|\bdon'?t (use|put|do|add|ignore|touch|call)\b"
    r"|^\s*actually\b|\bgot renamed\b|\bwas renamed\b|\bwe moved\b|^\W*correction\b"
    r"|\bstill (happening|there|the same|occurring|reproduces|broken|wrong)\b"
)
STRONG_PIVOT = rx(
    r"\bswitching (to|gears)\b|\bswitch gears\b|\blet'?s switch to\b"
    r"|(^|[.!?:;]\s*|\b(ok(ay)?|also|and|btw|oh|now)[,.]?\s+)(separately|unrelated(ly)?)\b"
    r"|\bunrelated (question|note|thing|topic|issue|but)\b|\bdifferent (topic|thing|question"
    r"|issue)\b"
    r"|\bon (a|an) (different|other|unrelated|separate) note\b"
    r"|\b(another|separate|other|new|different) (\w+ )?(thing|topic|issue|task|question"
    r"|item)\b[:,.!-]"
    r"|\banother (thing|topic|issue|task)\b|\bnew (task|topic)\b|\bchange of (topic|subject)\b"
    r"|\bsomething else\b|\bmoving on\b"
    r"|^\W*(second|third|next|other|last) (thing|issue|item|topic|question)\b"
    r"|\bjump to\b|\bchanging (topic|subject)\b|\brandom (q|qs|question|thought)\b"
)
# A pivot phrase only moves the work when it leads the turn or one of its sentences:
# "we'll do a proper hotfix separately" at the end of a revert is not a new topic.
PIVOT_LEAD_CHARS = 60
WEAK_PIVOT = rx(
    r"^\W*(ok(ay)?[,.]?\s+|good[,.]?\s+|great[,.]?\s+|nice[,.]?\s+|right[,.]?\s+)?(now|next)\b"
    r"|\bnow let'?s\b|\blast thing\b|\bone more thing\b|\bbefore i forget\b"
)
RESUME = rx(
    r"\bback to\b|\bget back to\b|\bgoing back to\b|\breturn(ing)? to\b|\bresume\b"
    r"|\bpick (it|that|this|the\b[^.?!]{0,40}) (back )?up\b|\bwhere were we\b|\bwhere we left off\b"
    r"|^\W*(continuing|resuming) (with|on)\b|^\W*re:?\s+(the|our|that)\b"
    r"|\bbring (it|that|this|them|the\b[^.?!]{0,40}) back\b|\bbring back\b|\brevive\b"
    r"|\breinstate\b|\bun-?(scrap|park|shelve)\b"
)
REFERS_BACK = rx(
    r"\bwe (talked|spoke) about\b|\byou (estimated|described|suggested|mentioned|proposed)\b"
    r"|\bas (we )?discussed\b|\bfrom (before|earlier)\b|\bthen\s*[.!]?\s*$|\bafter all\b"
    r"|\bthough\s*[.!]?\s*$|^\W*but\b"
    # "after the flag merge", "since your cache change": a past step of some work
    r"|\b(after|since|with) (the|this|that|your|our) ([\w-]+ ){0,2}(change|fix|deploy|update"
    r"|patch|upgrade|release|merge|rollout|migration|refactor|removal)\b"
    r"|\b(what|the thing|the stuff) you (found|said|proposed|suggested)\b"
    # "for the ones branch protection blocks", "the red ones": items of a set already in play
    r"|\b(the|those|these) ([\w-]+ )?ones\b"
)
CONTINUE = rx(
    r"^\W*((ok(ay)?|yes|yep|yeah|good|great|nice|fine|right|sure|perfect|cool|alright)\b[\s,.!]*)*"
    r"(do it|go ahead|do that|carry on|continue|keep going|proceed|implement it|try (it )?again"
    r"|again|run it|build it|ship it|merge\b|commit\b|push\b|deploy (it|that)|redeploy"
    r"|open a (pr|mr|cr)"
    r"|make it|that\b|this\b|it\b|those\b|these\b|them\b|also\b|and\b|then\b|plus\b"
    r"|while (you'?re|we'?re) (in|on|at)|with tests|add (a |some )?(regression )?tests?\b"
    r"|run (the )?tests|finish\b|same\b)"
)
# "while we're in checkout: is the coupon field debounced?": the lead only names the area the
# work was in; whether the turn continues that work is up to the rest of it.
ASIDE_LEAD = rx(
    r"^\W*((ok(ay)?|nice|good|great|cool|thanks|thx|also|and|oh|btw|so)\b[\s,.!]*)*"
    r"while (you'?re|we'?re|i'?m|you are|we are) (in|on|at|around|here|there)\b[^:,.;!?]*"
    r"[:,.;!-]\s*"
)
# An ask added next to finished work ("can we also rate-limit password reset? same setup"):
# a second deliverable, not a reopening of the first.
ADDITIVE = rx(
    r"\b(also|too|as well)\b|\bsame (setup|thing|approach|treatment|way|pattern|idea|recipe)\b"
)
ANAPHORA = rx(r"\b(it|that|this|those|them|these)\b")
CLOSE_REQUEST = rx(
    r"^\W*((ok(ay)?|k|kk|yes|yep|sure|good|great|nice|perfect|cool|fine|lgtm)\b[\s,.!]*)*"
    r"(commit|merge|push|ship|deploy|redeploy|release|publish|open a (pr|mr|cr|pull request)"
    r"|roll (it |this |that )?(out|to))\b"
)
# --- person: status evidence in their own words, by meaning ------------------------------

# Unverified completion: the person reports a close (merge, ship, deploy, "it's live").
USER_CLOSE = rx(
    r"^\W*((ok(ay)?|cool|good|great|nice|done)\b[\s,.!]*)*(i('ve| have)? )?(just )?"
    r"(merged|shipped|deployed|pushed|released|published|rolled (it )?out)\b"
    r"|\b(i|we)('ve| have)? (just )?(merged|shipped|deployed|pushed|released|published"
    r"|rolled out)\b"
    r"|\b(it'?s|that'?s|is|now|they'?re|are) (live|out|deployed|merged|shipped|released"
    r"|in prod(uction)?)\b"
    r"(?! of\b| for (review|comment|feedback|approval)\b)(?!\s*\?)|\bwent (out|live)\b"
    # handed to the person who takes it from here: "sent it to Marta", "handed it over to ops"
    r"|^\W*((ok(ay)?|done|fine)\b[\s,.!]*)*(i('ve| have)? )?(just )?(sent|handed|passed|forwarded"
    r"|gave) (it|that|this|them|the [\w-]+)( over| on)? to (?!(staging|prod\w*|ci|main|master"
    r"|review|the (branch|pr|repo|queue|channel))\b)\w+"
)
# The person saying it was not checked ("deployed to staging but haven't checked").
USER_UNVERIFIED = rx(
    r"\b(haven'?t|have not|didn'?t|did not|not yet) (yet )?(checked|tested|verified|confirmed"
    r"|run|ran|clicked through|smoke[- ]tested|eyeballed|looked|tried (it|them|this|that))\b"
    # "never tested it"; but "never run `alembic upgrade` on staging" is a standing rule
    r"|\bnever (checked|tested|verified|confirmed|ran|clicked through|eyeballed|looked at it)\b"
    r"|\b(haven'?t|didn'?t) (had|have|get|got) (a chance|time|around) to (test|check|try|look"
    r"|verify)"
    r"|\bwithout (checking|testing|running|verifying|looking)\b|\bno idea (if|whether) it works\b"
    r"|\buntested\b|\bnot (checked|tested|verified) (it )?yet\b|\bkeep an eye on\b"
)
# Verified positive: tests or CI green in the person's words, or the person confirming it
# ("that did the trick", "CI is happy", "green across the board", "I eyeballed it").
USER_VERIFIED = rx(
    r"\b(did|does) the trick\b|\b(works|working) (now|fine|great|perfectly|again|for me"
    r"|like a charm)\b"
    r"|\b(ran|runs|went|worked|came out|looks) (fine|ok|okay|well|smoothly|clean|cleanly|great)\b"
    r"|(?<!not )(?<!n't )\b(it'?s|that'?s|is) (working|fixed)\b|\b(that|this|it) fixed it\b"
    r"|^\W*(yep|yup|yes|confirmed)[,.! ]+fixed\b"
    r"|\b(ci|tests?|checks?|builds?|pipeline|suite|everything)\b[^.?!,]{0,24}\b(is|are|went|all|now"
    r"|came back|look|looks)\s+(green|happy|passing)\b|\bgreen across the board\b|\ball green\b"
    r"|\b(ci|tests?|checks?|build|pipeline|suite)('s| is| are)? (pass|passe[sd]|passing|green"
    r"|happy)\b"
    r"|\bi (eyeballed|verified|confirmed|smoke[- ]tested)\b"
    r"|(^\W*|[,.;:!]\s*|\bi )(just )?(eyeballed|checked|tested|tried|verified|ran|re-?ran"
    r"|clicked through"
    r"|smoke[- ]tested) (it|them|this|that|on|in)\b"
    r"|\blooks (right|correct|good|fine) (now )?(in|on|from)\b|\bapproved (it|them|the \w+) in\b"
    r"|\bno (more )?(\w+ )?(errors|crashes|complaints|failures)\b"
)
ACK = rx(
    r"\b(thanks|thank you|thx|ty|great|nice|cool|perfect|awesome|good|lgtm|looks good|k|kk"
    r"|sounds good|got it|makes sense|ok|okay|excellent|brilliant|\U0001f44d|sweet|that'?s all)\b"
    r"|\U0001f44d"
)
ACCEPT = rx(
    r"\b(perfect|lgtm|looks (good|great|right|fine|correct)|great|nice|excellent|awesome|thanks"
    r"|thank you"
    r"|works( now)?|that works|good)\b|\U0001f44d"
)
CLAIMS_WORKS = rx(
    r"(?<!n't )(?<!not )\b(it works|works now|working now|that works|confirmed it|i checked,? it"
    r"|looks (right|correct) in|that'?s back|it'?s back|works for me|works on my \w+)\b"
    r"|^\W*(confirmed|verified)\b(?![^.]*\b(not|doesn'?t|still|fails?)\b)"
    # "klappt bei mir auch", "ça marche", "funciona": it works, in other languages
    r"|(?<!nicht )(?<!pas )(?<!no )(?<!não )\b(klappt|funktioniert( jetzt)?|ça marche|ca marche"
    r"|fonctionne|funciona)\b(?! ?(nicht|pas|no)\b)"
)
POLITE_REQUEST = rx(r"\b(can|could|would|will) (you|we)\b|\bplease\b|\bi'?d like\b")
INFO_REQUEST = rx(
    r"\bhelp me (think|understand|decide|figure out|compare)|\bexplain\b|\bwalk me through\b"
    r"|\bremind me\b|\btell me (about|how|why|what)\b"
)
QUESTION_START = rx(
    r"^\W*(and |so |but |ok[,.]? )?(how|what|why|where|when|which|who|does|do|is|are|can|should"
    r"|did|has|have|will|would|could|any)\b"
)
PROBLEM = rx(
    r"\b(fails?|failing|failed|crash(es|ed|ing)?|broken|error|exception|doesn'?t|don'?t get|isn'?t"
    r"|can'?t find|cannot find|(is|are|went|turned) red|chokes?|choking"
    r"|not working|keeps|returns? (a )?\d{3}|is missing|missing|wrong|slow|takes \d+|flooded"
    r"|leak|grows|stuck|hangs|timeout|times out|twice|duplicate|open to anyone|expires|flaky)\b"
)
# The person reporting that shipped or finished work is still, or again, broken.
REGRESSION = rx(
    r"\bstill (?!(works?|working|passe?s?|passing|green|fine|good|ok(ay)?|up|there for|need|want"
    r"|have to|has to|on\b|in\b|at\b|the\b|a\b|an\b|open|running|waiting|pending|in progress"
    r"|deploying|building|think|prefer|like|wonder|believe|feel|plan|recommend|use[sd]?|using"
    r"|valid|true|holds?|applies|stands|correct|relevant|going)\b)[\w']+"
    r"|\b(dupes?|duplicates?|errors?|crash(es|ing)?|fail(s|ing|ures?)?|red|broken|flaky|timeouts?"
    r"|spikes?|alerts?|\d+ \w+) again\b|\b(broke|regressed)\b"
    r"|\b(errors?|bugs?|crash(es)?|issues?|problems?|leaks?|warnings?|failures?) (is|are"
    r"|came) back\b"
    r"|\bnot (fixed|working)\b|\b(didn'?t|did not|doesn'?t) (fix|help|change anything)\b"
    r"|\b(is|are|went|turned) red\b"
    # "works on my machine but not on staging", "passes locally, but CI fails"
    r"|\bbut\b[^.;]{0,40}(\bnot (on|in|for|with|working|fixed|there)\b"
    r"|n't (work|load|show|pass|build|run|fix|start)\w*|\bfail\w*|\bbroken\b|\berrors?\b)"
)
# Imperative verbs that open a work order when they lead a clause.
WORK_VERBS = wordset(
    """
    add fix make run check find look investigate trace debug write create remove delete
    rename update change set bump upgrade downgrade migrate deploy redeploy push merge
    commit ship open build test implement refactor split move replace switch use try retry
    rotate renew pull point backfill apply revert undo continue carry finish keep do go
    start stop enable disable configure install generate export import clean document cut
    tag release publish review show figure dig profile measure benchmark optimize speed
    reduce increase raise lower put send post schedule block allow restrict limit handle
    support convert extract wrap archive file draft summarize list compare read verify
    confirm validate audit monitor watch clear reset restart reload kill prune patch sort
    format lint port resolve bisect store drop strip get pick
    """
)
# Verbs that start a piece of work rather than refine the one in hand ("keep the
# names", "use the logger"): only these may open an intent without any other cue.
NEW_WORK_VERBS = wordset(
    """
    add fix investigate trace debug write create remove delete rename upgrade migrate
    implement refactor split build rotate renew backfill generate export import document
    profile optimize speed audit set bump install configure enable disable schedule block
    restrict find look
    """
)
# After a close, talk about its review, CI or PR is still about the same work.
FOLLOWUP = rx(
    r"\b(review(er|ers)?|the (pr|mr|cr|pull request|build|pipeline|checks?)|ci\b|rebase|conflicts?)"
)
CLAUSE_LEAD = rx(
    r"^\W*((ok(ay)?|so|and|also|then|please|now|next|first|ah|hey|right|fine|good|great|nice|cool"
    r"|perfect|instead|just|alright)\b[\s,.:!-]*)*(can you|could you|would you|will you|let'?s|"
    r"i want you to|i need you to|we need to|you need to|go ahead and)?\s*"
)
OPTION_PICK = rx(
    r"^\W*(let'?s (do|go with|use|take) |go with |use |pick |option |take )?"
    r"(\d|[a-d]\b|the (first|second|third|fourth|last) (one|option))"
    r"(\s*(,|and|&|\+)\s*(\d|[a-d]\b))*(?=\W|$)"
)
OPTION_LINE = re.compile(r"^\s*(?:(\d)[.)]|[-*\u2022]|option (\d)[:.)]?)\s+(\S.*)$", re.I | re.M)

# A turn that only records a fact ("before I forget: staging needs the VPN") is not a goal.
FACT_LEAD = rx(
    r"^\W*(before i forget|fyi|heads[- ]up|note|for the record|just so you know"
    r"|for future reference"
    r"|remember that|keep in mind)\b"
)
# The person saying they will check it themselves later: the result is not verified yet.
DEFERRED_CHECK = rx(
    r"\b(i'?ll|i will|will|i'?m going to|gonna|we'?ll|let me)\b[^.?!]{0,30}?\b(check|verify"
    r"|test|look"
    r"|click through|try|review|confirm|send( myself)?|eyeball|poke|see|smoke[- ]test|spin)\w*\b"
    r"[^.?!]{0,40}\b(later|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|next week"
    r"|after|when|in the morning|this afternoon|this evening|once)\b"
    r"|\b(check|look at|test|verify) (it|that|this|them) (later|tomorrow|tonight)\b"
)

# The person settling a question in their own words: the runbook keeps it.
DECISION = rx(
    r"\bdecision:|\bdecided\b|\bwe'?ll go with\b|\blet'?s go with\b|\bgoing with\b"
    r"|\bwe'?ll use\b"
)

# --- compaction is never a boundary (prompt trap 8) -----------------------------------

COMPACTION = rx(
    r"context (was |got |has been )?(compacted|reset|summari[sz]ed)|\bcompacted\b"
    r"|conversation (was )?(compacted|summari[sz]ed)|summari[sz]ed to save space|^\s*/compact\b"
    r"|restored context"
)
DOCS = rx(
    r"\b(readme|changelog|docs?|documentation|typo|wording|badge|copy|comment|docstring"
    r"|release notes|design doc|license|copyright|blog( post)?|announcement|newsletter"
    r"|press release|tone|guide|tutorial|runbook|faq|how-?to|wiki|handbook|playbook)\b"
)
# Anything that can be run or tested. Work without any of it (an analysis, a chart, a
# document) has nothing to verify, so finishing it does not leave it "unverified".
CODE_MARKERS = rx(
    r"\.(py|ts|tsx|js|jsx|go|rs|java|kt|rb|php|sql|sh|gradle|css|scss|html|c|cc|cpp|ya?ml|toml|ini"
    r"|json|cfg|conf|tf)\b|\b(function|method|class|module|tests?|endpoint|api|migrations?|schema"
    r"|query|config|deploy\w*|builds?|ci|workflow|hook|script|handler|component|template|view|model"
    r"|server|worker|service|cron|docker\w*|package|dependenc\w+|library|regex|bug|crash\w*|error"
    r"|exception|code|branch|commit|merge|pr|release|database|db|index|cache|cookie|session|queue"
    r"|pipeline|job|task|import\w*|flag|setting|env|webhooks?|retr(?:y|ies)|backoff|timeouts?"
    r"|parser|logger|validation|helm|terraform|nginx|ingress|kafka|redis|postgres\w*|mysql|sql"
    r"|docker|k8s|kubernetes|pods?|containers?|lambda|dag|etl|sdk|cli|frontend|backend|css"
    r"|apk|binary|rate[- ]?limit\w*|middleware|decorator|decorators|tests?uite"
    # a platform is code when an app of it is meant, not when it is a column of the data
    r"|(ios|android) (app|build|crash|release|version|device|client|sdk|simulator|emulator)\w*"
    r"|testflight|xcode|simulators?|emulators?|play store|app store)\b"
    # (the first "(/.=" splits the span, so an unclosed backtick is read once, not once per
    # split point)
    r"|`[^`(/.=]*+[(/.=][^`]*+`"
)
CODE_FILE = rx(r"\.(py|ts|tsx|js|jsx|go|rs|java|kt|rb|php|sql|sh|gradle|css|scss|html|c|cc|cpp)\b")
NON_CODE_OBJECT = rx(
    r"^\W*(renamed|updated|changed|edited|retitled) the (pr|mr|cr|title|description|commit message"
    r"|branch name|ticket)\b"
)
