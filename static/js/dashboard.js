// Kiro Crew dashboard: the live socket, live transcript rows and the pages' wiring (the
// summary panel is panel.js). No dependencies, no polling. Data reaches the DOM as text
// (textContent / text nodes); the only markup inserted is HTML the server rendered and
// sanitized (Markdown through markdown.py: live rows and the panel's rendered texts),
// parsed with DOMParser, never innerHTML. Frames only say "this changed"; the page then
// reads the server, and every (re)connect resyncs what a missed frame hid.
import { summaryPanel } from "./panel.js";
import { api, el, parsed, plural } from "./util.js";

// The session page's server state; its label tables are present.py's (one source for both).
const pageState = JSON.parse(document.getElementById("page-state")?.textContent || "{}");

// ------------------------------------------------------------------ socket
function connectSocket(handlers) {
  const live = document.getElementById("live");
  let attempt = 0;
  let hellos = 0;
  const setLive = (on, text) => {
    if (!live) return;
    live.hidden = false;
    live.dataset.live = on ? "on" : "off";
    live.textContent = text;
  };
  const open = () => {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/ws/dashboard/`);
    socket.addEventListener("message", (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch { return; }
      if (!frame || typeof frame.type !== "string") return;
      if (frame.type === "hello") {
        attempt = 0;
        setLive(true, "Live");
        handlers.hello?.(hellos++ > 0);
      } else if (Object.hasOwn(handlers, frame.type)) {
        handlers[frame.type](frame.data || {});
      }
    });
    socket.addEventListener("close", (event) => {
      if (event.code === 4401 || event.code === 4403) {
        setLive(false, "Signed out: reload to log in");
        return;
      }
      // Jittered exponential backoff: 0.5 s doubling to a 10 s ceiling, half of it random.
      const ceiling = Math.min(10000, 500 * 2 ** attempt++);
      setLive(false, "Reconnecting…");
      setTimeout(open, ceiling / 2 + Math.random() * (ceiling / 2));
    });
  };
  setLive(false, "Connecting…");
  open();
}

// ------------------------------------------------------------------ live transcript
// Rows arrive rendered by the page's own partial (the dashboard's rows view): the same
// Markdown, turn numbers and header count as after a reload.
function liveTranscript(state) {
  const list = document.getElementById("transcript");
  const note = document.getElementById("transcript-note");
  const count = document.getElementById("turn-count");
  const base = `/s/${encodeURIComponent(state.slot)}/rows/`;
  let cursor = state.cursor || "";
  let busy = false;
  let again = null;

  async function pull(reread) {
    if (busy) { again = Boolean(again) || reread; return; }
    busy = true;
    let after = cursor;
    const last = [...list.querySelectorAll("li[data-turn]")].pop() || null;
    let before = Number(last?.dataset.turn || 0); // turns shown up to the cursor
    let anchor = null;
    if (reread && last) {
      // A revision can change any row of the running turn: re-read from its user row.
      anchor = last;
      after = anchor.previousElementSibling?.dataset.cursor || "";
      before -= 1;
    }
    const query = new URLSearchParams();
    if (after) query.set("after", after);
    if (after) query.set("turns", String(before));
    const r = await api(`${base}?${query}`);
    if (!r.ok || !r.body || typeof r.body.html !== "string") {
      note.hidden = false;
      note.textContent = r.status === 422
        ? "This transcript was rewritten (rewound or rotated). Reload the page to see it as it is now."
        : "Could not load the newest messages. They will appear with the next update.";
    } else {
      const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 150;
      if (anchor) {
        while (anchor.nextElementSibling) anchor.nextElementSibling.remove();
        anchor.remove();
      } else if (!after) {
        list.replaceChildren();
      }
      const rows = parsed(r.body.html).filter((node) => node.nodeType === Node.ELEMENT_NODE);
      list.append(...rows);
      cursor = r.body.cursor || cursor;
      if (typeof r.body.turns_text === "string") count.textContent = r.body.turns_text;
      document.getElementById("transcript-empty").hidden = list.children.length > 0;
      if (rows.length && nearBottom) list.lastElementChild.scrollIntoView({ block: "end" });
    }
    busy = false;
    if (again !== null) { const next = again; again = null; pull(next); }
  }

  return { pull };
}

// ------------------------------------------------------------------ earlier turns
// A long session opens at its last turns. Each run of turns not loaded is one gap marker
// (<li class="gap" data-from data-to data-cursor>: the cursor of the row before it); a
// button loads the gap's last turns, and a link to a turn inside a gap (#turn-3) loads
// that turn and the ones after it, splitting the gap. Rows come from the rows view's
// turn range, rendered by the page's own partial.
function earlierTurns(state) {
  const list = document.getElementById("transcript");
  const note = document.getElementById("transcript-note");
  const base = `/s/${encodeURIComponent(state.slot)}/rows/`;
  const size = Number(state.pageTurns) || 20;
  let busy = false;

  const gapEl = (from, to, cursor) => {
    const gap = el("li", { class: "gap", "data-from": from, "data-to": to, "data-cursor": cursor },
      el("span", { class: "gap-text" }, `… ${plural(to - from + 1, "turn")} not loaded …`), " ",
      el("button", { type: "button", class: "btn btn-quiet btn-small gap-load" },
        from === 1 ? "Load earlier turns" : "Load these turns"));
    return gap;
  };
  const gapOf = (turn) => [...list.querySelectorAll("li.gap")].find(
    (gap) => Number(gap.dataset.from) <= turn && turn <= Number(gap.dataset.to)) || null;

  // Load turns from..to of ``gap`` in its place; keeps what was on screen where it was.
  async function load(gap, from, to) {
    if (busy) return false;
    busy = true;
    const query = new URLSearchParams({ turn_from: String(from), turn_to: String(to) });
    const r = await api(`${base}?${query}`);
    busy = false;
    if (!r.ok || !r.body || typeof r.body.html !== "string" || !gap.isConnected) {
      note.hidden = false;
      note.textContent = "Could not load these turns. Reload the page to try again.";
      return false;
    }
    const gapFrom = Number(gap.dataset.from);
    const gapTo = Number(gap.dataset.to);
    const last = Number(r.body.last) || 0;
    const parts = [];
    if (last) {
      const first = Number(r.body.first);
      if (first > gapFrom) parts.push(gapEl(gapFrom, first - 1, gap.dataset.cursor || ""));
      parts.push(...parsed(r.body.html).filter((node) => node.nodeType === Node.ELEMENT_NODE));
      if (last < gapTo) parts.push(gapEl(last + 1, gapTo, r.body.cursor || ""));
    }
    const below = gap.nextElementSibling;
    const top = below ? below.getBoundingClientRect().top : 0;
    gap.replaceWith(...parts);
    if (below) window.scrollBy(0, below.getBoundingClientRect().top - top);
    return true;
  }

  async function show(hash) {
    const match = /^#turn-(\d+)$/.exec(hash || "");
    if (!match) return;
    const turn = Number(match[1]);
    if (!document.getElementById(`turn-${turn}`)) {
      const gap = gapOf(turn);
      if (!gap) return;
      await load(gap, turn, Math.min(Number(gap.dataset.to), turn + size - 1));
    }
    document.getElementById(`turn-${turn}`)?.scrollIntoView({ block: "start" });
  }

  list.addEventListener("click", (event) => {
    const button = event.target.closest?.("button.gap-load");
    const gap = button?.closest("li.gap");
    if (!gap) return;
    const to = Number(gap.dataset.to);
    load(gap, Math.max(Number(gap.dataset.from), to - size + 1), to);
  });
  window.addEventListener("hashchange", () => show(location.hash));
  // Clicks on a link to the turn already in the address bar fire no hashchange.
  document.addEventListener("click", (event) => {
    const link = event.target.closest?.('a[href^="#turn-"]');
    if (link && link.getAttribute("href") === location.hash) show(location.hash);
  });
  if (location.hash) show(location.hash);
  else if (list.querySelector("li.gap")) list.lastElementChild?.scrollIntoView({ block: "end" });
}

// ------------------------------------------------------------------ pages
function sessionPage() {
  const state = pageState;
  const pill = document.getElementById("turn-state");
  let panel = null;
  const setRunning = (running) => {
    pill.hidden = !running;
    panel?.running(running);
  };
  panel = summaryPanel(state, setRunning);
  const transcript = liveTranscript(state);
  earlierTurns(state);
  const mine = (data) => data && data.key === state.slot;
  connectSocket({
    async hello(reconnected) {
      // (Re)subscribed: anything pushed while we were away is lost, so read it all again.
      panel.refresh(true);
      transcript.pull(reconnected);
      const r = await api(`/api/chat/slots/${encodeURIComponent(state.slot)}`);
      if (r.ok && r.body && typeof r.body.running === "boolean") setRunning(r.body.running);
    },
    session_summary(data) { if (mine(data)) panel.refresh(true); },
    turn(data) { if (mine(data)) setRunning(Boolean(data.running)); },
    row(data) { if (mine(data)) transcript.pull(data.role === "revision"); },
  });
}

function listPage() {
  const news = document.getElementById("list-news");
  const show = () => { news.hidden = false; };
  connectSocket({
    hello(reconnected) { if (reconnected) show(); },
    session_summary: show,
    turn: show,
  });
}

const page = document.body.dataset.page;
if (page === "session") sessionPage();
else if (page === "sessions") listPage();
