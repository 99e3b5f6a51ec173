// A session's page (session.html): its chat and calls live over its event stream, the
// model's reading beside it, Take over for a session another process runs.
"use strict";

Object.assign(agentos, (() => {
  const { el, call, url, lost, showError, Unreachable, RETRY_MS, duration, elapsed, timing, signature, callDetails,
          questionBox } = agentos;

  function sessionPage() {
    const sessionId = decodeURIComponent(location.pathname.split("/").pop());
    document.getElementById("back").setAttribute("href", url("/"));
    const state = { title: "", chat: [], calls: {}, status: "", status_note: null, context: "", errors: [], streaming: null,
                    view: "transcript", access: { open: false, holder: null, here: "", changed_at: null }, takingOver: false,
                    confirming: null, details: new Map(), asked: new Map(), replyTo: null, raw: false, loaded: false };
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
      const box = questionOf(c);
      if (box) row.append(el("span", { class: "asks", text: "needs your answer" }));
      if (!c.final && c.percent !== null && c.percent !== undefined) {
        row.append(el("progress", { max: "100", value: String(c.percent) }),
                   el("span", { class: "percent", text: `${Math.round(c.percent)}%` }));
      } else if (!c.final && c.latest !== null && c.latest !== undefined) {
        row.append(el("span", { class: "latest", text: typeof c.latest === "string" ? c.latest : JSON.stringify(c.latest) }));
      }
      // the newest log line sits beside the bar: it never replaces the percent
      if (!c.final && c.log !== null && c.log !== undefined) row.append(el("span", { class: "log", text: c.log }));
      if (c.elapsed !== null && c.elapsed !== undefined && c.status !== "orphaned") { // a lost call's is not known
        const ticking = !c.final && c._since !== undefined;
        const seconds = ticking ? performance.now() / 1000 - c._since : c.elapsed;
        row.append(el("span", { class: "elapsed", "data-since": ticking ? String(c._since) : "",
                                text: elapsed(c, seconds) }));
      }
      if (c.error) row.append(el("span", { class: "latest", text: c.error }));
      if (c.note) row.append(el("span", { class: "note", text: c.note }));
      const shown = state.details.has(c.call_id);
      const look = el("button", { type: "button", class: "details-toggle quiet", "aria-expanded": String(shown),
                                  text: shown ? "hide details" : "details" });
      look.addEventListener("click", () => toggleDetails(c.call_id));
      const actions = el("span", { class: "actions" }, look); // together, wrapping as one
      if (state.access.open && !c.final && c.status !== "orphaned") actions.append(...cancelling(c));
      row.append(actions);
      if (box) row.append(box);
      if (c.child) row.append(childChat(c));
      if (shown) row.append(callDetails(c, state.details.get(c.call_id), () => drawCall(c.call_id)));
      return row;
    }

    // The call's question, one box per question asked: a redraw of its row (the call's
    // progress goes on) keeps what the person has typed so far.
    function questionOf(c) {
      const q = c.final ? null : c.question;
      if (!q) { state.asked.delete(c.call_id); return null; }
      const key = JSON.stringify([q.asked_at, q.message, state.access.open]);
      const kept = state.asked.get(c.call_id);
      if (kept && kept.key === key) return kept.box;
      const send = (body) => call("POST", `${api}/calls/${encodeURIComponent(c.call_id)}/answer`, body);
      const box = questionBox(c, state.access.open, send);
      state.asked.set(c.call_id, { key, box });
      return box;
    }

    // Beside the session's status: how many calls wait for the person; it takes them to
    // the first one (a long chat may have scrolled it out of sight).
    function drawAsking() {
      const waiting = Object.values(state.calls).filter((c) => !c.final && c.question).length;
      const button = document.getElementById("asking");
      button.hidden = waiting === 0;
      button.textContent = waiting === 1 ? "a call needs your answer" : `${waiting} calls need your answer`;
    }

    document.getElementById("asking").addEventListener("click", () => {
      const box = document.querySelector(".call .question");
      if (!box) return;
      box.scrollIntoView({ block: "center" });
      const first = box.querySelector("input:not(:disabled), select:not(:disabled), button:not(:disabled)");
      if (first) first.focus({ preventScroll: true });
    });

    // Rows are drawn anew on each change: a field of a question being filled in is moved
    // into the new row, and keeps the focus and the caret it had.
    function keepingFocus(draw) {
      const held = document.activeElement;
      const inBox = held && held.closest && held.closest(".question");
      let caret = null;
      try { caret = inBox ? [held.selectionStart, held.selectionEnd] : null; } catch (error) { caret = null; }
      draw();
      if (!inBox || !held.isConnected || document.activeElement === held) return;
      held.focus();
      if (caret && caret[0] !== null) { try { held.setSelectionRange(caret[0], caret[1]); } catch (error) { /* no caret */ } }
    }

    // A running call's clock starts when its data arrives (its elapsed is as of the server's
    // last event about it): every redraw reads that start, so the time never goes back.
    function anchored(c) {
      if (!c.final && c.elapsed !== null && c.elapsed !== undefined) c._since = performance.now() / 1000 - c.elapsed;
      return c;
    }

    // A call's details open under its row and stay live: each change of the call looks again.
    function toggleDetails(callId) {
      if (state.details.has(callId)) state.details.delete(callId);
      else { state.details.set(callId, { seen: null, raw: false, looking: false, again: false }); look(callId); }
      drawCall(callId);
    }

    async function look(callId) {
      const open = state.details.get(callId);
      if (!open) return;
      if (open.looking) { open.again = true; return; }
      open.looking = true;
      try {
        open.seen = await call("GET", `${api}/calls/${encodeURIComponent(callId)}`);
        open.failed = null;
        const at = open.seen.elapsed; // the call's start, when the chat's widget has none
        open.since = at === null || at === undefined ? undefined : performance.now() / 1000 - at;
      } catch (error) {
        const c = state.calls[callId];
        if (error.code === "unknown_call" && c) open.seen = forgotten(c); // ended long ago
        else open.failed = String(error.message || error);
      }
      open.looking = false;
      if (state.details.get(callId) !== open) return;
      drawCall(callId);
      if (open.again) { open.again = false; look(callId); }
    }

    function forgotten(c) { // a call the runtime no longer keeps: what the chat still knows
      return { tool_input: c.tool_input, status: c.status, progress: [], progress_dropped: 0, result: null,
               error: c.error, cancel_reason: null, elapsed: null, forgotten: true };
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
          // the child's "user" is this page's agent, which gave it its task: no person wrote it
          list.replaceChildren(...child.chat.map((entry) => el("li", { class: `entry ${entry.role}` },
            el("span", { class: "who", text: entry.role === "user" ? "agent" : c.tool_name }),
            el("span", { class: "text", text: entry.text }),
            ...entry.calls.map((id) => {
              const inner = child.calls[id];
              return el("span", { class: "latest", text: inner ? `${signature(inner)}: ${inner.status}` : "a call" });
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

    function drawChat() { keepingFocus(drawChatNow); }

    function drawChatNow() {
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

    function brief(words) { // the start of a message, to name it by (its node id is no name)
      const line = words.replace(/\s+/g, " ").trim();
      return line.length > 60 ? `${line.slice(0, 59)}…` : line;
    }

    function replyTo(entry) {
      state.replyTo = entry === null ? null : entry.node_id;
      const box = document.getElementById("replying");
      box.hidden = entry === null;
      document.getElementById("replying-to").textContent = entry === null ? "" :
        `Replying under ${entry.role === "user" ? "your" : "the agent's"} ${entry.text.trim() ? `“${brief(entry.text)}”` : "calls"}`;
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
      if (!old) { drawChat(); return; }
      keepingFocus(() => {
        const row = widget(callId);
        if (row) old.replaceWith(row); else drawChatNow();
      });
    }

    function drawAccess() { // read only while another process runs the session
      const { open, holder, here } = state.access;
      const elsewhere = holder !== null && holder !== here;
      const writable = open || holder === null; // a message to a session nobody runs opens it here
      document.body.setAttribute("data-open", String(open));
      document.getElementById("message").disabled = !writable;
      document.querySelector("#composer button").disabled = !writable;
      document.getElementById("read-only").hidden = open;
      const said = document.getElementById("holder");
      if (open) said.replaceChildren();
      else if (holder === null) said.textContent = "No process runs this session: writing to it, or Open, runs it here.";
      else if (!elsewhere) said.textContent = "This session has ended here. Open resumes it from the store.";
      else {
        const lost = runningThere();
        said.replaceChildren("Another process runs this session: ", el("strong", { class: "holder-name", text: holder }),
          ". ", el("span", { id: "changed", text: changedText() }),
          " You can read along; to write here, wait until it lets go, or take it over (it then stops writing to " +
          `this session${lost ? `, and ${lost} ${lost === "its running call" ? "is" : "are"} reported orphaned here` : ""}).`);
      }
      if (!elsewhere) state.takingOver = false;
      document.getElementById("open").hidden = elsewhere;
      document.getElementById("open").disabled = elsewhere;
      document.getElementById("take-over").hidden = !elsewhere || state.takingOver;
      document.getElementById("taking-over").hidden = !(elsewhere && state.takingOver);
      const lost = runningThere();
      document.getElementById("taking-over-question").textContent = `Take this session over from ${holder}?` +
        (lost ? ` ${lost[0].toUpperCase()}${lost.slice(1)} will be reported orphaned here: ` +
                `${lost === "its running call" ? "its result is" : "their results are"} lost.` : "");
    }

    function runningThere() { // the calls a take-over loses ("its 2 running calls"; "" if none)
      const count = Object.values(state.calls)
        .filter((c) => !c.final && !String(c.note || "").startsWith("deferred")).length; // a token still completes those
      return count === 0 ? "" : count === 1 ? "its running call" : `its ${count} running calls`;
    }

    function changedText() { // when the session last changed, in words
      const at = state.access.changed_at;
      if (at === null || at === undefined) return "";
      const ago = Date.now() / 1000 - at;
      const when = new Date(at * 1000).toLocaleTimeString();
      return ago < 10 ? `The session last changed just now (${when}).` :
        `The session last changed ${duration(ago)} ago (${when}).`;
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
      const reading = document.getElementById("reading"); // the model reads on from the end:
      const following = reading.scrollHeight - reading.scrollTop - reading.clientHeight < 40; // follow it
      readingOf(reading);
      if (following) reading.scrollTop = reading.scrollHeight;
    }

    function readingOf(reading) {
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
    }

    // What the model reads next: a panel beside the chat on a wide screen, closed below it.
    const reads = document.getElementById("reads");
    reads.open = window.matchMedia("(min-width: 1000px)").matches;
    const layout = () => document.querySelector("main.session").classList.toggle("reads-closed", !reads.open);
    reads.addEventListener("toggle", layout);
    layout();

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
      const changed = document.getElementById("changed");
      if (changed) changed.textContent = changedText();
      for (const span of document.querySelectorAll("[data-since]:not([data-since=''])")) {
        const c = state.calls[span.closest("[data-call]").getAttribute("data-call")];
        const seconds = performance.now() / 1000 - Number(span.getAttribute("data-since"));
        if (c) span.textContent = span.classList.contains("timing") ? timing(c, seconds) : elapsed(c, seconds);
      }
    }, 1000);

    const handlers = {
      snapshot(data) {
        Object.assign(state, data, { loaded: true });
        Object.values(state.calls).forEach(anchored);
        drawAccess(); drawChat(); drawRest(); drawReading(); drawAsking();
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
        state.calls[data.call.call_id] = anchored(data.call);
        drawCall(data.call.call_id);
        drawAsking();
        if (!state.access.open) drawAccess(); // what a take-over would lose
        if (state.details.has(data.call.call_id)) look(data.call.call_id);
      },
    };
    const connection = document.getElementById("connection");
    let source = null;
    function connect() { // the page's event stream: a snapshot, then each change
      source = new EventSource(url(`${api}/events`));
      source.onopen = () => { connection.textContent = "live"; lost(false); };
      source.onerror = () => { connection.textContent = "reconnecting…"; why(); };
      for (const [kind, handle] of Object.entries(handlers)) {
        source.addEventListener(kind, (event) => {
          handle(JSON.parse(event.data));
          document.body.setAttribute("data-last-event", event.lastEventId);
        });
      }
    }

    let asking = false;
    async function why() { // the stream broke: the server is gone, the session is, or a hiccup
      if (asking) return;
      asking = true;
      try {
        await call("GET", api);
      } catch (error) {
        if (error.code === "unknown_session") { source.close(); missing(); return; }
      } finally { asking = false; }
      // The browser gave up: connect anew, never at once (a stream that fails while the
      // page answers would loop); else it reconnects by itself.
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, RETRY_MS);
    }

    function missing() { // a link to a session this server does not know
      document.getElementById("missing-id").textContent = sessionId;
      document.getElementById("missing").hidden = false;
      for (const id of ["chat", "composer", "reads"]) document.getElementById(id).hidden = true;
      document.getElementById("status").textContent = "";
      connection.textContent = "";
    }

    connect();

    document.getElementById("open").addEventListener("click", async () => {
      try { await call("POST", `${api}/open`, {}); }
      catch (error) { showError(error); }
    });
    document.getElementById("take-over").addEventListener("click", () => { state.takingOver = true; drawAccess(); });
    document.getElementById("take-over-no").addEventListener("click", () => { state.takingOver = false; drawAccess(); });
    document.getElementById("take-over-yes").addEventListener("click", async () => {
      state.takingOver = false;
      drawAccess();
      try { await call("POST", `${api}/take-over`, {}); } // its access event redraws the page
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
      catch (error) {
        input.value = text;
        showError(error instanceof Unreachable ? "The server did not answer: your message may or may not " +
          "have been sent. Check the chat before sending it again." : error);
      }
    });
  }


  return { sessionPage };
})());

agentos.sessionPage();
