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
    const body = document.querySelector("#sessions tbody");
    try {
      const { sessions } = await call("GET", "/api/sessions");
      body.replaceChildren(...sessions.slice().reverse().map((row) => {
        const link = el("a", { href: url(`/sessions/${encodeURIComponent(row.session_id)}`),
                               class: "session-title", text: row.title || row.short_id });
        const when = row.updated_at ? new Date(row.updated_at * 1000).toLocaleString() : "";
        const name = el("td", {}, link);
        if (row.title) name.append(el("span", { class: "session-id", text: row.short_id }));
        return el("tr", { "data-session": row.session_id },
          name, el("td", { class: "doing", text: row.doing }), el("td", { text: row.agent }),
          el("td", { text: row.status }), el("td", { text: String(row.running_calls) }),
          el("td", { text: when }));
      }));
      if (!sessions.length) {
        body.append(el("tr", { class: "placeholder", id: "empty" },
          el("td", { colspan: "6", text: "No sessions yet: start one with New session." })));
      }
    } catch (error) {
      body.replaceChildren(el("tr", { class: "placeholder" },
        el("td", { colspan: "6", text: "The sessions could not be loaded (is the server running?)." })));
      showError(error);
    }
  }

  // ------------------------------------------------------------ a session

  function signature(call) {
    const args = Object.entries(call.tool_input || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return `${call.tool_name}(${args.join(", ")})`;
  }

  function elapsed(c, seconds) {
    const expected = c.expected_seconds ? ` of ~${c.expected_seconds} s` : "";
    return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s${expected}`;
  }

  function sessionPage() {
    const sessionId = decodeURIComponent(location.pathname.split("/").pop());
    const state = { title: "", chat: [], calls: {}, status: "", status_note: null, context: "", errors: [], streaming: null,
                    view: "transcript", access: { open: false, holder: null, here: "" },
                    confirming: null, peeking: null, replyTo: null, raw: false, loaded: false };
    const api = `/api/sessions/${encodeURIComponent(sessionId)}`;
    document.getElementById("title").textContent = sessionId;
    document.title = `agentos ${sessionId}`;

    function widget(callId) {
      const c = state.calls[callId];
      if (!c) return null;
      const row = el("div", { class: `call ${c.status}`, "data-call": c.call_id, "data-status": c.status },
        el("span", { class: `mark ${c.status}`, title: c.status }),
        el("span", { class: "signature", text: signature(c) }),
        el("span", { class: "state", text: c.status }));
      if (!c.final && c.percent !== null && c.percent !== undefined) {
        row.append(el("progress", { max: "100", value: String(c.percent) }),
                   el("span", { class: "percent", text: `${Math.round(c.percent)}%` }));
      } else if (!c.final && c.latest !== null && c.latest !== undefined) {
        row.append(el("span", { class: "latest", text: typeof c.latest === "string" ? c.latest : JSON.stringify(c.latest) }));
      }
      // the newest log line sits beside the bar: it never replaces the percent
      if (!c.final && c.log !== null && c.log !== undefined) row.append(el("span", { class: "log", text: c.log }));
      if (c.elapsed !== null && c.elapsed !== undefined) {
        const since = c.final ? null : String(performance.now() / 1000 - c.elapsed);
        row.append(el("span", { class: "elapsed", "data-since": since || "", text: elapsed(c, c.elapsed) }));
      }
      if (c.error) row.append(el("span", { class: "latest", text: c.error }));
      if (c.note) row.append(el("span", { class: "note", text: c.note }));
      if (c.child) row.append(childChat(c));
      const look = el("button", { type: "button", class: "peek", text: "peek" });
      look.addEventListener("click", () => peek(c.call_id));
      row.append(look);
      if (state.access.open && !c.final && c.status !== "orphaned") {
        row.append(...cancelling(c));
      }
      return row;
    }

    function cancelling(c) { // Cancel asks once, in place: the call's row holds the question
      if (state.confirming !== c.call_id) {
        const stop = el("button", { type: "button", class: "cancel", text: "Cancel" });
        stop.addEventListener("click", () => { state.confirming = c.call_id; drawCall(c.call_id); });
        return [stop];
      }
      const yes = el("button", { type: "button", class: "confirm-cancel danger", text: "Yes, cancel it" });
      const no = el("button", { type: "button", class: "keep", text: "Keep it" });
      yes.addEventListener("click", async () => {
        state.confirming = null;
        try { await call("POST", `${api}/calls/${encodeURIComponent(c.call_id)}/cancel`, {}); }
        catch (error) { showError(error); }
        drawCall(c.call_id);
      });
      no.addEventListener("click", () => { state.confirming = null; drawCall(c.call_id); });
      return [el("span", { class: "confirm", text: "Cancel this call?" }), yes, no];
    }

    const childChats = new Map(); // the child sessions whose chat box is open

    function childChat(c) { // a sub-agent's call: its child's chat, fetched when opened
      const box = el("details", { class: "child", "data-child": c.child },
        el("summary", { text: `${c.tool_name}'s chat` }));
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

    function drawTitle() { // the name it was given, else the person's first message
      const name = state.title || sessionId;
      const shown = document.getElementById("title");
      shown.textContent = name;
      shown.title = `${sessionId}: click to rename`;
      document.title = `agentos ${name}`;
    }

    function rename() { // the title becomes an input: Enter or leaving it saves, Escape cancels
      const shown = document.getElementById("title");
      const button = document.getElementById("rename");
      if (shown.hidden) return;
      const input = el("input", { id: "title-input", class: "title-input", maxlength: "80",
                                  "aria-label": "The session's title",
                                  placeholder: "A name (empty: the first message)" });
      input.value = state.title;
      let done = false;
      const finish = async (save) => {
        if (done) return;
        done = true;
        const title = input.value;
        input.remove();
        shown.hidden = button.hidden = false;
        if (!save || title === state.title) return;
        try {
          const answer = await call("POST", `${api}/title`, { title });
          if (answer.title) { state.title = answer.title; drawTitle(); } // else: its event
        } catch (error) { showError(error); }
      };
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") { event.preventDefault(); finish(true); }
        else if (event.key === "Escape") { event.preventDefault(); finish(false); }
      });
      input.addEventListener("blur", () => finish(true));
      shown.hidden = button.hidden = true;
      shown.after(input);
      input.focus();
      input.select();
    }

    function drawChat() {
      drawTitle();
      const list = document.getElementById("chat");
      const board = state.view === "board" && state.access.open;
      list.replaceChildren(...state.chat.map((entry) => {
        const item = el("li", { class: `entry ${entry.role}${entry.queued ? " queued" : ""}`,
                                "data-node": entry.queued ? null : String(entry.node_id) },
          el("span", { class: "who", text: entry.queued ? `${entry.role} (queued)` : entry.role }),
          el("span", { class: "text", text: entry.text }));
        if (board && !entry.queued && entry.node_id !== null) { // a board takes replies under a node
          const reply = el("button", { type: "button", class: "reply quiet", text: "reply" });
          reply.addEventListener("click", () => replyTo(entry));
          item.querySelector(".text").after(reply);
        }
        for (const callId of entry.calls) {
          const row = widget(callId);
          if (row) item.append(row);
        }
        return item;
      }));
      if (!state.chat.length && state.loaded && !state.streaming) {
        list.append(el("li", { class: "placeholder", id: "chat-empty",
          text: state.access.open ? "Nothing said yet: write the first message below." : "Nothing said yet." }));
      }
      drawStreaming();
    }

    function replyTo(entry) {
      state.replyTo = entry === null ? null : entry.node_id;
      const box = document.getElementById("replying");
      box.hidden = entry === null;
      document.getElementById("replying-to").textContent = entry === null ? "" :
        `Replying under #${entry.node_id} (${entry.role}: ${entry.text.slice(0, 60)})`;
      if (entry !== null) document.getElementById("message").focus();
    }

    function drawStreaming() { // the model's reply as it forms, after the chat
      const list = document.getElementById("chat");
      const old = document.getElementById("streaming");
      const reply = state.streaming;
      if (!reply) { if (old) old.remove(); return; }
      const item = el("li", { class: "entry agent streaming", id: "streaming" },
        el("span", { class: "who", text: "agent (writing…)" }),
        el("span", { class: "text", text: reply.text }),
        ...reply.calls.map((c) => el("div", { class: "call forming", "data-forming": c.provider_call_id },
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

    function drawAccess() { // read only while another process runs the session
      const { open, holder, here } = state.access;
      const free = holder === null || holder === here;
      const writable = open || holder === null; // a message to a session nobody runs opens it here
      document.body.setAttribute("data-open", String(open));
      document.getElementById("message").disabled = !writable;
      document.querySelector("#composer button").disabled = !writable;
      document.getElementById("read-only").hidden = open;
      document.getElementById("holder").textContent = open ? "" :
        holder === null ? "No process runs this session: writing to it, or Open, runs it here." :
        holder === here ? "This session has ended here. Open resumes it from the store." :
        `Read only: ${holder} runs this session. Open takes it over once it lets go.`;
      document.getElementById("open").disabled = !free;
    }

    function drawRest() {
      const status = document.getElementById("status");
      status.textContent = state.status_note ? `${state.status} · ${state.status_note}` : state.status;
      status.setAttribute("data-status", state.status);
      document.getElementById("session-errors").replaceChildren(
        ...state.errors.map((error) => el("li", { text: `error: ${error}` })));
      const context = document.getElementById("context");
      if (context.textContent !== state.context) {
        context.textContent = state.context;
        drawReading();
        context.scrollTop = context.scrollHeight; // the model reads on from the end
      }
    }

    function drawReading() { // the context as messages by role, tool uses and results folded
      const reading = document.getElementById("reading");
      if (state.view === "board") {
        reading.replaceChildren(el("div", { class: "board", text: state.context.replace(/^\[user\] /, "") }));
        return;
      }
      const messages = [];
      for (const line of state.context.split("\n")) {
        const found = /^\[(\w+)\] (.*)$/s.exec(line);
        if (!found) { // a text's next line
          if (messages.length) messages[messages.length - 1].parts.slice(-1)[0].text += `\n${line}`;
          continue;
        }
        const [, role, rest] = found;
        if (!messages.length || messages[messages.length - 1].role !== role) messages.push({ role, parts: [] });
        const tool = /^(tool_use|tool_result) ?(.*)$/s.exec(rest);
        messages[messages.length - 1].parts.push(tool ? { kind: tool[1], text: tool[2] } : { kind: "text", text: rest });
      }
      reading.replaceChildren(...messages.map((message) => el("div", { class: `message ${message.role}` },
        el("div", { class: "role", text: message.role }),
        ...message.parts.map((part) => part.kind === "text" ? el("div", { class: "said", text: part.text }) :
          el("details", { class: part.kind },
            el("summary", { text: part.kind === "tool_use" ? `uses ${part.text.split(" ")[0]}` : `result: ${part.text.slice(0, 60)}` }),
            el("pre", { text: part.text }))))));
      if (!messages.length) reading.append(el("p", { class: "placeholder", text: "Nothing yet." }));
      reading.scrollTop = reading.scrollHeight;
    }

    document.getElementById("title").addEventListener("click", rename);
    document.getElementById("rename").addEventListener("click", rename);
    document.getElementById("raw").addEventListener("click", (event) => {
      state.raw = !state.raw;
      event.target.setAttribute("aria-pressed", String(state.raw));
      document.getElementById("context").hidden = !state.raw;
      document.getElementById("reading").hidden = state.raw;
    });
    document.getElementById("reply-new").addEventListener("click", () => replyTo(null));

    setInterval(() => { // running calls' clocks tick here; the server sends only changes
      for (const span of document.querySelectorAll(".elapsed[data-since]:not([data-since=''])")) {
        const c = state.calls[span.closest("[data-call]").getAttribute("data-call")];
        if (c) span.textContent = elapsed(c, performance.now() / 1000 - Number(span.getAttribute("data-since")));
      }
    }, 1000);

    async function peek(callId) { // stays live: each change of the call looks again, until it ends
      state.peeking = callId;
      try {
        const seen = await call("GET", `${api}/calls/${encodeURIComponent(callId)}`);
        if (state.peeking !== callId) return;
        document.getElementById("peek-title").hidden = false;
        const box = document.getElementById("peek");
        box.hidden = false;
        box.setAttribute("data-call", callId);
        box.textContent = JSON.stringify(seen, null, 2);
        if (["completed", "failed", "cancelled", "orphaned"].includes(seen.status)) state.peeking = null;
      } catch (error) { showError(error); }
    }

    const handlers = {
      snapshot(data) {
        Object.assign(state, data, { loaded: true });
        drawAccess(); drawChat(); drawRest(); drawReading();
      },
      title(data) { state.title = data.title; drawTitle(); },
      access(data) { state.access = data.access; drawAccess(); drawChat(); },
      status(data) { state.status = data.status; drawRest(); },
      status_note(data) { state.status_note = data.status_note; drawRest(); },
      context(data) { // the first context_from lines stay, the tail's lines follow them
        state.context = state.context.split("\n").slice(0, data.context_from)
          .concat(data.context_tail).join("\n");
        drawRest();
      },
      errors(data) { state.errors = data.errors; drawRest(); },
      streaming(data) { state.streaming = data.streaming; drawStreaming(); },
      chat(data) { state.chat = state.chat.slice(0, data.chat_from).concat(data.chat); drawChat(); },
      call(data) {
        state.calls[data.call.call_id] = data.call;
        drawCall(data.call.call_id);
        if (state.peeking === data.call.call_id) peek(data.call.call_id);
      },
    };
    const source = new EventSource(url(`${api}/events`));
    const connection = document.getElementById("connection");
    source.onopen = () => { connection.textContent = "live"; };
    source.onerror = () => { connection.textContent = "server unreachable: reconnecting…"; };
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
      const body = state.replyTo === null ? { text } : { text, reply_to: state.replyTo };
      try { await call("POST", `${api}/messages`, body); replyTo(null); }
      catch (error) { input.value = text; showError(error); }
    });
  }

  return { listPage, sessionPage };
})();

// The page says which it is (no inline script: the Content-Security-Policy allows none).
(agentos[`${document.currentScript.dataset.page}Page`] || (() => {}))();
