// metisgraph explorer: the frame (token, projects, routes) and the errors list. Every value
// from the server is set as text, never as markup; nothing is loaded from elsewhere (the
// graph library, Cytoscape.js, is vendored beside this file with its licence).
// Each view's whole state lives in the location hash, so each one is a link:
//   #/errors?p=A,B&order=COUNT&since=2026-03-01&until=…&n=50&after=CURSOR
//   #/error/<global id>          an error's lineage as a timeline
//   #/node/<global id>?depth=1&x=…&hk=…&hr=…&layout=…&sel=…   a neighbourhood (graph.js)
//   #/search?q=<text>&p=A,B     errors and episodes by text (search.js)
//   #/trends?p=A,B&error=<id>&since=…&until=…&top=10   weekly sightings, recurring, new (trends.js)
//   #/compare?p=A,B&sel=<error key>&n=20   projects side by side: shared errors (compare.js)

import {
  clearProblems, errorHref, failed, gql, h, link, list, nodeHref, query, shorten, table, TOKEN_KEY,
  view, when,
} from "./dom.js";
import { showCompare } from "./compare.js";
import { showGraph } from "./graph.js";
import { showLineage } from "./lineage.js";
import { showSearch } from "./search.js";
import { showTrends } from "./trends.js";

const ORDERS = ["COUNT", "RECENT", "UNRESOLVED"];
const VIEWS = {
  error: showLineage, node: showGraph, search: showSearch, trends: showTrends, compare: showCompare,
};
const PICKING = ["errors", "search", "trends", "compare"]; // views whose projects the picker sets

const Q_PROJECTS = "{ projects { name tasks episodes errors } }";
const Q_ERRORS = `query($p: [String!]!, $order: ErrorOrder!, $since: DateTime, $until: DateTime,
  $first: Int!, $after: String) {
  errors(projects: $p, orderBy: $order, since: $since, until: $until, first: $first, after: $after) {
    totalCount pageInfo { endCursor hasNextPage }
    items { id project key kind template sightings tasks firstSeen lastSeen fixes open }
  }
}`;

// --- the frame: token, problems, projects -------------------------------------------

let generation = 0; // a newer route makes an older one's answers stale
let readable = null; // the projects this token may read (null: not asked yet)
let renders = 0; // views drawn: a test (or a user script) can wait for the next one

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

const selectedProjects = (params) => list(params, "p");

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
          const stay = PICKING.includes(route.name);
          const params = stay ? Object.fromEntries(route.params) : {};
          delete params.after;
          location.hash = `#/${stay ? route.name : "errors"}${query({ ...params, p: names.join(",") })}`;
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
    const shown = (VIEWS[where.name] || showErrors)(where, current);
    const failure = (await Promise.allSettled([picker, shown])).find((r) => r.status === "rejected");
    if (failure) throw failure.reason;
  } catch (error) {
    if (current()) failed(error);
  }
  if (current()) {
    document.documentElement.dataset.view = VIEWS[where.name] ? where.name : "errors";
    for (const a of document.querySelectorAll("#views a")) {
      a.toggleAttribute("aria-current", a.dataset.view === document.documentElement.dataset.view);
    }
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
