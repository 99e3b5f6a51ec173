// A call's question to the person (an MCP server's elicitation, a tool's ctx.ask): who asks,
// its message, and a form built from its JSON Schema (or a link to open), with Accept,
// Decline and Dismiss (the answer "cancel"). The message and the schema come from a tool or a server: every word
// goes in as text, and only an http(s) address becomes a link, never followed by itself.
"use strict";

Object.assign(agentos, (() => {
  const { el } = agentos;
  let made = 0; // ids that tie each label to its field

  // The question's box; `send(answer)` posts it and resolves to the server's `{answered}`.
  // `open` false: the session runs elsewhere, so the box says what is asked, not a form.
  function questionBox(c, open, send) {
    const q = c.question;
    const box = el("form", { class: "question", "aria-label": `${asker(c)} asks you` });
    box.append(el("p", { class: "asker", text: `${asker(c)} asks:` }),
               el("p", { class: "question-text", text: q.message || "(no message)" }));
    if (q.url) box.append(link(q.url));
    const fields = q.form ? formFields(q.form) : [];
    if (fields.some((f) => f.required)) box.append(el("p", { class: "hint", text: "* required" }));
    box.append(...fields.map((f) => f.node));
    if (!open) {
      box.append(el("p", { class: "hint", text: "This page only reads this session: it cannot send an answer." }));
      for (const control of box.querySelectorAll("input, select")) control.disabled = true;
      return box;
    }
    const said = el("p", { class: "question-status", role: "status" });
    const accept = el("button", { type: "submit", class: "accept", text: "Accept" });
    const decline = el("button", { type: "button", class: "decline", text: "Decline" });
    const cancel = el("button", { type: "button", class: "dismiss", text: "Dismiss",
                                  title: "Answer nothing (the asker hears: cancel); the call goes on" });
    const buttons = [accept, decline, cancel];
    box.append(el("p", { class: "question-actions" }, ...buttons), said);

    async function answer(body) {
      buttons.forEach((b) => { b.disabled = true; });
      said.className = "question-status";
      said.textContent = "Sending…";
      try {
        const { answered } = await send(body);
        said.textContent = answered ? "Sent: the call goes on with your answer." :
          "This question is no longer asked: it was answered already, or the call ended.";
      } catch (error) {
        said.className = "question-status error";
        said.textContent = String(error.message || error);
        buttons.forEach((b) => { b.disabled = false; });
      }
    }
    box.addEventListener("submit", (event) => { // Accept, or Enter in a field
      event.preventDefault();
      if (!box.reportValidity()) return;
      const content = {};
      for (const f of fields) {
        const value = f.read();
        if (value !== undefined) content[f.name] = value;
      }
      answer(q.form ? { action: "accept", content } : { action: "accept" });
    });
    decline.addEventListener("click", () => answer({ action: "decline" }));
    cancel.addEventListener("click", () => answer({ action: "cancel" }));
    return box;
  }

  function asker(c) { return c.question.source || c.tool_name; }

  function link(address) { // a page the asker wants opened: by the person's click alone
    let web = null;
    try { web = new URL(address); } catch (error) { web = null; }
    if (!web || (web.protocol !== "https:" && web.protocol !== "http:")) {
      return el("p", { class: "question-url" }, "It gives an address that is not a web page (not opened): ",
                el("code", { text: address }));
    }
    return el("p", { class: "question-url" }, "Open: ",
      el("a", { href: web.href, target: "_blank", rel: "noopener noreferrer", text: web.href }));
  }

  function formFields(form) { // flat fields, in the schema's order
    const properties = form.properties && typeof form.properties === "object" && !Array.isArray(form.properties)
      ? form.properties : {};
    const required = new Set(Array.isArray(form.required) ? form.required : []);
    return Object.entries(properties).map(([name, schema]) =>
      formField(name, schema && typeof schema === "object" ? schema : {}, required.has(name)));
  }

  function formField(name, schema, required) {
    const id = `question-field-${++made}`;
    const title = typeof schema.title === "string" && schema.title ? schema.title : name;
    const group = schema.type === "array"; // checkboxes: the title names the group
    const label = group ? el("span", { class: "label", id: `${id}-label`, text: title })
      : el("label", { for: id, text: title });
    if (required) label.append(el("span", { class: "required", "aria-hidden": "true", text: " *" }));
    const hint = typeof schema.description === "string" && schema.description
      ? el("span", { class: "hint", id: `${id}-hint`, text: schema.description }) : null;
    const { control, read } = controlFor(schema, id, required);
    if (hint) control.setAttribute("aria-describedby", hint.id);
    const node = schema.type === "boolean"
      ? el("div", { class: "field check" }, control, label, hint)
      : el("div", { class: "field" }, label, hint, control);
    return { name, required, node, read };
  }

  function controlFor(schema, id, required) {
    const choices = choicesOf(schema);
    if (schema.type === "boolean") {
      const box = el("input", { type: "checkbox", id, name: id });
      box.checked = schema.default === true;
      return { control: box, read: () => box.checked };
    }
    if (schema.type === "array") return many(schema, id);
    if (choices) {
      const select = el("select", { id, name: id },
        el("option", { value: "", text: required ? "Choose…" : "(none)" }),
        ...choices.map(([, shown], i) => el("option", { value: String(i), text: shown })));
      select.required = required;
      const chosen = choices.findIndex(([value]) => value === schema.default);
      if (chosen >= 0) select.value = String(chosen);
      return { control: select, read: () => (select.value === "" ? undefined : choices[Number(select.value)][0]) };
    }
    const numeric = schema.type === "number" || schema.type === "integer";
    const kinds = { email: "email", uri: "url", date: "date" };
    const input = el("input", { id, name: id, autocomplete: "off",
                                type: numeric ? "number" : kinds[schema.format] || "text" });
    input.required = required;
    if (numeric) input.step = schema.type === "integer" ? "1" : "any";
    for (const [key, attribute] of [["minimum", "min"], ["maximum", "max"], ["minLength", "minlength"], ["maxLength", "maxlength"]]) {
      if (typeof schema[key] === "number") input.setAttribute(attribute, String(schema[key]));
    }
    if (schema.default !== undefined && schema.default !== null) input.value = String(schema.default);
    const read = () => {
      if (input.value === "") return undefined; // left empty: not answered
      return numeric ? Number(input.value) : input.value;
    };
    return { control: input, read };
  }

  function many(schema, id) { // a list of choices: a checkbox each
    const choices = choicesOf(schema.items && typeof schema.items === "object" ? schema.items : {}) || [];
    const picked = Array.isArray(schema.default) ? schema.default : [];
    const boxes = choices.map(([value, shown], i) => {
      const box = el("input", { type: "checkbox", id: `${id}-${i}`, name: id });
      box.checked = picked.includes(value);
      return { value, box, node: el("label", { class: "choice" }, box, ` ${shown}`) };
    });
    const group = el("span", { class: "choices", id, role: "group", "aria-labelledby": `${id}-label` },
      ...boxes.map((b) => b.node));
    return { control: group, read: () => boxes.filter((b) => b.box.checked).map((b) => b.value) };
  }

  function choicesOf(schema) { // [value, what it is called] for each choice, or null
    if (Array.isArray(schema.enum)) {
      const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
      return schema.enum.map((value, i) => [value, String(names[i] ?? value)]);
    }
    const options = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
    if (!options) return null;
    return options.filter((o) => o && typeof o === "object" && "const" in o)
      .map((o) => [o.const, String(o.title ?? o.const)]);
  }

  return { questionBox };
})());
