// The list of sessions (index.html).
"use strict";

Object.assign(agentos, (() => {
  const { el, call, url, showError, Unreachable, RETRY_MS } = agentos;

  const LIST_EVERY_MS = 5000; // the list looks again this often (a session started elsewhere shows)

  async function listPage() {
    document.getElementById("new-session").addEventListener("click", async () => {
      try {
        const made = await call("POST", "/api/sessions", {});
        location.href = url(`/sessions/${encodeURIComponent(made.session_id)}`);
      } catch (error) { showError(error); }
    });
    const body = document.querySelector("#sessions tbody");
    let loaded = false;
    const look = async () => {
      try {
        const { sessions } = await call("GET", "/api/sessions");
        drawList(body, sessions);
        loaded = true;
        setTimeout(look, LIST_EVERY_MS);
      } catch (error) {
        if (!loaded) {
          body.replaceChildren(el("tr", { class: "placeholder", id: "unloaded" },
            el("td", { colspan: "6", text: "The sessions could not be loaded yet." })));
        }
        if (!(error instanceof Unreachable)) showError(error);
        setTimeout(look, RETRY_MS);
      }
    };
    await look();
  }

  function drawList(body, sessions) {
    body.replaceChildren(...sessions.slice().reverse().map((row) => {
      const link = el("a", { href: url(`/sessions/${encodeURIComponent(row.session_id)}`),
                             class: "session-title", text: row.title || row.short_id });
      const when = row.updated_at ? new Date(row.updated_at * 1000).toLocaleString() : "";
      const name = el("td", {}, link);
      if (row.title) name.append(el("span", { class: "session-id", text: row.short_id }));
      return el("tr", { "data-session": row.session_id },
        name, el("td", { class: "doing", text: row.doing }), el("td", { "data-label": "agent", text: row.agent }),
        el("td", { "data-label": "status", text: row.status }),
        el("td", { "data-label": "running calls", text: String(row.running_calls) }),
        el("td", { "data-label": "last activity", text: when }));
    }));
    if (!sessions.length) { // what to do first: here, or in a terminal
      body.append(el("tr", { class: "placeholder", id: "empty" }, el("td", { colspan: "6" },
        el("strong", { text: "No sessions yet." }),
        " Start one with New session above, or in a terminal with ", el("code", { text: "agentos chat" }),
        " (or ", el("code", { text: 'agentos run "your question"' }),
        ") on the same database: it shows up here.")));
    }
  }

  return { listPage };
})());

agentos.listPage();
