// What Welt does with the wire, for the playground's page: no DOM here, so node can test it.
//
// Each rule follows Welt's own (its wire contract and its interrupt, file
// and message logic, v0.8 to v0.10): how a question's reason renders, and
// when it falls back to the default buttons; the session id of a thread;
// what a turn sends (the whole thread, or what follows Welt's last reply);
// how files are encoded and bounded; what a resume carries; how Slack shows
// a text (mentions by name, emoji shortcodes). The page adds what Slack
// never shows: why a reason fell back, and which calls read done while
// they wait on a question.

export const MAX_BUTTONS = 25;
export const MAX_OPTION_VALUE = 1800;
export const MARKDOWN_BUDGET = 12000;
export const BUTTON_LABEL_MAX = 75;
export const INPUT_LABEL_MAX = 2000;
export const SESSION_ID_MIN = 33;

export const REPLY_FAILURE = ":warning: Failed to reply. Please check the app logs.";
export const RESUME_FAILURE =
  ":warning: Could not resume the agent. The approval may have expired or already been " +
  "answered — ask again if needed.";

const APPROVE = { value: true, label: "Approve", style: "primary" };
const REJECT = { value: false, label: "Reject", style: "danger" };
export const DEFAULT_BUTTONS = [APPROVE, REJECT];
const REASON_KEYS = ["message", "approve", "reject", "options", "input"];
const OPTION_KEYS = ["value", "label", "style"];
const DECISION_KEYS = ["label", "style"];
const INPUT_KEYS = ["label", "multiline"];
const STYLES = ["primary", "danger"];

// Python's len(): code points, not UTF-16 units.
const length = (text) => Array.from(text).length;

export function clip(text, limit) {
  const points = Array.from(text);
  return points.length <= limit ? text : points.slice(0, limit - 1).join("") + "…";
}

// JSON as Python's json.dumps(value, ensure_ascii=False, separators=(",", ":")) writes it.
export function compactJson(value) {
  return JSON.stringify(value);
}

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const unknownKey = (spec, allowed) => Object.keys(spec).find((key) => !allowed.includes(key));
const shown = (value) => JSON.stringify(value);

function decision(spec, fallback, key) {
  if (!isObject(spec)) return [null, `"${key}" must be an object`];
  const extra = unknownKey(spec, DECISION_KEYS);
  if (extra !== undefined) return [null, `"${key}" has a key Welt does not know: "${extra}"`];
  const label = "label" in spec ? spec.label : fallback.label;
  if (typeof label !== "string" || label === "") {
    return [null, `"${key}.label" must be a non-empty string, not ${shown(spec.label)}`];
  }
  let style = fallback.style;
  if ("style" in spec) {
    if (!STYLES.includes(spec.style)) {
      return [null, `"${key}.style" must be "primary" or "danger", not ${shown(spec.style)}`];
    }
    style = spec.style;
  }
  return [{ value: fallback.value, label, style }, null];
}

function options(list) {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BUTTONS) {
    const count = Array.isArray(list) ? `${list.length} options` : shown(list);
    return [null, `"options" must be a list of 1 to ${MAX_BUTTONS} buttons, not ${count}`];
  }
  const parsed = [];
  for (const [index, option] of list.entries()) {
    const where = `options[${index}]`;
    if (!isObject(option)) return [null, `"${where}" must be an object`];
    const extra = unknownKey(option, OPTION_KEYS);
    if (extra !== undefined) return [null, `"${where}" has a key Welt does not know: "${extra}"`];
    if (!("value" in option)) return [null, `"${where}" has no "value"`];
    const json = compactJson(option.value);
    if (length(json) > MAX_OPTION_VALUE) {
      return [null, `"${where}.value" is ${length(json)} characters of JSON; Welt takes at most ${MAX_OPTION_VALUE}`];
    }
    const label = "label" in option ? option.label : typeof option.value === "string" ? option.value : json;
    if (typeof label !== "string" || label === "") {
      return [null, `"${where}.label" must be a non-empty string, not ${shown(label)}`];
    }
    let style = null;
    if ("style" in option) {
      if (!STYLES.includes(option.style)) {
        return [null, `"${where}.style" must be "primary" or "danger", not ${shown(option.style)}`];
      }
      style = option.style;
    }
    parsed.push({ value: option.value, label, style });
  }
  return [parsed, null];
}

function inputField(spec) {
  if (!isObject(spec)) return [null, `"input" must be an object`];
  const extra = unknownKey(spec, INPUT_KEYS);
  if (extra !== undefined) return [null, `"input" has a key Welt does not know: "${extra}"`];
  const label = "label" in spec ? spec.label : "Answer";
  if (typeof label !== "string" || label === "") {
    return [null, `"input.label" must be a non-empty string, not ${shown(spec.label)}`];
  }
  const multiline = "multiline" in spec ? spec.multiline : false;
  if (typeof multiline !== "boolean") {
    return [null, `"input.multiline" must be true or false, not ${shown(spec.multiline)}`];
  }
  return [{ label, multiline }, null];
}

// The structured reason, all or nothing: [question, null], or [null, why Welt would not match it].
function structured(reason, textLimit) {
  if (!isObject(reason)) return [null, "the reason is not an object"];
  if (!("message" in reason)) return [null, `the reason has no "message"`];
  const extra = unknownKey(reason, REASON_KEYS);
  if (extra !== undefined) return [null, `the reason has a key Welt does not know: "${extra}"`];
  if (typeof reason.message !== "string" || reason.message === "") {
    return [null, `"message" must be a non-empty string, not ${shown(reason.message)}`];
  }
  let input = null;
  if ("input" in reason) {
    const [field, why] = inputField(reason.input);
    if (why) return [null, why];
    input = field;
  }
  const decisions = [];
  for (const [key, fallback] of [["approve", APPROVE], ["reject", REJECT]]) {
    if (!(key in reason)) continue;
    const [button, why] = decision(reason[key], fallback, key);
    if (why) return [null, why];
    decisions.push(button);
  }
  let own = [];
  if ("options" in reason) {
    const [parsed, why] = options(reason.options);
    if (why) return [null, why];
    own = parsed;
  }
  const buttons = [...decisions, ...own];
  if (buttons.length > MAX_BUTTONS) {
    return [null, `${buttons.length} buttons: Welt renders at most ${MAX_BUTTONS}`];
  }
  const taken = decisions.map((button) => button.value);
  const clash = own.find((option) => typeof option.value === "boolean" && taken.includes(option.value));
  if (clash) {
    return [null, `an option answers ${clash.value}, as the ${clash.value ? "approve" : "reject"} button does`];
  }
  return [{ text: clip(reason.message, textLimit), buttons, input }, null];
}

function fenced(reason, textLimit) {
  const dumped = JSON.stringify(reason, null, 2) ?? "null";
  return "```\n" + clip(dumped, textLimit - "```\n\n```".length) + "\n```";
}

// How Welt renders one question: {text, buttons, input, fellBack}. fellBack says why
// a reason got Welt's default buttons (null when it rendered as it asked).
export function question(reason, textLimit = MARKDOWN_BUDGET) {
  let [rendered, why] = structured(reason, textLimit);
  if (rendered === null) {
    if (typeof reason === "string" && reason !== "") {
      rendered = { text: clip(reason, textLimit), buttons: [], input: null };
      why = "the reason is plain text, which Welt shows with its default buttons";
    } else {
      rendered = { text: fenced(reason, textLimit), buttons: [], input: null };
      why = `Welt did not match this reason (${why}), so it shows the reason as JSON with its default buttons and no text field`;
    }
  } else if (rendered.buttons.length === 0 && rendered.input === null) {
    why = "the reason declares no buttons and no text field, so Welt adds its default buttons";
  }
  if (rendered.buttons.length === 0 && rendered.input === null) {
    return { ...rendered, buttons: DEFAULT_BUTTONS, fellBack: why };
  }
  const buttons = rendered.buttons.map((button) => ({ ...button, label: clip(button.label, BUTTON_LABEL_MAX) }));
  const input = rendered.input && { ...rendered.input, label: clip(rendered.input.label, INPUT_LABEL_MAX) };
  return { ...rendered, buttons, input, fellBack: null };
}

// Every question of one stop, sharing Welt's Markdown budget evenly.
export function stop(interrupts) {
  const share = Math.floor(MARKDOWN_BUDGET / Math.max(interrupts.length, 1));
  return interrupts.map((interrupt) => ({
    id: interrupt.id,
    name: interrupt.name,
    ...question(interrupt.reason, share),
    answer: null,
  }));
}

// "answer" — answered by name: a button by its label, typed text as it was typed.
export function receipt(answerShown, name) {
  return `“${answerShown}” — answered by ${name}`;
}

// The resume Welt sends once every question of the stop is answered, and never before,
// with the identity of whoever answered last.
export function resume(questions) {
  if (questions.some((each) => each.answer === null)) return null;
  const responses = {};
  for (const each of questions) {
    responses[each.id] = { value: each.answer.value, source: each.answer.source };
  }
  const last = questions.reduce((latest, each) => (each.answer.at > latest.answer.at ? each : latest));
  return { payload: { interrupt_responses: responses }, userId: last.answer.userId };
}

// A resume that yields nothing, or whose first event is an error, failed: Welt puts
// its notice under the questions instead of a reply.
export function resumeFailed(events) {
  const shown = events.filter((event) => !(typeof event.data === "string" && event.data === ""));
  return shown.length === 0 || "error" in shown[0];
}

// A Slack thread's session id: slack_<team>_<channel>_<thread ts, its dot a dash>,
// padded with "_" to the 33 characters AgentCore requires.
export function sessionId(team, channel, threadTs) {
  return ["slack", team || "-", channel, threadTs.replace(".", "-")].join("_").padEnd(SESSION_ID_MIN, "_");
}

// A Slack timestamp for a new thread: seconds, a dot, six digits.
export function threadTs(milliseconds, counter = 0) {
  const seconds = Math.floor(milliseconds / 1000);
  const micros = ((milliseconds % 1000) * 1000 + counter) % 1000000;
  return `${seconds}.${String(micros).padStart(6, "0")}`;
}

export const userOf = (slackId) => (slackId ? slackId.split(":").pop() : "U0PLAYGND");
export const mention = (slackId) => `<@${userOf(slackId)}>`;

// Slack shows <@UBOB> as @ and the person's name; the page knows only its own cast, so
// that is the names it has. A person with no user id (Welt's local mode) is never mentioned.
export function displayNames(people) {
  return Object.fromEntries(people.filter((each) => each.id).map((each) => [userOf(each.id), each.name]));
}

// Each user text starts with its speaker's mention; an empty text keeps the mention alone.
export function userText(slackId, text) {
  return `${mention(slackId)}: ${text}`;
}

// Converse formats by MIME type; Welt's FILE_INPUT_MODALITIES picks the kinds it sends.
export const FORMATS = {
  "image/png": ["image", "png"],
  "image/jpeg": ["image", "jpeg"],
  "image/gif": ["image", "gif"],
  "image/webp": ["image", "webp"],
  "application/pdf": ["document", "pdf"],
  "text/csv": ["document", "csv"],
  "application/msword": ["document", "doc"],
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ["document", "docx"],
  "application/vnd.ms-excel": ["document", "xls"],
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ["document", "xlsx"],
  "text/html": ["document", "html"],
  "text/plain": ["document", "txt"],
  "text/markdown": ["document", "md"],
  "video/x-matroska": ["video", "mkv"],
  "video/quicktime": ["video", "mov"],
  "video/mp4": ["video", "mp4"],
  "video/webm": ["video", "webm"],
  "video/x-flv": ["video", "flv"],
  "video/mpeg": ["video", "mpeg"],
  "video/x-ms-wmv": ["video", "wmv"],
  "video/3gpp": ["video", "three_gp"],
};
// Converse's limits per request, most recent files first, and per file.
export const MAX_SLOTS = { image: 20, document: 5, video: 1 };
export const MAX_BYTES = { image: 3932160, document: 4718592, video: 19660800 };
export const DOCUMENT_NAME_MAX = 200;

// What Converse takes as a document's name; "report.pdf" becomes "report-pdf".
export function documentName(name) {
  let cleaned = (name || "").replace(/[^0-9A-Za-z\-()[\] ]/g, "-").replace(/\s+/g, " ").trim();
  cleaned = cleaned.slice(0, DOCUMENT_NAME_MAX).trim();
  return cleaned || "document";
}

function uniqueName(name, taken) {
  if (!taken.has(name)) return name;
  for (let counter = 2; ; counter += 1) {
    const suffix = ` (${counter})`;
    const candidate = name.slice(0, DOCUMENT_NAME_MAX - suffix.length).trim() + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

// Why Welt would not send this file, or null. A file: {name, type, size, base64}.
export function fileProblem(file, modalities) {
  const known = FORMATS[file.type];
  if (!known) return `Welt sends no file of type ${file.type || "unknown"}`;
  const [kind] = known;
  if (!modalities.includes(kind)) return `Welt's FILE_INPUT_MODALITIES leaves out ${kind} files`;
  if (file.size > MAX_BYTES[kind]) return `a ${kind} over ${MAX_BYTES[kind]} bytes is more than Converse takes`;
  return null;
}

// The messages a turn sends. A thread entry is {role: "user", userId, text, files} or
// {role: "assistant", text} (Welt's own reply, text only). With the agent keeping its own
// history, only what follows Welt's last reply; else the whole thread. Files fill their
// kind's slots newest first; documents go before the text, images and videos after it.
export function turnPayload(thread, keepsHistory, modalities) {
  let entries = thread.filter((entry) => entry.role === "user" || (entry.text || "").trim() !== "");
  while (entries.length && entries[0].role === "assistant") entries = entries.slice(1);
  while (entries.length && entries[entries.length - 1].role === "assistant") entries = entries.slice(0, -1);
  if (keepsHistory) {
    const last = entries.map((entry) => entry.role).lastIndexOf("assistant");
    entries = entries.slice(last + 1);
  }
  const used = { image: 0, document: 0, video: 0 };
  const sent = new Set();
  for (const entry of [...entries].reverse()) {
    for (const file of [...(entry.files || [])]) {
      if (entry.role !== "user" || fileProblem(file, modalities)) continue;
      const [kind] = FORMATS[file.type];
      if (used[kind] >= MAX_SLOTS[kind]) continue;
      used[kind] += 1;
      sent.add(file);
    }
  }
  const taken = new Set();
  const messages = entries.map((entry) => {
    if (entry.role === "assistant") return { role: "assistant", content: [{ text: entry.text }] };
    const documents = [];
    const media = [];
    for (const file of entry.files || []) {
      if (!sent.has(file)) continue;
      const [kind, format] = FORMATS[file.type];
      const source = { bytes: file.base64 };
      if (kind === "document") {
        const name = uniqueName(documentName(file.name), taken);
        taken.add(name);
        documents.push({ document: { format, name, source } });
      } else {
        media.push({ [kind]: { format, source } });
      }
    }
    return { role: "user", content: [...documents, { text: userText(entry.userId, entry.text) }, ...media] };
  });
  return { messages, unsent: thread.flatMap((entry) => (entry.files || []).filter((file) => !sent.has(file))) };
}

// Server-sent events: complete `data:` lines out of what has arrived; the rest waits.
export function sseEvents(buffer) {
  const lines = buffer.split("\n");
  const rest = lines.pop();
  const events = [];
  for (const line of lines) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("data:")) continue;
    try {
      const event = JSON.parse(trimmed.slice(5).trim());
      if (isObject(event)) events.push(event);
    } catch {
      // Welt skips a line that is not JSON; so does the page.
    }
  }
  return { events, rest };
}

// What Welt renders of one event, or null for what it ignores.
export function rendered(event) {
  if (typeof event.data === "string") return event.data ? { kind: "text", text: event.data } : null;
  if (isObject(event.current_tool_use)) {
    return { kind: "tool", name: event.current_tool_use.name, id: event.current_tool_use.toolUseId };
  }
  if (isObject(event.tool_result)) {
    return { kind: "tool_result", id: event.tool_result.toolUseId, failed: event.tool_result.status === "error" };
  }
  if (isObject(event.file)) {
    const { name, bytes } = event.file;
    if (typeof name !== "string" || !name || typeof bytes !== "string") return null;
    return { kind: "file", name, bytes };
  }
  if (isObject(event.interrupt)) return { kind: "interrupt", interrupt: event.interrupt };
  if (typeof event.error === "string") return { kind: "error", message: event.error };
  return null;
}

// The calls a reply leaves waiting on its questions: indicated, never answered by a
// tool_result, in a reply that asks. Welt closes their indicators all the same, as done,
// because the stream ended; the page says so beside them.
export function waitingCalls(events) {
  const shown = events.map(rendered).filter((each) => each !== null);
  if (!shown.some((each) => each.kind === "interrupt")) return [];
  const returned = new Set(shown.filter((each) => each.kind === "tool_result").map((each) => each.id));
  const called = shown.filter((each) => each.kind === "tool" && !returned.has(each.id)).map((each) => each.id);
  return [...new Set(called)];
}

const IMAGE_TYPES = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp" };

// The MIME type of an image file by its name, so the page can show it inline; else null.
export function imageType(name) {
  return IMAGE_TYPES[name.split(".").pop().toLowerCase()] || null;
}

const escapeHtml = (text) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

// Slack knows thousands of shortcodes; the page knows the ones Welt's notices use and a few
// a reply is likely to. Any other stays as typed, which is also how Slack shows one it
// does not know.
export const EMOJI = {
  warning: "⚠️",
  white_check_mark: "✅",
  heavy_check_mark: "✔️",
  x: "❌",
  no_entry: "⛔",
  hourglass_flowing_sand: "⏳",
  information_source: "ℹ️",
  tada: "🎉",
};

const emoji = (shortcode, name) => (Object.hasOwn(EMOJI, name) ? EMOJI[name] : shortcode);

// A link opens in a tab of its own, as Slack opens one in the browser: the page (and the
// question waiting on it) stays where it is. url and label arrive escaped already.
const link = (url, label) => `<a href="${url}" target="_blank" rel="noopener">${label}</a>`;

// A bare URL as Slack links it, without what ends the sentence around it. Escaped text
// holds no < > " (they are entities, which end it), and \u0000 marks what is held.
const BARE_URL = /https?:\/\/(?:[^\s&\u0000]|&amp;)+/g;
const TRAILING = /[.,;:!?)\]*_~']+$/;

function inline(text, names) {
  // Code spans and mentions are set aside first, so nothing after reads inside them.
  const held = [];
  const hold = (html) => {
    held.push(html);
    return `\u0000${held.length - 1}\u0000`;
  };
  let html = escapeHtml(text).replace(/`([^`]+)`/g, (_, code) => hold(`<code>${code}</code>`));
  html = html
    .replace(/&lt;@([A-Z0-9]+)&gt;/g, (_, id) =>
      hold(`<span class="mention">@${escapeHtml(Object.hasOwn(names, id) ? names[id] : id)}</span>`),
    )
    // Links are held too, so no emphasis or shortcode reads inside a URL (a consent
    // link's state is base64url: it may hold _ and -). Slack's own <url|text> and <url>
    // (mrkdwn, which Welt's Slack renders in a question), Markdown's [text](url), and a
    // bare URL, which Slack links by itself.
    .replace(/&lt;(https?:\/\/[^\s|]+?)(?:\|([^\n]+?))?&gt;/g, (_, url, label) => hold(link(url, label ?? url)))
    .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, (_, label, url) => hold(link(url, label)))
    .replace(BARE_URL, (found) => {
      const url = found.replace(TRAILING, "");
      return hold(link(url, url)) + found.slice(url.length);
    })
    .replace(/:([a-z0-9_+-]+):/g, emoji)
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w*])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>")
    .replace(/(^|[^\w])_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>")
    .replace(/~~([^~\n]+)~~/g, "<del>$1</del>");
  return html.replace(/\u0000(\d+)\u0000/g, (_, index) => held[Number(index)]);
}

// Markdown as the page shows it: the parts Slack's markdown blocks and streams render,
// mentions by name (`names`: user id to name, as displayNames makes it) and emoji.
// Everything is escaped first; only http(s) links become links.
export function markdown(text, names = {}) {
  const out = [];
  const lines = text.split("\n");
  let paragraph = [];
  let list = null;
  const flush = () => {
    if (paragraph.length) out.push(`<p>${paragraph.map((line) => inline(line, names)).join("<br>")}</p>`);
    paragraph = [];
    if (list) out.push(`<${list.tag}>${list.items.map((item) => `<li>${inline(item, names)}</li>`).join("")}</${list.tag}>`);
    list = null;
  };
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index];
    if (line.trimStart().startsWith("```")) {
      flush();
      const code = [];
      for (index += 1; index < lines.length && !lines[index].trimStart().startsWith("```"); index += 1) {
        code.push(lines[index]);
      }
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*•]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    const quote = /^>\s?(.*)$/.exec(line);
    if (heading) {
      flush();
      out.push(`<h${heading[1].length}>${inline(heading[2], names)}</h${heading[1].length}>`);
    } else if (bullet || numbered) {
      const tag = bullet ? "ul" : "ol";
      if (paragraph.length || (list && list.tag !== tag)) flush();
      list = list || { tag, items: [] };
      list.items.push((bullet || numbered)[1]);
    } else if (quote) {
      flush();
      out.push(`<blockquote>${inline(quote[1], names)}</blockquote>`);
    } else if (line.trim() === "") {
      flush();
    } else {
      if (list) flush();
      paragraph.push(line);
    }
  }
  flush();
  return out.join("");
}
