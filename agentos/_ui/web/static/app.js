// agentos's pages: what every page uses (its requests, the lost-contact banner, making
// elements). Every value from the server goes into the DOM as text (textContent,
// attributes set one by one), never as markup. The other scripts add to `agentos`:
// words.js (times in words), results.js (a call's result and details), then the page's
// own, list.js or session.js, which starts it (no inline script: the Content-Security-Policy
// allows none).
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

  const RETRY_MS = 2000; // how often a page tries again while the server does not answer

  return { url, call, Unreachable, lost, el, showError, RETRY_MS };
})();
