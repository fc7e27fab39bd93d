// metisgraph explorer: plain DOM and SVG, no library, nothing loaded from elsewhere.
// Every value from the server is set as text (textContent, attributes), never as markup.
// Views live in the location hash, so each one is a link:
//   #/errors?p=A,B&order=COUNT&since=2026-03-01&until=…&n=50&after=CURSOR
//   #/error/<global id>          an error's lineage as a timeline
//   #/node/<global id>?depth=1   a node's neighbourhood as a graph (expand in place)

const TOKEN_KEY = "metisgraph.token";
const ORDERS = ["COUNT", "RECENT", "UNRESOLVED"];
const SIGHTINGS_PAGE = 100;
const GRAPH_LIMIT = 200;
const GRAPH_MAX_NODES = 1500;
const SVG = "http://www.w3.org/2000/svg";

// --- DOM ----------------------------------------------------------------------------

function build(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
const s = (tag, attrs, ...children) => build(document.createElementNS(SVG, tag), attrs, children);
const link = (href, text, attrs = {}) => h("a", { href, ...attrs }, text);
const errorHref = (id) => `#/error/${encodeURIComponent(id)}`;
const nodeHref = (id) => `#/node/${encodeURIComponent(id)}`;
const kindClass = (kind) => `k-${String(kind).replace(/[^A-Za-z]/g, "")}`;

function when(value) {
  if (!value) return "—";
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString().slice(0, 16).replace("T", " ");
}

function shorten(text, size) {
  const t = String(text ?? "");
  return t.length > size ? `${t.slice(0, size - 1)}…` : t;
}

function table(headings, rows, attrs = {}) {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, headings.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))));
}

// --- the API --------------------------------------------------------------------------

class AuthError extends Error {}
class ApiError extends Error {}

async function gql(query, variables = {}) {
  const headers = { "Content-Type": "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch("graphql", {
    method: "POST", headers, credentials: "omit", body: JSON.stringify({ query, variables }),
  });
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  const messages = (body?.errors || []).map((e) => e.message);
  if (response.status === 401) throw new AuthError(messages.join("; ") || "a valid token is required");
  if (!response.ok) throw new ApiError(messages.join("; ") || `HTTP ${response.status}`);
  if (messages.length) throw new ApiError(messages.join("; "));
  return body.data;
}

const Q_PROJECTS = "{ projects { name tasks episodes errors } }";
const Q_ERRORS = `query($p: [String!]!, $order: ErrorOrder!, $since: DateTime, $until: DateTime,
  $first: Int!, $after: String) {
  errors(projects: $p, orderBy: $order, since: $since, until: $until, first: $first, after: $after) {
    totalCount pageInfo { endCursor hasNextPage }
    items { id project key kind template sightings tasks firstSeen lastSeen fixes open }
  }
}`;
const Q_ERROR = `query($id: ID!) { error(id: $id) {
  id project key kind category signature template sightings tasks firstSeen lastSeen fixes
  fixedAt open sample alsoIn } }`;
const STEP = "id project episodeId taskId step createdAt timeEstimated summary outcome command";
const Q_LINEAGE = `query($p: [String!]!, $id: ID!, $limit: Int!, $after: String) {
  lineage(projects: $p, error: {id: $id}, limit: $limit, after: $after) {
    sightingCount recurrenceCount warnings
    firstSighting { id at } lastSighting { id at }
    sightings { episode { ${STEP} } task { id goal status }
      environment { os runtime runtimeVersion } tools }
    pageInfo { endCursor hasNextPage }
    triedAndFailed { episode { ${STEP} } errors tools why }
    fixes { episode { ${STEP} } via kind why confidence snippets { id name kind } }
    recurrences { episode { ${STEP} } fix { ${STEP} } sameProject
      difference { known sameEnvironment packages { name fixed failing change }
        fields { field fixed failing } } }
    related { id project kind template tasks preceded followed together }
    projects { project sightings tasks fixes recurrences firstSeen lastSeen }
  }
}`;
const Q_HOOD = `query($id: ID!, $depth: Int!, $limit: Int!) {
  neighbourhood(id: $id, depth: $depth, limit: $limit) {
    center { id } truncated
    nodes { id kind project key title depth properties }
    edges { source target type }
  }
}`;

// --- the frame: token, problems, projects -------------------------------------------

const view = () => document.getElementById("view");
let generation = 0; // a newer route makes an older one's answers stale
let readable = null; // the projects this token may read (null: not asked yet)
let renders = 0; // views drawn: a test (or a user script) can wait for the next one

function problem(message) {
  const box = document.getElementById("problems");
  box.hidden = false;
  box.append(h("p", { class: "problem" }, message));
}

function clearProblems() {
  const box = document.getElementById("problems");
  box.replaceChildren();
  box.hidden = true;
}

function failed(error) {
  if (error instanceof AuthError) {
    problem(`The server needs a valid token: ${error.message}`);
    document.getElementById("token-state").textContent = "token required";
    document.getElementById("token").focus();
  } else {
    problem(error instanceof ApiError ? error.message : `Request failed: ${error.message}`);
  }
  view().replaceChildren();
}

function showTokenState() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  document.getElementById("token-state").textContent = token ? "token set" : "no token";
}

function parseRoute() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = raw.split("?");
  const [name = "errors", ...rest] = path.split("/");
  return { name: name || "errors", arg: decodeURIComponent(rest.join("/")), params: new URLSearchParams(query) };
}

function errorsHref(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  return `#/errors?${q}`;
}

function selectedProjects(params) {
  return (params.get("p") || "").split(",").map((x) => x.trim()).filter(Boolean);
}

async function loadProjects() {
  if (readable === null) readable = (await gql(Q_PROJECTS)).projects;
  return readable;
}

function renderPicker(route) {
  const nav = document.getElementById("projects");
  const chosen = new Set(selectedProjects(route.params));
  const boxes = (readable || []).map((p) =>
    h("label", { class: "project" },
      h("input", {
        type: "checkbox", value: p.name, checked: chosen.has(p.name),
        onchange: () => {
          const names = [...nav.querySelectorAll("input:checked")].map((i) => i.value);
          const params = route.name === "errors" ? Object.fromEntries(route.params) : {};
          location.hash = errorsHref({ ...params, p: names.join(","), after: "" });
        },
      }),
      ` ${p.name} `, h("span", { class: "quiet" }, `${p.errors} errors · ${p.episodes} episodes`)));
  nav.replaceChildren(h("span", { class: "label" }, "Projects"),
    ...(boxes.length ? boxes : [h("span", { class: "quiet" }, "none readable")]));
}

async function route() {
  const mine = ++generation;
  const current = () => mine === generation;
  clearProblems();
  const where = parseRoute();
  document.documentElement.dataset.view = "loading";
  try {
    // The picker and the view are asked for side by side: a view does not need the list.
    const picker = loadProjects().then(() => current() && renderPicker(where));
    const shown = where.name === "error" ? showLineage(where, current)
      : where.name === "node" ? showGraph(where, current) : showErrors(where, current);
    const failure = (await Promise.allSettled([picker, shown])).find((r) => r.status === "rejected");
    if (failure) throw failure.reason;
  } catch (error) {
    if (current()) failed(error);
  }
  if (current()) {
    document.documentElement.dataset.view = where.name;
    document.documentElement.dataset.renderedMs = String(Math.round(performance.now()));
    document.documentElement.dataset.renders = String(++renders);
  }
}

// --- errors list --------------------------------------------------------------------

async function showErrors(where, current) {
  const p = selectedProjects(where.params);
  const order = ORDERS.includes(where.params.get("order")) ? where.params.get("order") : "COUNT";
  const first = Math.min(200, Math.max(1, Number(where.params.get("n")) || 50));
  const since = where.params.get("since") || "";
  const until = where.params.get("until") || "";
  const after = where.params.get("after") || null;
  const keep = { p: p.join(","), order, since, until, n: String(first) };
  const controls = h("form", { class: "controls", id: "error-controls",
    onsubmit: (event) => {
      event.preventDefault();
      const form = event.currentTarget;
      location.hash = errorsHref({ ...keep, order: form.order.value, since: form.since.value,
        until: form.until.value });
    } },
    h("label", {}, "Order ", h("select", { name: "order", id: "order",
      onchange: (event) => event.currentTarget.form.requestSubmit() },
      ORDERS.map((o) => h("option", { value: o, selected: o === order }, o.toLowerCase())))),
    h("label", {}, " since ", h("input", { type: "date", name: "since", value: since })),
    h("label", {}, " until ", h("input", { type: "date", name: "until", value: until })),
    h("button", { type: "submit" }, "Apply"));
  if (!p.length) {
    view().replaceChildren(h("h1", {}, "Errors"), controls,
      h("p", { class: "quiet", id: "pick-hint" }, "Pick one or more projects above."));
    return;
  }
  const data = await gql(Q_ERRORS, {
    p, order, first, after,
    since: since ? `${since}T00:00:00Z` : null,
    until: until ? `${until}T23:59:59Z` : null,
  });
  if (!current()) return;
  const page = data.errors;
  const rows = page.items.map((e) => [
    link(errorHref(e.id), shorten(e.template || e.kind || e.key, 110), { class: "error-link" }),
    e.project, String(e.sightings), String(e.tasks), when(e.firstSeen), when(e.lastSeen),
    String(e.fixes), e.open ? h("span", { class: "badge open" }, "open") : "fixed",
    link(nodeHref(e.id), "graph"),
  ]);
  const paging = h("p", { class: "paging" },
    `${page.totalCount} errors`,
    after ? [" · ", link(errorsHref(keep), "first page", { id: "first-page" })] : null,
    page.pageInfo.hasNextPage
      ? [" · ", link(errorsHref({ ...keep, after: page.pageInfo.endCursor }), "next page",
        { id: "next-page" })]
      : null);
  view().replaceChildren(h("h1", {}, "Errors"), controls, paging,
    table(["Error", "Project", "Sightings", "Tasks", "First seen", "Last seen", "Fixes", "State", ""],
      rows, { id: "errors", class: "grid" }));
}

// --- an error's lineage -------------------------------------------------------------

async function showLineage(where, current) {
  const id = where.arg;
  const found = (await gql(Q_ERROR, { id })).error;
  if (!current()) return;
  if (!found) {
    view().replaceChildren(h("h1", {}, "Error"),
      h("p", { class: "not-found" }, "Not found: no error with this id that this token may read."));
    return;
  }
  const projects = [found.project, ...found.alsoIn];
  const state = { found, projects, sightings: [], lineage: null };
  const more = async () => {
    const after = state.lineage?.pageInfo.endCursor ?? null;
    const data = await gql(Q_LINEAGE, { p: projects, id, limit: SIGHTINGS_PAGE, after });
    state.lineage = data.lineage;
    state.sightings.push(...data.lineage.sightings);
  };
  await more();
  if (!current()) return;
  const paint = () => view().replaceChildren(...lineageView(state, async (button) => {
    button.disabled = true;
    try { await more(); if (current()) paint(); } catch (error) { failed(error); }
  }));
  paint();
}

function lineageView(state, loadMore) {
  const { found, lineage, sightings } = state;
  const head = [
    h("h1", {}, shorten(found.template || found.kind || found.key, 160)),
    h("p", { class: "facts" },
      `${found.kind || "error"} · project ${found.project} · key ${found.key} · `,
      found.open ? h("span", { class: "badge open" }, "open") : h("span", { class: "badge" }, "fixed"),
      " · ", link(nodeHref(found.id), "neighbourhood graph")),
    h("p", { id: "lineage-summary" },
      `${lineage.sightingCount} sightings from ${when(lineage.firstSighting?.at)} to `
      + `${when(lineage.lastSighting?.at)}; ${lineage.fixes.length} fixes; `
      + `${lineage.recurrenceCount} recurrences after a fix.`),
  ];
  if (found.sample) head.push(h("pre", { class: "sample" }, found.sample));
  const warnings = lineage.warnings.map((w) => h("p", { class: "warning" }, w));
  const moreButton = lineage.pageInfo.hasNextPage
    ? h("button", { id: "more-sightings", type: "button", onclick: (e) => loadMore(e.currentTarget) },
      `Load ${SIGHTINGS_PAGE} more sightings`)
    : null;
  return [
    ...head, ...warnings,
    h("h2", {}, "Timeline"),
    timeline(state),
    h("p", { class: "legend" }, h("span", { class: "sighting" }, "●"), " sighting  ",
      h("span", { class: "fix" }, "◆"), " fix (on evidence)  ", h("span", { class: "recurrence" }, "◯"),
      " sighted again after a fix  ~ time estimated (the run carried none)"),
    h("p", { class: "quiet" }, `${sightings.length} of ${lineage.sightingCount} sightings shown. `,
      moreButton),
    h("h2", {}, "Per project"),
    table(["Project", "Sightings", "Tasks", "Fixes", "Recurrences", "First", "Last"],
      lineage.projects.map((p) => [p.project, String(p.sightings), String(p.tasks), String(p.fixes),
        String(p.recurrences), when(p.firstSeen), when(p.lastSeen)]), { class: "grid" }),
    h("h2", {}, "Fixes"),
    lineage.fixes.length ? h("ul", { id: "fixes" }, lineage.fixes.map((f) => h("li", {},
      h("span", { class: `badge ${f.kind}` }, f.kind), " ", stepLink(f.episode),
      ` — ${f.why.join("; ")} (confidence ${(f.confidence ?? 0).toFixed(2)})`,
      f.snippets.map((x) => [" · snippet ", link(nodeHref(x.id), x.name || x.kind || "snippet")]))))
      : h("p", { class: "quiet" }, "No fix recorded."),
    h("h2", {}, "Recurrences after a fix"),
    lineage.recurrences.length ? h("ul", { id: "recurrences" }, lineage.recurrences.map(recurrence))
      : h("p", { class: "quiet" }, "None."),
    h("h2", {}, "Attempted (acted on it, did not end it)"),
    lineage.triedAndFailed.length ? h("ul", { id: "attempts" }, lineage.triedAndFailed.map((t) =>
      h("li", {}, stepLink(t.episode), ` — ${t.why.join("; ")}`,
        t.errors.length ? ` (hit ${t.errors.join(", ")})` : "")))
      : h("p", { class: "quiet" }, "None."),
    h("h2", {}, "Related errors"),
    lineage.related.length ? table(["Error", "Project", "Tasks", "Preceded", "Followed", "Together"],
      lineage.related.map((r) => [link(errorHref(r.id), shorten(r.template || r.kind, 100)),
        r.project, String(r.tasks), String(r.preceded), String(r.followed), String(r.together)]),
      { class: "grid" }) : h("p", { class: "quiet" }, "None."),
    h("h2", {}, "Sightings"),
    table(["When", "Project", "Episode", "Task", "Outcome", "Environment", "Tools"],
      sightings.map((x) => [(x.episode.timeEstimated ? "~" : "") + when(x.episode.createdAt), x.episode.project, stepLink(x.episode),
        x.task ? link(nodeHref(x.task.id), shorten(x.task.goal || "task", 60)) : "—",
        x.episode.outcome || "—",
        x.environment ? `${x.environment.os || ""} ${x.environment.runtime || ""} ${x.environment.runtimeVersion || ""}`.trim() : "—",
        x.tools.join(", ")]), { id: "sightings", class: "grid" }),
  ];
}

function stepLink(step) {
  // "~": the run carried no time of its own for this step; its time is estimated
  const at = (step.timeEstimated ? "~" : "") + when(step.createdAt);
  return link(nodeHref(step.id), `${at} ${shorten(step.summary || step.episodeId, 80)}`);
}

function recurrence(r) {
  const d = r.difference;
  const changes = d.packages.map((p) => `${p.name} ${p.fixed ?? "∅"} → ${p.failing ?? "∅"}`)
    .concat(d.fields.map((f) => `${f.field} ${f.fixed ?? "∅"} → ${f.failing ?? "∅"}`));
  const said = !d.known ? "environment unknown"
    : d.sameEnvironment ? "same environment" : changes.join("; ");
  return h("li", {}, stepLink(r.episode), " after the fix ", stepLink(r.fix),
    r.sameProject ? "" : " (another project)", h("div", { class: "diff" }, said));
}

// The timeline: one lane per project, time along x; sightings, fixes and recurrences as
// marks, each a link to its episode.
function timeline(state) {
  const { lineage, sightings, projects } = state;
  const marks = [
    ...sightings.map((x) => ({ kind: "sighting", step: x.episode })),
    ...lineage.fixes.filter((f) => f.kind === "fixed").map((f) => ({ kind: "fix", step: f.episode })),
    ...lineage.recurrences.map((r) => ({ kind: "recurrence", step: r.episode })),
  ].filter((m) => m.step.createdAt);
  const lanes = [...new Set([...projects, ...marks.map((m) => m.step.project)])];
  const width = 1000, laneHeight = 44, left = 150, right = 20, top = 24;
  const height = top + lanes.length * laneHeight + 30;
  const times = marks.map((m) => Date.parse(m.step.createdAt));
  const lo = Math.min(...times), hi = Math.max(...times);
  const span = hi > lo ? hi - lo : 1;
  const x = (t) => left + (width - left - right) * (hi > lo ? (t - lo) / span : 0.5);
  const svg = s("svg", { id: "timeline", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": "sightings, fixes and recurrences over time" });
  lanes.forEach((lane, i) => {
    const y = top + i * laneHeight + laneHeight / 2;
    svg.append(s("line", { class: "lane", x1: left, x2: width - right, y1: y, y2: y }),
      s("text", { class: "lane-name", x: 8, y: y + 4 }, shorten(lane, 20)));
  });
  for (let i = 0; i <= 4 && marks.length; i++) {
    const t = lo + (span * i) / 4;
    const tx = x(t);
    const anchor = i === 0 ? "start" : i === 4 ? "end" : "middle";
    svg.append(s("text", { class: "tick", x: tx, y: height - 8, "text-anchor": anchor },
      when(new Date(t).toISOString()).slice(0, 10)));
  }
  const order = { sighting: 0, recurrence: 1, fix: 2 };
  marks.sort((a, b) => order[a.kind] - order[b.kind]);
  for (const m of marks) {
    const cx = x(Date.parse(m.step.createdAt));
    const lane = top + lanes.indexOf(m.step.project) * laneHeight + laneHeight / 2;
    const cy = m.kind === "fix" ? lane - 14 : lane; // a fix sits just above, never hiding a sighting
    const shape = m.kind === "fix"
      ? s("path", { d: `M${cx} ${cy - 7} L${cx + 7} ${cy} L${cx} ${cy + 7} L${cx - 7} ${cy} Z` })
      : s("circle", { cx, cy, r: m.kind === "recurrence" ? 8 : 5 });
    svg.append(s("a", { href: nodeHref(m.step.id), class: `mark ${m.kind}` }, shape,
      s("title", {}, `${m.kind} · ${m.step.timeEstimated ? "~" : ""}${when(m.step.createdAt)}${m.step.timeEstimated ? " (estimated)" : ""} · ${m.step.summary || m.step.episodeId}`)));
  }
  return svg;
}

// --- a neighbourhood as a graph ----------------------------------------------------

async function showGraph(where, current) {
  const depth = where.params.get("depth") === "2" ? 2 : 1;
  const hood = await neighbourhood(where.arg, depth);
  if (!current()) return;
  if (!hood) {
    view().replaceChildren(h("h1", {}, "Neighbourhood"),
      h("p", { class: "not-found" }, "Not found: no node with this id that this token may read."));
    return;
  }
  const graph = { root: hood.center.id, nodes: new Map(), edges: new Map(), truncated: false };
  merge(graph, hood);
  const detail = h("aside", { id: "detail" });
  const canvas = h("div", { id: "graph-canvas" });
  const status = h("p", { id: "graph-status", class: "quiet" });
  const paint = () => {
    canvas.replaceChildren(drawGraph(graph, (id, now) => select(graph, id, detail, expand, now)));
    status.textContent = `${graph.nodes.size} nodes, ${graph.edges.size} edges`
      + (graph.truncated ? " — some neighbourhoods were cut at their limit" : "");
  };
  const expand = async (id) => {
    try {
      const more = await neighbourhood(id, 1);
      if (!current()) return;
      if (!more) { problem("That node is no longer readable."); return; }
      merge(graph, more);
      paint();
      select(graph, id, detail, expand);
    } catch (error) { failed(error); }
  };
  const center = graph.nodes.get(graph.root);
  view().replaceChildren(
    h("h1", {}, `${center.kind}: ${shorten(center.title, 120)}`),
    h("p", { class: "facts" }, `project ${center.project} · depth `,
      depth === 1 ? link(`${nodeHref(graph.root)}?depth=2`, "2") : link(nodeHref(graph.root), "1"),
      " · click a node for its details, double-click to expand it"),
    status, h("div", { class: "graph-pane" }, canvas, detail));
  paint();
  select(graph, graph.root, detail, expand);
}

async function neighbourhood(id, depth) {
  return (await gql(Q_HOOD, { id, depth, limit: GRAPH_LIMIT })).neighbourhood;
}

function merge(graph, hood) {
  graph.truncated ||= hood.truncated;
  for (const n of hood.nodes) {
    if (!graph.nodes.has(n.id) && graph.nodes.size < GRAPH_MAX_NODES) graph.nodes.set(n.id, n);
  }
  for (const e of hood.edges) {
    if (graph.nodes.has(e.source) && graph.nodes.has(e.target)) {
      graph.edges.set(`${e.source}|${e.type}|${e.target}`, e);
    }
  }
}

// Rings by distance from the root; each ring in the order of its parents, so children sit
// near the node they hang from. Deterministic: the same graph draws the same way.
function layout(graph) {
  const around = new Map([...graph.nodes.keys()].map((id) => [id, []]));
  for (const e of graph.edges.values()) {
    around.get(e.source).push(e.target);
    around.get(e.target).push(e.source);
  }
  const rings = [[graph.root]], seen = new Set([graph.root]);
  while (rings.at(-1).length) {
    const next = [];
    for (const id of rings.at(-1)) {
      for (const other of around.get(id)) {
        if (!seen.has(other)) { seen.add(other); next.push(other); }
      }
    }
    rings.push(next);
  }
  rings.pop();
  const stray = [...graph.nodes.keys()].filter((id) => !seen.has(id));
  if (stray.length) rings.push(stray);
  const place = new Map([[graph.root, { x: 0, y: 0 }]]);
  let radius = 0;
  rings.slice(1).forEach((ring) => {
    radius = Math.max(radius + 150, (ring.length * 26) / (2 * Math.PI));
    ring.forEach((id, i) => {
      const angle = (2 * Math.PI * i) / ring.length - Math.PI / 2;
      place.set(id, { x: radius * Math.cos(angle), y: radius * Math.sin(angle) });
    });
  });
  return { place, radius };
}

function drawGraph(graph, onSelect) {
  const { place, radius } = layout(graph);
  const pad = 150, size = radius + pad;
  const svg = s("svg", { id: "graph", viewBox: `${-size} ${-size} ${2 * size} ${2 * size}`,
    role: "img", "aria-label": "neighbourhood graph" });
  const edges = s("g", { class: "edges" });
  for (const e of graph.edges.values()) {
    const a = place.get(e.source), b = place.get(e.target);
    edges.append(s("line", { class: "edge", x1: a.x, y1: a.y, x2: b.x, y2: b.y },
      s("title", {}, e.type)));
  }
  const labels = graph.nodes.size <= 150;
  const nodes = s("g", { class: "nodes" });
  for (const n of graph.nodes.values()) {
    const p = place.get(n.id);
    const g = s("g", { class: `node ${kindClass(n.kind)}${n.id === graph.root ? " root" : ""}`,
      "data-id": n.id, "data-kind": n.kind, transform: `translate(${p.x} ${p.y})`, tabindex: 0,
      onclick: () => onSelect(n.id), ondblclick: () => onSelect(n.id, true),
      onkeydown: (event) => { if (event.key === "Enter") onSelect(n.id, true); } },
    s("circle", { r: n.id === graph.root ? 14 : 9 }),
    s("title", {}, `${n.kind}: ${n.title}`),
    labels ? s("text", { x: 13, y: 4 }, shorten(n.title, 28)) : null);
    nodes.append(g);
  }
  svg.append(edges, nodes);
  return svg;
}

function select(graph, id, detail, expand, expandNow = false) {
  const n = graph.nodes.get(id);
  if (!n) return;
  if (expandNow) { expand(id); return; }
  for (const g of document.querySelectorAll("#graph .node.selected")) g.classList.remove("selected");
  for (const g of document.querySelectorAll("#graph .node")) {
    if (g.dataset.id === id) g.classList.add("selected");
  }
  detail.replaceChildren(
    h("h2", {}, n.kind),
    h("p", { class: "title" }, n.title),
    h("p", { class: "facts" }, `project ${n.project} · key ${n.key}`),
    h("p", {},
      h("button", { type: "button", id: "expand", onclick: () => expand(id) }, "Expand here"), " ",
      link(nodeHref(id), "open as centre", { id: "open-centre" }),
      n.kind === "Error" ? [" · ", link(errorHref(id), "lineage", { id: "open-lineage" })] : null),
    h("pre", { class: "properties" }, JSON.stringify(n.properties, null, 2)));
}

// --- start --------------------------------------------------------------------------

document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("token");
  const token = input.value.trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  input.value = "";
  readable = null;
  showTokenState();
  route();
});
document.getElementById("forget").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  readable = null;
  showTokenState();
  route();
});
window.addEventListener("hashchange", route);
showTokenState();
route();
