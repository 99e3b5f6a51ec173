// agentos's pages. Every value from the server goes into the DOM as text
// (textContent, attributes set one by one), never as markup.
"use strict";

const agentos = (() => {
  const token = new URLSearchParams(location.search).get("token");

  function url(path) {
    return token ? `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}` : path;
  }

  async function call(method, path, body) {
    const options = { method, headers: {} };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(url(path), options);
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new Error(answer.error ? answer.error.message : `${response.status}`);
    }
    return answer;
  }

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === "text") node.textContent = value;
      else if (value !== null) node.setAttribute(name, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function showError(error) {
    const box = document.getElementById("error");
    box.textContent = String(error.message || error);
    box.hidden = false;
  }

  // ------------------------------------------------------------ the list

  async function listPage() {
    document.getElementById("new-session").addEventListener("click", async () => {
      try {
        const made = await call("POST", "/api/sessions", {});
        location.href = url(`/sessions/${encodeURIComponent(made.session_id)}`);
      } catch (error) { showError(error); }
    });
    try {
      const { sessions } = await call("GET", "/api/sessions");
      const body = document.querySelector("#sessions tbody");
      for (const row of sessions.slice().reverse()) {
        const link = el("a", { href: url(`/sessions/${encodeURIComponent(row.session_id)}`), text: row.session_id });
        const when = row.updated_at ? new Date(row.updated_at * 1000).toLocaleString() : "";
        body.append(el("tr", { "data-session": row.session_id },
          el("td", {}, link), el("td", { text: row.agent }), el("td", { text: row.status }),
          el("td", { text: String(row.running_calls) }), el("td", { text: when })));
      }
    } catch (error) { showError(error); }
  }

  // ------------------------------------------------------------ a session

  function signature(call) {
    const args = Object.entries(call.args || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return `${call.tool}(${args.join(", ")})`;
  }

  function elapsed(c, seconds) {
    const expected = c.expected_seconds ? ` of ~${c.expected_seconds} s` : "";
    return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s${expected}`;
  }

  function sessionPage() {
    const sessionId = decodeURIComponent(location.pathname.split("/").pop());
    const state = { chat: [], calls: {}, status: "", context: "", errors: [], streaming: null,
                    access: { open: false, holder: null, here: "" } };
    const api = `/api/sessions/${encodeURIComponent(sessionId)}`;
    document.getElementById("title").textContent = sessionId;
    document.title = `agentos ${sessionId}`;

    function widget(callId) {
      const c = state.calls[callId];
      if (!c) return null;
      const row = el("div", { class: `call ${c.status}`, "data-call": c.id, "data-status": c.status },
        el("span", { class: `mark ${c.status}`, title: c.status }),
        el("span", { class: "signature", text: signature(c) }),
        el("span", { class: "state", text: c.status }));
      if (!c.final && c.percent !== null && c.percent !== undefined) {
        row.append(el("progress", { max: "100", value: String(c.percent) }));
      } else if (!c.final && c.latest !== null && c.latest !== undefined) {
        row.append(el("span", { class: "latest", text: typeof c.latest === "string" ? c.latest : JSON.stringify(c.latest) }));
      }
      if (c.elapsed !== null && c.elapsed !== undefined) {
        const since = c.final ? null : String(performance.now() / 1000 - c.elapsed);
        row.append(el("span", { class: "elapsed", "data-since": since || "", text: elapsed(c, c.elapsed) }));
      }
      if (c.error) row.append(el("span", { class: "latest", text: c.error }));
      if (c.child) row.append(childChat(c));
      const look = el("button", { type: "button", class: "peek", text: "peek" });
      look.addEventListener("click", () => peek(c.id));
      row.append(look);
      if (state.access.open && !c.final && c.status !== "orphaned") {
        const stop = el("button", { type: "button", class: "cancel", text: "Cancel" });
        stop.addEventListener("click", async () => {
          try { await call("POST", `${api}/calls/${encodeURIComponent(c.id)}/cancel`, {}); }
          catch (error) { showError(error); }
        });
        row.append(stop);
      }
      return row;
    }

    const childChats = new Map(); // the child sessions whose chat box is open

    function childChat(c) { // a sub-agent's call: its child's chat, fetched when opened
      const box = el("details", { class: "child", "data-child": c.child },
        el("summary", { text: `${c.tool}'s chat` }));
      const list = el("ol", { class: "child-chat" });
      box.append(list);
      const fill = async () => {
        try {
          const child = (await call("GET", `/api/sessions/${encodeURIComponent(c.child)}`)).state;
          list.replaceChildren(...child.chat.map((entry) => el("li", { class: `entry ${entry.role}` },
            el("span", { class: "who", text: entry.role }),
            el("span", { class: "text", text: entry.text }),
            ...entry.calls.map((id) => {
              const inner = child.calls[id];
              return el("span", { class: "latest", text: inner ? `${signature(inner)}: ${inner.status}` : id });
            }))));
        } catch (error) { showError(error); }
      };
      box.addEventListener("toggle", () => {
        if (box.open) { childChats.set(c.child, true); fill(); } else childChats.delete(c.child);
      });
      if (childChats.has(c.child)) box.open = true; // redrawn while open: its toggle refreshes it
      return box;
    }

    function drawChat() {
      const list = document.getElementById("chat");
      list.replaceChildren(...state.chat.map((entry) => {
        const item = el("li", { class: `entry ${entry.role}${entry.queued ? " queued" : ""}`,
                                "data-node": entry.queued ? null : String(entry.node_id) },
          el("span", { class: "who", text: entry.queued ? `${entry.role} (queued)` : entry.role }),
          el("span", { class: "text", text: entry.text }));
        for (const callId of entry.calls) {
          const row = widget(callId);
          if (row) item.append(row);
        }
        return item;
      }));
      drawStreaming();
    }

    function drawStreaming() { // the model's reply as it forms, after the chat
      const list = document.getElementById("chat");
      const old = document.getElementById("streaming");
      const reply = state.streaming;
      if (!reply) { if (old) old.remove(); return; }
      const item = el("li", { class: "entry agent streaming", id: "streaming" },
        el("span", { class: "who", text: "agent (writing…)" }),
        el("span", { class: "text", text: reply.text }),
        ...reply.calls.map((c) => el("div", { class: "call forming", "data-forming": c.id },
          el("span", { class: "mark pending", title: "asked for" }),
          el("span", { class: "signature", text: signature(c) }),
          el("span", { class: "state", text: "asked for" }))));
      if (old) old.replaceWith(item); else list.append(item);
    }

    function drawCall(callId) {
      const old = document.querySelector(`[data-call="${CSS.escape(callId)}"]`);
      const row = widget(callId);
      if (old && row) old.replaceWith(row); else drawChat();
    }

    function drawAccess() { // read only unless this server runs the session
      const { open, holder, here } = state.access;
      const free = holder === null || holder === here;
      document.body.setAttribute("data-open", String(open));
      document.getElementById("message").disabled = !open;
      document.querySelector("#composer button").disabled = !open;
      document.getElementById("read-only").hidden = open;
      document.getElementById("holder").textContent = open ? "" :
        holder === null ? "Read only: no process runs this session. Open runs it here." :
        holder === here ? "This session has ended here. Open resumes it from the store." :
        `Read only: ${holder} runs this session. Open takes it over once it lets go.`;
      document.getElementById("open").disabled = !free;
    }

    function drawRest() {
      const status = document.getElementById("status");
      status.textContent = state.status;
      status.setAttribute("data-status", state.status);
      document.getElementById("session-errors").replaceChildren(
        ...state.errors.map((error) => el("li", { text: `error: ${error}` })));
      const context = document.getElementById("context");
      if (context.textContent !== state.context) {
        context.textContent = state.context;
        context.scrollTop = context.scrollHeight; // the model reads on from the end
      }
    }

    setInterval(() => { // running calls' clocks tick here; the server sends only changes
      for (const span of document.querySelectorAll(".elapsed[data-since]:not([data-since=''])")) {
        const c = state.calls[span.closest("[data-call]").getAttribute("data-call")];
        if (c) span.textContent = elapsed(c, performance.now() / 1000 - Number(span.getAttribute("data-since")));
      }
    }, 1000);

    async function peek(callId) {
      try {
        const seen = await call("GET", `${api}/calls/${encodeURIComponent(callId)}`);
        document.getElementById("peek-title").hidden = false;
        const box = document.getElementById("peek");
        box.hidden = false;
        box.textContent = JSON.stringify(seen, null, 2);
      } catch (error) { showError(error); }
    }

    const handlers = {
      snapshot(data) { Object.assign(state, data); drawAccess(); drawChat(); drawRest(); },
      access(data) { state.access = data.access; drawAccess(); drawChat(); },
      status(data) { state.status = data.status; drawRest(); },
      context(data) { // the first context_from lines stay, the tail's lines follow them
        state.context = state.context.split("\n").slice(0, data.context_from)
          .concat(data.context_tail).join("\n");
        drawRest();
      },
      errors(data) { state.errors = data.errors; drawRest(); },
      streaming(data) { state.streaming = data.streaming; drawStreaming(); },
      chat(data) { state.chat = state.chat.slice(0, data.chat_from).concat(data.chat); drawChat(); },
      call(data) { state.calls[data.call.id] = data.call; drawCall(data.call.id); },
    };
    const source = new EventSource(url(`${api}/events`));
    const connection = document.getElementById("connection");
    source.onopen = () => { connection.textContent = "live"; };
    source.onerror = () => { connection.textContent = "reconnecting…"; };
    for (const [kind, handle] of Object.entries(handlers)) {
      source.addEventListener(kind, (event) => {
        handle(JSON.parse(event.data));
        document.body.setAttribute("data-last-event", event.lastEventId);
      });
    }

    document.getElementById("open").addEventListener("click", async () => {
      try { await call("POST", `${api}/open`, {}); }
      catch (error) { showError(error); }
    });

    document.getElementById("composer").addEventListener("submit", async (event) => {
      event.preventDefault();
      const input = document.getElementById("message");
      const text = input.value;
      if (!text.trim()) return;
      input.value = "";
      try { await call("POST", `${api}/messages`, { text }); }
      catch (error) { input.value = text; showError(error); }
    });
  }

  return { listPage, sessionPage };
})();

// The page says which it is (no inline script: the Content-Security-Policy allows none).
(agentos[`${document.currentScript.dataset.page}Page`] || (() => {}))();
