// The page: threads, people, replies and questions drawn as Welt draws them in Slack.
// Every rule about the wire is welt.js's; this file only draws and sends.

import * as welt from "/welt.js";

const $ = (selector, root = document) => root.querySelector(selector);
const SESSION = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id";
const USER = "X-Amzn-Bedrock-AgentCore-Runtime-User-Id";
const SCENES = ["gate", "restricted", "approvers", "choice", "two questions", "unmatched", "file", "draft", "connect", "fail"];

const state = { config: null, names: {}, threads: [], current: null, answered: 0, pendingFiles: [], newThreads: 0 };

function element(tag, attributes = {}, ...children) {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "text") made.textContent = value;
    else if (name === "html") made.innerHTML = value;
    else made.setAttribute(name, value);
  }
  made.append(...children.filter((child) => child !== null && child !== undefined));
  return made;
}

// Like Slack, the thread follows what is new.
const scrollDown = () => {
  const history = $("#history");
  history.scrollTop = history.scrollHeight;
};
const person = () => state.config.people[Number($("#person").value)];
const initial = (name) => name.slice(0, 1).toUpperCase();
const note = (text) => element("div", { class: "playground-note", text });
// Any text the page shows goes through this, as Slack renders every message: mentions by
// the cast's names, shortcodes as emoji.
const mrkdwn = (text) => welt.markdown(text, state.names);

function message(who, role, agent = false) {
  const body = element("div", { class: "body" }, element("div", { class: "who", text: who }, role ? element("small", { text: role }) : null));
  const row = element("div", { class: agent ? "message agent-message" : "message user-message" }, element("div", { class: agent ? "avatar agent" : "avatar", text: agent ? "A" : initial(who) }), body);
  state.current.view.append(row);
  scrollDown();
  return body;
}

// --- threads -------------------------------------------------------------------------

// A Slack thread begins with its first message, so a thread with none yet is only a place
// to write: New thread goes back to that one rather than listing another empty one.
function newThread() {
  const waiting = state.threads.find((each) => each.entries.length === 0);
  if (waiting) {
    show(waiting);
    return waiting;
  }
  const ts = welt.threadTs(Date.now(), state.newThreads++ * 1000 + Math.floor(Math.random() * 1000));
  const thread = {
    ts,
    session: welt.sessionId(state.config.team, state.config.channel, ts),
    entries: [],
    requests: [],
    view: element("div", { class: "thread-view", "data-session": "" }),
    item: element("li", { text: "New thread" }),
  };
  thread.view.dataset.session = thread.session;
  thread.item.addEventListener("click", () => show(thread));
  state.threads.push(thread);
  $("#history").append(thread.view);
  $("#thread-list").prepend(thread.item);
  show(thread);
  return thread;
}

function show(thread) {
  state.current = thread;
  for (const each of state.threads) {
    each.view.hidden = each !== thread;
    each.item.classList.toggle("current", each === thread);
  }
  drawWire();
  $("#message").focus();
}

// --- the wire ------------------------------------------------------------------------

function shortened(payload) {
  return JSON.stringify(payload, (key, value) => (key === "bytes" && typeof value === "string" && value.length > 60 ? `${value.slice(0, 40)}… (${value.length} characters of base64)` : value), 2);
}

function drawWire() {
  const log = $("#wire-log");
  log.replaceChildren(...state.current.requests.map((request) => request.item));
}

function wireEntry(thread, payload, userId) {
  const headers = { [SESSION]: thread.session, ...(userId ? { [USER]: userId } : {}) };
  const events = element("div", { class: "events" });
  const item = element(
    "li",
    { class: "request" },
    element("strong", { text: `POST /invocations — ${"interrupt_responses" in payload ? "a resume" : "a turn"}` }),
    element("pre", { class: "headers", text: Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join("\n") }),
    element("pre", { class: "payload", text: shortened(payload) }),
    events,
  );
  const entry = { item, events, headers };
  thread.requests.push(entry);
  if (thread === state.current) $("#wire-log").append(item);
  return entry;
}

// POST one payload as Welt would; `sink(event)` sees each event as it arrives.
async function invoke(thread, payload, userId, sink) {
  const entry = wireEntry(thread, payload, userId);
  const events = [];
  let response;
  try {
    response = await fetch("/invocations", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...entry.headers },
      body: JSON.stringify(payload),
    });
  } catch (failed) {
    response = null;
    entry.events.append(element("pre", { class: "event", text: `no answer: ${failed}` }));
  }
  if (response && !response.ok) {
    const said = await response.text();
    entry.events.append(element("pre", { class: "event", text: `HTTP ${response.status}: ${said}` }));
    return { events, status: response.status, said };
  }
  if (!response) return { events, status: 0, said: "the playground did not answer" };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const parsed = welt.sseEvents(buffer + value);
    buffer = parsed.rest;
    for (const event of parsed.events) {
      events.push(event);
      entry.events.append(element("pre", { class: "event", text: shortened(event) }));
      sink(event);
    }
  }
  return { events, status: response.status, said: "" };
}

// --- a reply, drawn as it streams -----------------------------------------------------

function reply(thread) {
  const body = message(state.config.rehearsal ? "Agent (rehearsal)" : "Agent", "app", true);
  const text = element("div", { class: "text" });
  body.append(text);
  const drawn = { body, text, markdown: "", tools: new Map(), running: null, interrupts: [], failed: null, shown: 0 };
  drawn.sink = (event) => draw(drawn, event);
  return drawn;
}

function closeRunning(drawn, status = "success") {
  if (drawn.running) drawn.running.dataset.status = status;
  drawn.running = null;
}

function draw(drawn, event) {
  const what = welt.rendered(event);
  if (what === null) return;
  drawn.shown += 1;
  if (what.kind === "text") {
    closeRunning(drawn);
    drawn.markdown += what.text;
    if (what.text.includes("Rehearsal mode: no model is in use")) showScenes();
    const block = drawn.body.lastElementChild?.classList.contains("text") ? drawn.body.lastElementChild : drawn.body.appendChild(element("div", { class: "text" }));
    block.dataset.markdown = (block.dataset.markdown || "") + what.text;
    block.innerHTML = mrkdwn(block.dataset.markdown);
  } else if (what.kind === "tool") {
    if (drawn.running && drawn.running.dataset.id === what.id) return;
    closeRunning(drawn);
    const tool = element("div", { class: "tool", "data-status": "running", "data-id": what.id ?? "", text: `${what.name ?? "a tool"}` });
    drawn.tools.set(what.id, tool);
    drawn.running = tool;
    drawn.body.append(tool);
  } else if (what.kind === "tool_result") {
    const tool = drawn.tools.get(what.id);
    if (tool) tool.dataset.status = what.failed ? "error" : "success";
    if (drawn.running === tool) drawn.running = null;
  } else if (what.kind === "file") {
    closeRunning(drawn);
    drawn.body.append(fileElement(what.name, what.bytes));
  } else if (what.kind === "interrupt") {
    drawn.interrupts.push(what.interrupt);
  } else if (what.kind === "error") {
    drawn.failed = what.message;
  }
  scrollDown();
}

function fileElement(name, base64) {
  const bytes = Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
  const type = welt.imageType(name) || "application/octet-stream";
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const link = element("a", { href: url, download: name, text: name });
  const size = element("small", { text: ` ${bytes.length.toLocaleString()} bytes` });
  const preview = welt.imageType(name) ? element("img", { src: url, alt: name }) : null;
  return element("div", { class: "file" }, link, size, preview);
}

// Welt closes the running indicator when the stream ends, so a call that stopped for a
// question reads "done" while it waits on the answer. The page keeps that, as Slack shows
// it, and says so beside the indicator until the stop's questions are answered.
function explainWaiting(drawn, events) {
  const waiting = welt.waitingCalls(events).map((id) => drawn.tools.get(id)).filter(Boolean);
  if (!waiting.length) return null;
  const why = waiting.length === 1
    ? "Welt marks the indicator done when the reply ends; the call still waits on the question below."
    : "Welt marks the indicators done when the reply ends; the calls still wait on the questions below.";
  for (const tool of waiting) tool.title = why;
  const hint = element("div", { class: "playground-note waiting-hint", text: why });
  waiting[waiting.length - 1].after(hint);
  return { tools: waiting, hint };
}

function clearWaiting(explained) {
  if (!explained) return;
  explained.hint.remove();
  for (const tool of explained.tools) tool.removeAttribute("title");
}

// After the stream: Welt's failure notice, an empty reply gone, the stop's questions posted.
function finish(thread, drawn, result) {
  closeRunning(drawn);
  if (result.status !== 200) {
    drawn.body.append(element("div", { class: "notice", html: mrkdwn(welt.REPLY_FAILURE) }), note(`the playground could not reach the agent: ${result.said}`));
  } else if (drawn.failed !== null) {
    drawn.body.append(element("div", { class: "notice failure", html: mrkdwn(welt.REPLY_FAILURE) }), note(`the agent's error event said: ${drawn.failed}`));
  }
  if (drawn.markdown.trim()) thread.entries.push({ role: "assistant", text: drawn.markdown });
  const empty = !drawn.markdown && drawn.tools.size === 0 && !drawn.body.querySelector(".file, .notice");
  if (empty) drawn.body.parentElement.remove();
  if (drawn.interrupts.length) askAll(thread, drawn.interrupts, explainWaiting(drawn, result.events));
}

// --- a turn ----------------------------------------------------------------------------

async function send(text, files) {
  const thread = state.current;
  const speaker = person();
  if (!thread.entries.length) thread.item.textContent = text || files.map((file) => file.name).join(", ") || "(empty)";
  const entry = { role: "user", userId: speaker.id, text, files };
  thread.entries.push(entry);
  const body = message(speaker.name, speaker.role);
  body.append(element("div", { class: "text", html: mrkdwn(text) }));
  for (const file of files) body.append(element("div", { class: "file attached", text: `Attached ${file.name} (${file.size.toLocaleString()} bytes)` }));
  const { messages, unsent } = welt.turnPayload(thread.entries, state.config.keepsHistory, state.config.modalities);
  for (const file of unsent.filter((each) => files.includes(each))) {
    body.append(element("div", { class: "unsent", text: `Welt would not send ${file.name}: ${welt.fileProblem(file, state.config.modalities) || "no slot left for it in this request"}` }));
  }
  const drawn = reply(thread);
  const result = await invoke(thread, { messages }, speaker.id, drawn.sink);
  finish(thread, drawn, result);
}

// --- questions ---------------------------------------------------------------------------

// One stop: its questions, where they are drawn, and the indicators waiting on them.
function askAll(thread, interrupts, waiting) {
  const body = message("Agent", "asks", true);
  body.parentElement.classList.add("stop");
  const stop = { thread, questions: welt.stop(interrupts), body, waiting };
  for (const asked of stop.questions) body.append(questionElement(stop, asked));
  scrollDown();
}

function questionElement(stop, asked) {
  const box = element("div", { class: "question", "data-id": asked.id, "data-name": asked.name });
  box.append(element("div", { class: "text", html: mrkdwn(asked.text) }));
  if (asked.fellBack) box.append(note(asked.fellBack));
  const widgets = element("div", { class: "widgets" });
  const answer = (value, source, shownAs) => {
    const who = person();
    asked.answer = { value, source, userId: who.id, name: who.name, at: ++state.answered };
    widgets.replaceWith(element("div", { class: "receipt", text: welt.receipt(shownAs, who.name) }));
    resumeIfAnswered(stop);
  };
  if (asked.buttons.length) {
    const row = element("div", { class: "buttons" });
    for (const button of asked.buttons) {
      const pressed = element("button", { type: "button", class: button.style || "plain", text: button.label });
      pressed.addEventListener("click", () => answer(button.value, "option", button.label));
      row.append(pressed);
    }
    widgets.append(row);
  }
  if (asked.input) {
    const id = `field-${asked.id.replace(/[^A-Za-z0-9]/g, "-")}`;
    const field = asked.input.multiline ? element("textarea", { id, rows: "3" }) : element("input", { id, type: "text" });
    field.addEventListener("keydown", (event) => {
      const submits = event.key === "Enter" && (!asked.input.multiline || event.ctrlKey || event.metaKey);
      if (!submits) return;
      event.preventDefault();
      if (field.value !== "") answer(field.value, "input", field.value);
    });
    const hint = asked.input.multiline ? "Ctrl+Enter sends" : "Enter sends";
    widgets.append(element("div", { class: "field" }, element("label", { for: id, text: asked.input.label }), field, element("small", { text: hint })));
  }
  box.append(widgets);
  return box;
}

async function resumeIfAnswered(stop) {
  const resume = welt.resume(stop.questions);
  if (resume === null) return;
  clearWaiting(stop.waiting);
  const drawn = reply(stop.thread);
  const result = await invoke(stop.thread, resume.payload, resume.userId, drawn.sink);
  if (result.status === 200 && welt.resumeFailed(result.events)) {
    drawn.body.parentElement.remove();
    stop.body.append(element("div", { class: "notice resume-failed", html: mrkdwn(welt.RESUME_FAILURE) }));
    const error = result.events.find((event) => "error" in event);
    stop.body.append(note(error ? `the agent's error event said: ${error.error}` : "the resume sent no events"));
    return;
  }
  finish(stop.thread, drawn, result);
}

// --- the composer ------------------------------------------------------------------------

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({ name: file.name, type: file.type, size: file.size, base64: String(reader.result).split(",", 2)[1] || "" });
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

function drawAttached() {
  $("#attached").textContent = state.pendingFiles.length ? `Attached: ${state.pendingFiles.map((file) => file.name).join(", ")}` : "";
}

function submit(text) {
  const files = state.pendingFiles;
  state.pendingFiles = [];
  drawAttached();
  if (!text.trim() && !files.length) return;
  send(text, files);
}

// Rehearsal's scenes, one click each: shown when the playground started the rehearsal, or
// once a reply says rehearsal is what answers.
function showScenes() {
  const scenes = $("#scenes");
  if (!scenes.hidden) return;
  scenes.hidden = false;
  scenes.append(element("span", { class: "hint", text: "Try: " }));
  for (const scene of SCENES) {
    const chip = element("button", { type: "button", text: scene });
    chip.addEventListener("click", () => submit(scene));
    scenes.append(chip);
  }
}

async function start() {
  state.config = await (await fetch("/config")).json();
  const config = state.config;
  config.keepsHistory = config.keeps_history;
  state.names = welt.displayNames(config.people);
  $("#person").append(...config.people.map((each, index) => element("option", { value: String(index), text: `${each.name} — ${each.role}` })));
  const status = $("#agent");
  const answered = (await fetch("/agent/ping")).ok;
  status.textContent = `${answered ? "agent answering" : `no agent answers at ${config.agent}`}${config.rehearsal ? " · rehearsal: no model" : ""}${config.keepsHistory ? " · keeps its own history" : ""}`;
  status.title = config.agent;
  status.classList.toggle("down", !answered);
  if (config.rehearsal) showScenes();
  $("#new-thread").addEventListener("click", () => newThread());
  $("#wire-toggle").addEventListener("click", (event) => {
    const wire = $("#wire");
    wire.hidden = !wire.hidden;
    event.target.setAttribute("aria-pressed", String(!wire.hidden));
  });
  $("#files").addEventListener("change", async (event) => {
    state.pendingFiles.push(...(await Promise.all([...event.target.files].map(readFile))));
    event.target.value = "";
    drawAttached();
  });
  $("#composer").addEventListener("submit", (event) => {
    event.preventDefault();
    submit($("#message").value);
    $("#message").value = "";
  });
  $("#message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("#composer").requestSubmit();
    }
  });
  newThread();
  document.body.dataset.ready = "true";
}

start();
