// The settings page's backend list: Test and "Use this backend" post the row's form and
// show the server's sentence (the server words every result; nothing is decided here).
const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content || "";

async function post(url, form) {
  let response;
  try {
    response = await fetch(url, { method: "POST", body: new FormData(form), credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRFToken": csrfToken() } });
  } catch {
    return { ok: false, text: "Could not reach the server." };
  }
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  if (body && typeof body.text === "string") return { ok: response.ok && body.ok, text: body.text, body };
  if (body && typeof body.error === "string") return { ok: false, text: body.error };
  return { ok: false, text: `The server answered HTTP ${response.status}.` };
}

for (const form of document.querySelectorAll("form.backend-form")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const use = event.submitter?.value === "use";
    const out = form.querySelector(".backend-result");
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => { b.disabled = true; });
    out.className = "backend-result small";
    out.textContent = use ? "Saving…" : "Testing…";
    const result = await post(use ? form.dataset.use : form.getAttribute("action"), form);
    buttons.forEach((b) => { b.disabled = false; });
    out.textContent = result.text;
    out.classList.add(result.ok ? "ok" : "warn");
    if (use && result.ok && result.body) {
      document.getElementById("backend-in-use").textContent = result.body.model;
      document.getElementById("backend-in-use-note").textContent = result.body.note;
    }
  });
}
