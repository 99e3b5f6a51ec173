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
    let response;
    try { response = await fetch(url(path), options); }
    catch (error) { // no answer at all: the server is gone (or the network is)
      lost(true);
      throw new Unreachable(method);
    }
    lost(false);
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      const failure = new Error(answer.error ? answer.error.message : `${response.status}`);
      failure.code = answer.error ? answer.error.code : null;
      throw failure;
    }
    return answer;
  }

  class Unreachable extends Error { // a POST may have been done all the same: only its answer was lost
    constructor(method) {
      super(method === "GET" ? "The server did not answer. Try again once it is back." :
        "The server did not answer: what you asked may or may not have been done. Look before trying again.");
      this.method = method;
    }
  }

  function lost(yes) { // the banner that says the server is gone, until it answers again
    const banner = document.getElementById("lost");
    if (banner) banner.hidden = !yes;
    document.body.setAttribute("data-lost", String(yes));
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

  const LIST_EVERY_MS = 5000; // the list looks again this often (a session started elsewhere shows)
  const RETRY_MS = 2000; // and this often while the server does not answer

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

  // ------------------------------------------------------------ results as a person reads them

  const LOG_LINES = 5; // a call's newest reports its details show
  const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;
  const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

  function readable(value) { // text as text, images drawn, JSON as a tree that folds
    if (value === null || value === undefined) return el("span", { class: "placeholder", text: "nothing" });
    if (typeof value === "string") return el("div", { class: "text-result", text: value });
    const blocks = value.type === "tool_content" && Array.isArray(value.content) ? value.content : null;
    if (blocks) return el("div", { class: "blocks" }, ...blocks.map(block));
    return fields(value);
  }

  function fields(value) { // an object's or a list's first level, always open
    if (value === null || typeof value !== "object") return tree(value, 0);
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    if (!entries.length) return tree(value, 0);
    return el("ul", { class: "json-fields" }, ...entries.map(([key, child]) => el("li", {},
      el("span", { class: "json-key", text: `${key}: ` }), tree(child, 1))));
  }

  function block(b) { // one content block of a result (the Messages API's shapes)
    if (b && b.type === "text") return el("div", { class: "text-result", text: String(b.text) });
    const source = b && b.type === "image" ? b.source : null;
    if (source && source.type === "base64" && IMAGE_TYPES.test(source.media_type) && BASE64.test(source.data)) {
      return el("img", { class: "result-image", alt: "an image the tool returned",
                         src: `data:${source.media_type};base64,${source.data}` });
    }
    return fields(b);
  }

  function report(payload) { // one progress report as a line: its text, "40%", else its JSON
    if (typeof payload === "string") return payload;
    if (!payload || typeof payload !== "object" || Array.isArray(payload) || typeof payload.percent !== "number") {
      return JSON.stringify(payload);
    }
    const rest = Object.entries(payload).filter(([key]) => key !== "percent")
      .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
    return [`${Math.round(payload.percent)}%`, ...rest].join(" · ");
  }

  function tree(value, depth) {
    if (value === null || typeof value !== "object") {
      const multiline = typeof value === "string" && value.includes("\n");
      return el("span", { class: `json ${value === null ? "null" : typeof value}${multiline ? " text-result" : ""}`,
                          text: multiline ? value : JSON.stringify(value) });
    }
    const compact = JSON.stringify(value);
    if (compact.length <= 60) return el("span", { class: "json", text: compact }); // short: one line
    const list = Array.isArray(value);
    const entries = list ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    if (!entries.length) return el("span", { class: "json", text: list ? "[]" : "{}" });
    const count = list ? `${entries.length} item${entries.length === 1 ? "" : "s"}` : `${entries.length} key${entries.length === 1 ? "" : "s"}`;
    const folded = el("details", { class: "json-tree" }, el("summary", { text: list ? `[ ${count} ]` : `{ ${count} }` }),
      el("ul", {}, ...entries.map(([key, child]) => el("li", {},
        el("span", { class: "json-key", text: `${key}: ` }), tree(child, depth + 1)))));
    folded.open = depth < 2 && compact.length < 2000; // big or deep parts start folded
    return folded;
  }

  // ------------------------------------------------------------ a session

  function signature(call) {
    const args = Object.entries(call.tool_input || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return `${call.tool_name}(${args.join(", ")})`;
  }

  // ------------------------------------------------------------ times in words

  // As agentos/_ui/durations.py says them, so every front end tells times alike.
  function duration(seconds) { // "0.4 s", "12 s", "1 min 40 s", "2 h 5 min", "3 d 4 h"
    if (seconds < 9.95) return `${Math.max(0, seconds).toFixed(1)} s`;
    const two = (big, small, bigUnit, smallUnit) => small ? `${big} ${bigUnit} ${small} ${smallUnit}` : `${big} ${bigUnit}`;
    const whole = Math.round(seconds);
    if (whole < 60) return `${whole} s`;
    if (whole < 3600) return two(Math.floor(whole / 60), whole % 60, "min", "s");
    const minutes = Math.round(whole / 60);
    if (minutes < 24 * 60) return two(Math.floor(minutes / 60), minutes % 60, "h", "min");
    const hours = Math.round(whole / 3600);
    return two(Math.floor(hours / 24), hours % 24, "d", "h");
  }

  function about(seconds) { // an estimate, rounded as one is said: "about 8 s", "about 2 min"
    const steps = [[10, 1], [60, 5], [600, 10], [3600, 60]];
    const step = (steps.find(([below]) => seconds < below) || [0, 300])[1];
    const rounded = Math.max(step, Math.round(seconds / step) * step);
    return rounded < 10 ? `about ${rounded} s` : `about ${duration(rounded)}`;
  }

  function elapsed(c, seconds) { // the row's clock: "12 s", "1 min 40 s of about 2 min"
    const expected = c.expected_seconds ? ` of ${about(c.expected_seconds)}` : "";
    return `${duration(seconds)}${expected}`;
  }

  // The details' clock, as the terminal UI's says it: "running for 12 s · expected 2 min ·
  // about 1 min 50 s left" (by the call's pace when it reports a percent, else the estimate).
  function timing(c, seconds, forgotten = false) {
    const expected = c.expected_seconds;
    const parts = [];
    if (c.status === "orphaned") parts.push("not known: the call was lost when the process running it stopped");
    else if (seconds === null || seconds === undefined) {
      parts.push(forgotten ? "not known: the runtime no longer holds this call" :
                 c.final ? "never started" : "not started yet");
    } else parts.push(`${c.final ? "ran" : "running"} for ${duration(seconds)}`);
    if (expected) parts.push(`expected ${duration(expected)}`);
    if (!c.final && seconds !== null && seconds !== undefined) parts.push(left(seconds, c.percent, expected));
    return parts.filter(Boolean).join(" · ");
  }

  function left(seconds, percent, expected) { // what is left of a running call, if anything says
    if (typeof percent === "number" && percent > 0 && percent < 100 && seconds > 0) {
      return `${about(seconds * (100 - percent) / percent)} left at this pace`;
    }
    if (!expected) return "";
    return seconds <= expected ? `${about(expected - seconds)} left` : `${duration(seconds - expected)} past the estimate`;
  }

  function sessionPage() {
    const sessionId = decodeURIComponent(location.pathname.split("/").pop());
    document.getElementById("back").setAttribute("href", url("/"));
    const state = { title: "", chat: [], calls: {}, status: "", status_note: null, context: "", errors: [], streaming: null,
                    view: "transcript", access: { open: false, holder: null, here: "", changed_at: null }, takingOver: false,
                    confirming: null, details: new Map(), replyTo: null, raw: false, loaded: false };
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
      if (c.child) row.append(childChat(c));
      if (shown) row.append(details(c, state.details.get(c.call_id)));
      return row;
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

    function details(c, open) {
      const box = el("div", { class: "details", "data-details": c.call_id });
      const seen = open.seen;
      if (!seen) {
        box.append(el("p", { class: "placeholder", text: open.failed ? `Could not look: ${open.failed}` : "Looking…" }));
        return box;
      }
      const input = Object.fromEntries(Object.entries(seen.tool_input || {}).filter(([k]) => k !== "expected_seconds"));
      const facts = el("dl", { class: "facts" });
      const fact = (name, ...value) => facts.append(el("dt", { text: name }),
        el("dd", { "data-fact": name.toLowerCase().replace(/ /g, "-") }, ...value));
      fact("Input", Object.keys(input).length ? fields(input) : el("span", { class: "placeholder", text: "no arguments" }));
      const since = seen.forgotten || c.final ? undefined : c._since ?? open.since;
      const seconds = seen.forgotten ? null :
        since !== undefined ? performance.now() / 1000 - since : c.elapsed ?? seen.elapsed;
      fact("Time", el("span", { class: "timing", "data-since": since === undefined ? "" : String(since),
                                text: timing(c, seconds, Boolean(seen.forgotten)) }));
      if (!c.final && c.percent !== null && c.percent !== undefined) {
        fact("Progress", el("progress", { max: "100", value: String(c.percent) }),
             el("span", { class: "percent", text: ` ${Math.round(c.percent)}%` }));
      }
      const reports = seen.progress.filter((entry) => entry.kind !== "started" && entry.kind !== "heartbeat");
      const lines = reports.slice(-LOG_LINES);
      if (lines.length) {
        const earlier = reports.length - lines.length + (seen.progress_dropped || 0);
        fact(c.final ? "Last reports" : "Newest reports", el("ol", { class: "lines" },
          ...(earlier > 0 ? [el("li", { class: "placeholder", text: `${earlier} earlier not shown` })] : []),
          ...lines.map((entry) => el("li", {},
            el("span", { class: "after", text: entry.after === null || entry.after === undefined ? "" : `at ${duration(entry.after)}` }),
            el("span", { class: "line", text: report(entry.payload) })))));
      }
      if (c.status === "orphaned" || seen.status === "orphaned") { // it never ended: it was lost
        fact("Outcome", el("div", { text: "Not known: no process runs this call any more. It was lost when " +
                                          "the process running it stopped, so no result will come." }));
      } else if (seen.forgotten) {
        fact("Kept", el("div", { text: "This call ended a while ago: its progress and result are no longer " +
                                       "kept. The chat shows what came of it." }));
      } else if (seen.status === "completed") fact("Result", readable(seen.result));
      if (seen.error && seen.status !== "cancelled") fact("Error", el("div", { class: "error-text", text: seen.error }));
      if (seen.status === "cancelled") fact("Cancelled", el("div", { text: seen.cancel_reason || "cancelled" }));
      box.append(facts);
      const raw = el("button", { type: "button", class: "raw-toggle quiet", "aria-pressed": String(open.raw),
                                 text: open.raw ? "hide raw JSON" : "raw JSON" });
      raw.addEventListener("click", () => { open.raw = !open.raw; drawCall(c.call_id); });
      box.append(raw);
      if (open.raw) box.append(el("pre", { class: "raw", text: JSON.stringify(seen, null, 2) }));
      return box;
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
      const row = widget(callId);
      if (old && row) old.replaceWith(row); else drawChat();
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
        state.calls[data.call.call_id] = anchored(data.call);
        drawCall(data.call.call_id);
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

  return { listPage, sessionPage, duration, about, timing };
})();

// The page says which it is (no inline script: the Content-Security-Policy allows none).
(agentos[`${document.currentScript.dataset.page}Page`] || (() => {}))();
