// Kiro Crew dashboard: the live socket, live transcript rows and the pages' wiring (the
// summary panel is panel.js). No dependencies, no polling. Data reaches the DOM as text
// (textContent / text nodes); the only markup inserted is HTML the server rendered and
// sanitized (Markdown through markdown.py: live rows and the panel's rendered texts),
// parsed with DOMParser, never innerHTML. Frames only say "this changed"; the page then
// reads the server, and every (re)connect resyncs what a missed frame hid.
import { summaryPanel } from "./panel.js";
import { api, parsed } from "./util.js";

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
// Markdown, turn numbers and header count as after a reload. The page only echoes the
// server's opaque position (``cursor``) and why it reads (the frames' roles); the server
// says which shown row its answer replaces (a revision re-renders the running turn).
const RESET_KEY = "kirocrew-transcript-reset";

function liveTranscript(state) {
  const list = document.getElementById("transcript");
  const note = document.getElementById("transcript-note");
  const count = document.getElementById("turn-count");
  const base = `/s/${encodeURIComponent(state.slot)}/rows/`;
  let cursor = state.cursor || "";
  let busy = false;
  let resetting = false; // reloading: nothing more to read on this page
  const reasons = new Set(); // why the page reads; reads asked for while one runs join

  function failed(text) {
    note.hidden = false;
    note.textContent = text;
  }

  async function read() {
    if (resetting) { reasons.clear(); return; }
    const query = new URLSearchParams({ at: cursor });
    for (const reason of reasons) query.append("why", reason);
    reasons.clear();
    const r = await api(`${base}?${query}`);
    if (r.status === 422 && r.body?.code === "invalid_cursor" && resetOnce()) return;
    if (!r.ok || !r.body || typeof r.body.html !== "string") {
      failed(r.status === 422
        ? "This transcript was rewritten (rewound or rotated). Reload the page to see it as it is now."
        : "Could not load the newest messages. They will appear with the next update.");
      return;
    }
    const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 150;
    if (r.body.replace) {
      const first = list.querySelector(`li.row[data-cursor="${CSS.escape(r.body.replace)}"]`);
      if (!first) {
        failed("Could not update this turn. Reload the page to see it as it is now.");
        return;
      }
      while (first.nextElementSibling) first.nextElementSibling.remove();
      first.remove();
    }
    const rows = parsed(r.body.html).filter((node) => node.nodeType === Node.ELEMENT_NODE);
    list.append(...rows);
    cursor = r.body.cursor || cursor;
    if (typeof r.body.turns_text === "string") count.textContent = r.body.turns_text;
    document.getElementById("transcript-empty").hidden = list.children.length > 0;
    if (rows.length && nearBottom) list.lastElementChild.scrollIntoView({ block: "end" });
  }

  // The transcript under this page was replaced (the demo replayed into the same slot,
  // a rewind, a rotation): the page starts again from the server's current one. Once per
  // position: a fresh page that is handed the same unreadable one says so instead.
  function resetOnce() {
    if (sessionStorage.getItem(RESET_KEY) === cursor) return false;
    sessionStorage.setItem(RESET_KEY, cursor);
    resetting = true;
    location.reload();
    return true;
  }

  async function pull(reason) {
    reasons.add(reason);
    if (busy) return;
    busy = true;
    while (reasons.size) await read();
    busy = false;
  }

  return { pull };
}

// ------------------------------------------------------------------ earlier turns
// A long session opens at its last turns. Each run of turns not loaded is one gap marker
// the server rendered (<li class="gap" data-gap>, an opaque token). Its button loads the
// gap's last turns; a link to a row that is not on the page (#turn-3) asks the server
// which gap holds it. Either way the answer is the markup that replaces that gap: the
// rows, and the smaller gaps left around them.
function earlierTurns(state) {
  const list = document.getElementById("transcript");
  const note = document.getElementById("transcript-note");
  const base = `/s/${encodeURIComponent(state.slot)}/rows/`;
  let busy = false;

  // Keeps what was on screen where it was.
  async function load(query) {
    if (busy) return;
    busy = true;
    const r = await api(`${base}?${query}`);
    busy = false;
    if (!r.ok || !r.body || typeof r.body.html !== "string" || typeof r.body.gap !== "string") {
      note.hidden = false;
      note.textContent = "Could not load these turns. Reload the page to try again.";
      return;
    }
    if (!r.body.gap) return; // no gap holds it
    const gap = [...list.querySelectorAll("li.gap")].find((li) => li.dataset.gap === r.body.gap);
    if (!gap) return;
    const below = gap.nextElementSibling;
    const top = below ? below.getBoundingClientRect().top : 0;
    gap.replaceWith(...parsed(r.body.html).filter((node) => node.nodeType === Node.ELEMENT_NODE));
    if (below) window.scrollBy(0, below.getBoundingClientRect().top - top);
  }

  async function show(hash) {
    const id = decodeURIComponent((hash || "").slice(1));
    if (!id) return;
    const gaps = list.querySelectorAll("li.gap");
    if (!document.getElementById(id) && gaps.length) {
      const query = new URLSearchParams({ target: id });
      for (const gap of gaps) query.append("gap", gap.dataset.gap);
      await load(query);
    }
    document.getElementById(id)?.scrollIntoView({ block: "start" });
  }

  list.addEventListener("click", (event) => {
    const gap = event.target.closest?.("button.gap-load")?.closest("li.gap");
    if (gap) load(new URLSearchParams({ gap: gap.dataset.gap }));
  });
  window.addEventListener("hashchange", () => show(location.hash));
  // Clicks on a link to the fragment already in the address bar fire no hashchange.
  document.addEventListener("click", (event) => {
    const link = event.target.closest?.('a[href^="#"]');
    if (link && link.getAttribute("href") === location.hash) show(location.hash);
  });
  if (location.hash) show(location.hash);
  else if (list.querySelector("li.gap")) list.lastElementChild?.scrollIntoView({ block: "end" });
}

// ------------------------------------------------------------------ intent timeline
// The server draws the timeline (partials/timeline.html); when the stored summary changes
// the page swaps in the section it draws now. A failed read keeps the one on screen.
function intentTimeline(state) {
  const base = `/s/${encodeURIComponent(state.slot)}/timeline/`;
  async function refresh() {
    const r = await api(base);
    if (!r.ok || !r.body || typeof r.body.html !== "string") return;
    const fresh = parsed(r.body.html).find((node) => node.nodeType === Node.ELEMENT_NODE);
    if (fresh) document.getElementById("intent-timeline")?.replaceWith(fresh);
  }
  return { refresh };
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
  const timeline = intentTimeline(state);
  earlierTurns(state);
  const mine = (data) => data && data.key === state.slot;
  connectSocket({
    async hello(reconnected) {
      // (Re)subscribed: anything pushed while we were away is lost, so read it all again.
      panel.refresh(true);
      timeline.refresh();
      transcript.pull(reconnected ? "resync" : "hello");
      const r = await api(`/api/chat/slots/${encodeURIComponent(state.slot)}`);
      if (r.ok && r.body && typeof r.body.running === "boolean") setRunning(r.body.running);
    },
    session_summary(data) {
      if (!mine(data)) return;
      panel.refresh(true);
      timeline.refresh();
    },
    turn(data) { if (mine(data)) setRunning(Boolean(data.running)); },
    row(data) { if (mine(data)) transcript.pull(String(data.role || "row")); },
  });
}

// A frame about a session on this page swaps in its card as the server renders it now
// (turns, state chips, gist, running pill); one about a session not shown (a new one, or
// on another page) offers a refresh instead.
function listPage() {
  const news = document.getElementById("list-news");
  const show = () => { news.hidden = false; };
  const asked = new Set(); // cards to read again; one read at a time
  let busy = false;
  const cardOf = (slot) => document.querySelector(`li.session-card[data-slot="${CSS.escape(slot)}"]`);

  async function refresh(data) {
    const slot = data && typeof data.key === "string" ? data.key : "";
    if (!slot || !cardOf(slot)) { show(); return; }
    asked.add(slot);
    if (busy) return;
    busy = true;
    while (asked.size) {
      const [next] = asked;
      asked.delete(next);
      const r = await api(`/s/${encodeURIComponent(next)}/card/`);
      const card = cardOf(next);
      if (!r.ok || !r.body || typeof r.body.html !== "string" || !card) { show(); continue; }
      const fresh = parsed(r.body.html).filter((node) => node.nodeType === Node.ELEMENT_NODE);
      card.replaceWith(...fresh);
    }
    busy = false;
  }

  connectSocket({
    hello(reconnected) { if (reconnected) show(); },
    session_summary: refresh,
    turn: refresh,
    row: refresh,
  });
}

const page = document.body.dataset.page;
if (page === "session") sessionPage();
else if (page === "sessions") listPage();
