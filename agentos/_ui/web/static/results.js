// What a call gave, as a person reads it: results (text as text, images drawn, JSON as a
// tree that folds), progress reports as lines, and a call's details under its row.
"use strict";

Object.assign(agentos, (() => {
  const { el, duration, timing } = agentos;

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

  function signature(call) {
    const args = Object.entries(call.tool_input || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return `${call.tool_name}(${args.join(", ")})`;
  }

  // A call's details under its row, in words: what the page knows of it (c) and what its
  // last look said (open.seen); redraw() draws the call again (its raw JSON toggled).
  function callDetails(c, open, redraw) {
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
    raw.addEventListener("click", () => { open.raw = !open.raw; redraw(); });
    box.append(raw);
    if (open.raw) box.append(el("pre", { class: "raw", text: JSON.stringify(seen, null, 2) }));
    return box;
  }

  return { readable, fields, report, signature, callDetails };
})());
