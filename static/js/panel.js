// The session page's summary panel: intents, open items, project notes, the Summarize
// button. Texts arrive rendered by the server (Markdown, sanitized: markdown.py) in the
// body's ``rendered`` map; anything else is shown as plain text.
import { api, el, parsed, plural, timeEl } from "./util.js";

// present.py's STATE_LABELS, from the page state (one table for server and browser).
let STATES = {};
const TOO_FEW = "Send a couple of messages first — there is not enough here to summarize.";
const GENERATING = "A summary is being written; it appears here when it is done.";
const REFUSALS = {
  summary_in_flight: "A summary is already being written.",
  summary_turn_running: "Cannot summarize while a turn is running. Wait for this turn to finish.",
  summary_unavailable: "Could not summarize this session. Try again in a moment.",
  summary_disabled: "Session summaries are off, so nothing was summarized.",
  summary_too_few_turns: TOO_FEW,
};
// The model's failures: the server words what failed (and whether waiting helps).
const SERVER_WORDED = new Set(["summary_model_failed", "summary_bad_reply", "summary_backing_off", "summary_busy"]);
const sentence = (s) => s.charAt(0).toUpperCase() + s.slice(1) + ".";
const TRIAGE_VISIBLE = 3;

// The server gives every intent the state its badge shows (present.py panel_intents).
const stateOf = (intent) => intent.state;

function validRanges(ranges) {
  return (Array.isArray(ranges) ? ranges : [])
    .filter((r) => Array.isArray(r) && Number.isInteger(r[0]) && Number.isInteger(r[r.length - 1]))
    .map((r) => [r[0], r[r.length - 1]]);
}

function turnLink(turn, text) {
  return el("a", { href: `#turn-${turn}` }, text ?? String(turn));
}

function rangeLine(ranges) {
  if (!ranges.length) return null;
  const single = ranges.length === 1 && ranges[0][0] === ranges[0][1];
  const line = el("p", { class: "ranges" }, single ? "turn " : "turns ");
  ranges.forEach(([start, end], i) => {
    if (i) line.append(", ");
    line.append(turnLink(start, start === end ? String(start) : `${start}–${end}`));
  });
  if (ranges.length > 1) line.append(el("span", { class: "resumed" }, `Resumed ×${ranges.length - 1}`));
  return line;
}

// A panel text as the server rendered it (Markdown, sanitized), else as plain text.
let RENDERED = {};
const md = (text) => {
  const value = String(text);
  return Object.hasOwn(RENDERED, value) ? parsed(RENDERED[value]) : [value];
};

function textList(tag, items) {
  const kept = (Array.isArray(items) ? items : []).filter((x) => typeof x === "string" && x.trim());
  return kept.length ? el(tag, {}, kept.map((x) => el("li", {}, md(x)))) : null;
}

// Why a badge says what it says: the one row that decided it. The labels are present.py's
// EVIDENCE_LABELS, from the page state. No evidence is said out loud, never left to look
// like a verified fact.
let EVIDENCE = {};
let NO_EVIDENCE = "";

// The transcript row the evidence came from (by its stamp), opened, scrolled to and marked;
// when it is not on the page the link's own #turn-N anchor is followed instead.
function showRow(event, ts) {
  const stamp = document.querySelector(`#transcript li.row time[datetime="${CSS.escape(ts)}"]`);
  const row = stamp && stamp.closest("li.row");
  if (!row) return;
  event.preventDefault();
  for (const old of document.querySelectorAll("li.row.evidence-target")) old.classList.remove("evidence-target");
  const folded = row.querySelector("details");
  if (folded) folded.open = true;
  row.classList.add("evidence-target");
  row.scrollIntoView({ block: "center" });
}

function evidenceLine(evidence) {
  const e = evidence && typeof evidence === "object" ? evidence : null;
  if (!e || !Object.hasOwn(EVIDENCE, e.kind) || !Number.isInteger(e.turn)) {
    return el("span", { class: "evidence evidence-none" }, NO_EVIDENCE);
  }
  const link = el("a", { href: `#turn-${e.turn}`, class: "evidence-link" }, `turn ${e.turn}`);
  if (typeof e.ts === "string" && e.ts) {
    link.dataset.ts = e.ts;
    link.addEventListener("click", (event) => showRow(event, e.ts));
  } else {
    link.addEventListener("click", (event) => event.stopPropagation());
  }
  return el("span", { class: `evidence evidence-${e.kind}`, "data-kind": e.kind },
    `${EVIDENCE[e.kind]} (`, link, ")", typeof e.quote === "string" && e.quote ? `: “${e.quote}”` : "");
}

// An intent's title, also the key that keeps its card open across re-renders.
const intentTitle = (intent) => String(intent.title || "Untitled intent");

function intentCard(intent, open) {
  const state = stateOf(intent);
  const ranges = validRanges(intent.ranges);
  const title = intentTitle(intent);
  const body = el("div", { class: "intent-body" }, rangeLine(ranges));
  if (intent.initial_intent) body.append(el("h4", {}, "You asked for"), el("p", {}, md(intent.initial_intent)));
  if (Number.isInteger(intent.origin_turn) && ranges.length && intent.origin_turn !== ranges[0][0]) {
    body.append(el("p", { class: "pivot" }, "Pivoted here from your question at turn ",
      turnLink(intent.origin_turn)));
  }
  const progress = textList("ul", intent.progress);
  if (progress) body.append(el("h4", {}, "Where it stands"), progress);
  const steps = (Array.isArray(intent.next_steps) ? intent.next_steps : []).filter((s) => s && s.what);
  if (steps.length) {
    body.append(el("h4", {}, "Suggested next"), el("ol", { class: "steps" }, steps.map((s) => el("li", {},
      el("span", { class: "step-what" }, md(s.what)),
      s.why ? el("span", { class: "step-why" }, "Why: ", md(s.why)) : null,
      s.expect ? el("span", { class: "step-expect" }, "Expect: ", md(s.expect)) : null))));
  }
  return el("details", { class: `intent state-${state}`, "data-key": title, open },
    el("summary", {}, el("span", { class: `badge badge-${state}` }, STATES[state]),
      el("span", { class: "intent-head" }, el("span", { class: "intent-title" }, md(title)),
        evidenceLine(intent.evidence))), body);
}

// Which summarizer wrote it, in the server's words (present.py written_by); an offline
// estimate offers staff the settings page, where a model is picked.
function summarizer(by, staff) {
  const label = by && typeof by.label === "string" ? by.label : "";
  const parts = [el("span", { class: "written-by" }, label || "Summarized")];
  if (by && by.estimate && staff) {
    parts.push(" (", el("a", { href: "/settings/#backends", class: "pick-model" }, "pick a model"), ")");
  }
  parts.push(" · ");
  return parts;
}

export function summaryPanel(state, setRunning) {
  STATES = state.stateLabels || {};
  EVIDENCE = state.evidenceLabels || {};
  NO_EVIDENCE = state.noEvidence || "";
  // Reads come from the dashboard's copy of the summary API (same body, plus its texts
  // rendered as Markdown); the Summarize button posts to the API itself.
  const url = `/api/chat/slots/${encodeURIComponent(state.slot)}/summary`;
  const readUrl = `/s/${encodeURIComponent(state.slot)}/summary/`;
  const panel = document.getElementById("summary-panel");
  const content = document.getElementById("summary-content");
  const actions = document.getElementById("summary-actions");
  const status = document.getElementById("summary-status");
  const toggle = document.getElementById("summary-toggle");
  const layout = document.querySelector(".session-layout");
  const P = { body: state.summary || {}, running: state.running, busy: false, notice: null,
    failed: false, fetching: false, again: false, deferred: false, showAll: false, notesOpen: false };
  // One button for the page's life, so keyboard focus survives every re-render; while it
  // cannot act it is aria-disabled (still focusable, still describing why) and ignores clicks.
  const button = el("button", { type: "button", id: "summarize", class: "btn btn-primary btn-small",
    onclick: generate }, "Summarize");
  actions.append(button);

  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    toggle.textContent = open ? "Hide summary" : "Show summary";
    layout.classList.toggle("panel-closed", !open);
  });

  function triage(intents) {
    const items = [];
    for (const first of [true, false]) {
      for (const intent of intents) {
        const s = stateOf(intent);
        if (first ? s !== "needs-you" : s === "needs-you" || s === "dropped") continue;
        for (const step of intent.next_steps || []) {
          if (step && step.what) items.push({ step, intent, needsYou: s === "needs-you" });
        }
      }
    }
    if (!items.length) return null;
    const shown = P.showAll ? items : items.slice(0, TRIAGE_VISIBLE);
    const more = items.length - shown.length;
    return el("section", { class: "triage", "aria-labelledby": "triage-heading" },
      el("h3", { id: "triage-heading" }, `Open items (${items.length})`),
      el("ol", {}, shown.map(({ step, intent, needsYou }) => el("li", {}, md(step.what), " ",
        el("span", { class: "from" }, "— ", md(intentTitle(intent)), needsYou ? " (needs you)" : "")))),
      more > 0 ? el("button", { type: "button", class: "btn btn-link small",
        onclick: () => { P.showAll = true; render(); } }, `+${more} more`) : null);
  }

  function affordance(b) {
    if (b.generate_state === "too_few_turns") return el("p", { class: "why" }, TOO_FEW);
    if (b.generate_state === "unavailable") {
      return el("p", { class: "why" }, state.restricted
        ? "Summaries are not written for incognito or temporary sessions."
        : REFUSALS.summary_unavailable);
    }
    if (b.generate_state === "generating") return el("p", { class: "why", id: "summary-generating" }, GENERATING);
    if (b.generate_state === "ready" && P.running) {
      return el("p", { class: "why", id: "summarize-why" }, REFUSALS.summary_turn_running);
    }
    return null;
  }

  function off() {
    return el("div", { class: "off" },
      el("h3", {}, "Session summaries are off"),
      el("p", {}, "Nothing is summarized, and stored summaries are not shown, while the feature is off."),
      state.staff
        ? el("p", {}, "Turn them on in ", el("a", { href: "/settings/" }, "Settings"), ".")
        : el("p", {}, "An administrator can turn them on in Settings (session_summary.enabled in config.json)."));
  }

  function summary(b) {
    const intents = Array.isArray(b.intents) ? b.intents : [];
    const out = [affordance(b)];
    if (!intents.length) {
      out.push(el("p", { class: "panel-note" }, b.generate_state === "ready"
        ? "No summary yet. Summarize writes one now; a turn that ends cleanly writes one on its own."
        : "No summary yet."));
      return out;
    }
    if (b.stale) {
      const n = Number.isInteger(b.new_turns) && b.new_turns > 0 ? `: ${plural(b.new_turns, "newer turn")}` : "";
      out.push(el("p", { class: "stale", id: "summary-stale" }, "Updated ", timeEl(b.generated_at),
        ` — behind the conversation${n}`));
    }
    out.push(triage(intents));
    const previous = content.querySelectorAll("details.intent");
    const openKeys = previous.length
      ? new Set([...previous].filter((d) => d.open).map((d) => d.dataset.key)) : null;
    out.push(el("h3", {}, plural(intents.length, "intent")), el("ul", { class: "intents" },
      intents.map((intent, i) => el("li", {}, intentCard(intent,
        openKeys ? openKeys.has(intentTitle(intent)) : i === 0)))));
    const notes = textList("ul", b.constraints);
    if (notes) {
      out.push(el("details", { class: "notes", open: P.notesOpen,
        ontoggle: (e) => { P.notesOpen = e.currentTarget.open; } },
      el("summary", {}, `How this project works (${notes.children.length})`), notes));
    }
    out.push(el("p", { class: "byline" }, ...summarizer(b.written_by, state.staff),
      timeEl(b.generated_at),
      Number.isInteger(b.covers_through_turn) ? ` · covers turns 1–${b.covers_through_turn}` : ""));
    return out;
  }

  function renderStatus() {
    const parts = [];
    if (P.notice) parts.push(el("p", { class: P.notice.kind }, P.notice.text));
    if (P.failed) {
      parts.push(el("p", { class: "warn" }, "Could not refresh the summary; showing the last one received. ",
        el("button", { type: "button", class: "btn btn-link", onclick: () => refresh() }, "Check again")));
    }
    status.replaceChildren(...parts);
  }

  function render() {
    const b = P.body || {};
    if (b.rendered && typeof b.rendered === "object") RENDERED = b.rendered;
    const on = b.enabled !== false; // fails open while unknown
    toggle.hidden = !on;
    if (!on) layout.classList.remove("panel-closed");
    panel.setAttribute("aria-busy", String(P.busy || P.fetching));
    renderStatus();
    const generating = b.generate_state === "generating"; // queued or running: keeps focus
    button.hidden = !(on && (b.generate_state === "ready" || generating));
    button.textContent = P.busy || generating ? "Summarizing…" : "Summarize";
    button.setAttribute("aria-disabled", String(P.running || P.busy || generating));
    if (P.running) button.setAttribute("aria-describedby", "summarize-why");
    else button.removeAttribute("aria-describedby");
    content.replaceChildren(...(on ? summary(b) : [off()]).filter(Boolean));
  }

  async function refresh(clearNotice = false) {
    // While our POST runs its answer is the fresh body; a frame's read waits for it.
    if (P.busy) { P.deferred = true; return; }
    if (P.fetching) { P.again = true; return; }
    P.fetching = true;
    const r = await api(readUrl);
    P.fetching = false;
    if (r.ok && r.body && typeof r.body === "object") {
      P.body = r.body;
      P.failed = false;
      if (clearNotice && P.notice?.kind === "warn") P.notice = null; // a summary arrived
      panel.dataset.synced = String(Number(panel.dataset.synced || 0) + 1);
    } else {
      P.failed = true; // the summary already on screen stays
    }
    render();
    if (P.again) { P.again = false; refresh(clearNotice); }
  }

  async function generate() {
    if (P.busy || P.running || (P.body || {}).generate_state === "generating") return;
    P.busy = true;
    P.notice = null;
    render();
    const r = await api(url, "POST");
    P.busy = false;
    if (r.status === 202 && r.body && typeof r.body === "object") {
      P.failed = false; // queued: the body says "generating"; the frame brings the result
      P.body = r.body;
    } else if (r.ok && r.body && typeof r.body === "object") {
      P.failed = false;
      P.notice = { kind: "ok", text: "Summary updated." };
      P.deferred = true; // read it back as the panel shows it: texts rendered, states given
    } else {
      const code = r.body && r.body.code;
      if (code === "summary_turn_running") setRunning(true);
      let text = REFUSALS[code];
      if (!text && SERVER_WORDED.has(code) && typeof r.body.error === "string") text = sentence(r.body.error);
      if (!text) {
        text = r.status === 0 ? "Could not reach the server. Try again in a moment."
          : r.status === 401 || r.status === 403 ? "Your login has expired. Reload the page to log in again."
            : REFUSALS.summary_unavailable;
      }
      P.notice = { kind: "warn", text };
      if (code === "summary_disabled") P.deferred = true;
    }
    render();
    if (P.deferred) { P.deferred = false; refresh(); }
  }

  render();
  return {
    refresh,
    running(value) { P.running = value; render(); },
  };
}
