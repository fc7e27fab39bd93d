// A node's neighbourhood drawn with Cytoscape.js (vendored beside this file, MIT, its licence
// in cytoscape.LICENSE.txt): edges labelled by relation, a legend that is also the filter by
// node kind and by relation, pan and zoom, double-click (or the detail's button) to expand.
// The whole view is in the hash, so a copied link draws the same graph:
//   #/node/<id>?depth=2&x=<expanded ids>&hk=<hidden kinds>&hr=<hidden relations>
//                &layout=rings|tree|force&sel=<selected id>
// The "rings" layout is computed here (deterministic: a link reproduces the same picture):
// rings by distance from the centre, a crowded ring split into sub-rings that each hold what
// fits at a readable spacing, every ring ordered by the nodes it hangs from.

import cytoscape from "./cytoscape.esm.min.js";
import {
  errorHref, gql, h, link, list, nodeHref, problem, query, shorten, table, view, failed,
} from "./dom.js";

const GRAPH_LIMIT = 200;
const GRAPH_MAX_NODES = 1500;
const LAYOUTS = { rings: "rings by distance", tree: "tree", force: "force-directed" };
const SPACING = 34; // px between neighbours on a ring: a node and a gap
const RING_STEP = 64;
const COLOURS = {
  Error: "#c8372d", Episode: "#3b82f6", Task: "#7c3aed", Snippet: "#1d8a4e",
  SnippetVersion: "#1d8a4e", Environment: "#475467", Tool: "#d97706", Package: "#a16207",
  File: "#0e9384", Symbol: "#0e9384", Tag: "#c11574", Project: "#c11574", Pattern: "#0284c7",
};
const colour = (kind) => COLOURS[kind] || "#98a2b3";

const Q_HOOD = `query($id: ID!, $depth: Int!, $limit: Int!) {
  neighbourhood(id: $id, depth: $depth, limit: $limit) {
    center { id } truncated
    nodes { id kind project key title depth properties }
    edges { source target type }
  }
}`;

async function neighbourhood(id, depth) {
  return (await gql(Q_HOOD, { id, depth, limit: GRAPH_LIMIT })).neighbourhood;
}

// The view's state as the link holds it.
function readState(where) {
  const p = where.params;
  return {
    root: where.arg,
    depth: p.get("depth") === "2" ? 2 : 1,
    expanded: list(p, "x"),
    hiddenKinds: new Set(list(p, "hk")),
    hiddenRelations: new Set(list(p, "hr")),
    layout: Object.hasOwn(LAYOUTS, p.get("layout") || "") ? p.get("layout") : "rings",
    selected: p.get("sel") || where.arg,
  };
}

export function graphHref(state) {
  return nodeHref(state.root) + query({
    depth: state.depth === 2 ? "2" : "",
    x: state.expanded.join(","),
    hk: [...state.hiddenKinds].sort().join(","),
    hr: [...state.hiddenRelations].sort().join(","),
    layout: state.layout === "rings" ? "" : state.layout,
    sel: state.selected === state.root ? "" : state.selected,
  });
}

export async function showGraph(where, current) {
  const state = readState(where);
  const hood = await neighbourhood(state.root, state.depth);
  if (!current()) return;
  if (!hood) {
    view().replaceChildren(h("h1", {}, "Neighbourhood"),
      h("p", { class: "not-found" }, "Not found: no node with this id that this token may read."));
    return;
  }
  const graph = { root: hood.center.id, nodes: new Map(), edges: new Map(), truncated: false };
  merge(graph, hood);
  // The link's expansions, asked side by side and merged in the link's order.
  const more = await Promise.all(state.expanded.map((id) => neighbourhood(id, 1)));
  if (!current()) return;
  state.expanded = state.expanded.filter((id, i) => {
    if (more[i]) merge(graph, more[i]);
    else problem("A node this link expanded is not readable with this token; it is left out.");
    return Boolean(more[i]);
  });
  if (!graph.nodes.has(state.selected)) state.selected = graph.root;
  new GraphView(graph, state, current).mount();
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

// Rings by distance from the root; a ring holds what fits at SPACING and spills into the next
// sub-ring; each ring in the order of its parents, so children sit near what they hang from.
export function rings(graph) {
  const around = new Map([...graph.nodes.keys()].map((id) => [id, []]));
  for (const e of graph.edges.values()) {
    around.get(e.source).push(e.target);
    around.get(e.target).push(e.source);
  }
  const levels = [[graph.root]], seen = new Set([graph.root]);
  while (levels.at(-1).length) {
    const next = [];
    for (const id of levels.at(-1)) {
      for (const other of around.get(id)) {
        if (!seen.has(other)) { seen.add(other); next.push(other); }
      }
    }
    levels.push(next);
  }
  levels.pop();
  const stray = [...graph.nodes.keys()].filter((id) => !seen.has(id));
  if (stray.length) levels.push(stray);
  const place = { [graph.root]: { x: 0, y: 0 } };
  let radius = 0, turn = 0;
  for (const level of levels.slice(1)) {
    radius += 2 * RING_STEP; // a clear gap between distances, a narrow one between sub-rings
    let i = 0;
    while (i < level.length) {
      const fits = Math.max(6, Math.floor((2 * Math.PI * radius) / SPACING));
      const ring = level.slice(i, i + fits);
      const offset = (turn++ % 2) * (Math.PI / ring.length); // stagger: no radial lines
      ring.forEach((id, k) => {
        const angle = (2 * Math.PI * k) / ring.length - Math.PI / 2 + offset;
        place[id] = { x: radius * Math.cos(angle), y: radius * Math.sin(angle) };
      });
      i += ring.length;
      if (i < level.length) radius += RING_STEP;
    }
  }
  return place;
}

const STYLE = [
  { selector: "node", style: {
    "background-color": "data(colour)", width: 16, height: 16, "border-width": 2,
    "border-color": "#fff", label: "data(short)", "font-size": 10, "min-zoomed-font-size": 8,
    "text-valign": "bottom", "text-margin-y": 3, color: "#1d2330",
    "text-background-color": "#fff", "text-background-opacity": 0.7 } },
  { selector: "node.root", style: { width: 28, height: 28, "border-color": "#1d2330",
    "font-size": 13, "font-weight": "bold", "min-zoomed-font-size": 4 } },
  { selector: "node:selected", style: { "border-color": "#1d2330", "border-width": 4,
    "font-size": 12, "min-zoomed-font-size": 4 } },
  { selector: "edge", style: {
    width: 1.2, "line-color": "#98a2b3", "target-arrow-color": "#98a2b3",
    "target-arrow-shape": "triangle", "arrow-scale": 0.7, "curve-style": "bezier",
    label: "data(type)", "font-size": 8, "min-zoomed-font-size": 7, color: "#475467",
    "text-rotation": "autorotate", "text-background-color": "#fff",
    "text-background-opacity": 0.8 } },
  { selector: ".hidden", style: { display: "none" } },
];

class GraphView {
  constructor(graph, state, current) {
    this.graph = graph;
    this.state = state;
    this.current = current;
    this.container = h("div", { id: "graph", role: "img",
      "aria-label": "neighbourhood graph; the same nodes and relations are listed below" });
    this.detail = h("aside", { id: "detail" });
    this.status = h("p", { id: "graph-status", class: "quiet", "aria-live": "polite" });
    this.legend = h("div", { id: "legend", class: "legend-box" });
    this.listing = h("div", { id: "graph-list" });
  }

  mount() {
    const { graph, state } = this;
    const center = graph.nodes.get(graph.root);
    const layouts = h("select", { id: "layout", onchange: (e) => this.relayout(e.currentTarget.value) },
      Object.entries(LAYOUTS).map(([v, text]) => h("option", { value: v, selected: v === state.layout }, text)));
    const other = { ...state, depth: state.depth === 1 ? 2 : 1, expanded: [], selected: graph.root };
    view().replaceChildren(
      h("h1", {}, `${center.kind}: ${shorten(center.title, 120)}`),
      h("p", { class: "facts" }, `project ${center.project} · depth ${state.depth} (`,
        link(graphHref(other), `show depth ${other.depth}`, { id: "depth-link" }), ") · ",
        h("label", {}, "layout ", layouts), " ",
        h("button", { type: "button", id: "fit", onclick: () => this.cy.fit(undefined, 30) }, "Fit"),
        " · drag to pan, wheel to zoom; click a node for its details, double-click to expand it"),
      this.status, this.legend,
      h("div", { class: "graph-pane" }, this.container, this.detail), this.listing);
    this.cy = cytoscape({
      container: this.container, elements: [], style: STYLE, minZoom: 0.05, maxZoom: 5,
      boxSelectionEnabled: false,
    });
    this.container.cy = this.cy; // for a test or a user script: the library's own handle
    this.cy.on("tap", "node", (e) => this.select(e.target.id()));
    this.cy.on("dbltap", "node", (e) => this.expand(e.target.id()));
    this.add();
    this.filter();
    this.arrange();
    this.select(state.selected);
  }

  // Elements of the graph not yet drawn are added.
  add() {
    const fresh = [];
    for (const n of this.graph.nodes.values()) {
      if (this.cy.getElementById(n.id).nonempty()) continue;
      fresh.push({ group: "nodes", classes: n.id === this.graph.root ? "root" : "",
        data: { id: n.id, kind: n.kind, colour: colour(n.kind), short: shorten(n.title, 26) } });
    }
    for (const [key, e] of this.graph.edges) {
      if (this.cy.getElementById(key).nonempty()) continue;
      fresh.push({ group: "edges", data: { id: key, source: e.source, target: e.target, type: e.type } });
    }
    this.cy.add(fresh);
  }

  arrange() {
    const { layout } = this.state;
    const options = layout === "tree"
      ? { name: "breadthfirst", roots: [this.graph.root], directed: false, spacingFactor: 0.9,
        avoidOverlap: true }
      : layout === "force"
        ? { name: "cose", animate: false, randomize: false, numIter: 600, nodeRepulsion: 6000 }
        : { name: "preset", positions: rings(this.graph) };
    this.cy.layout({ ...options, fit: true, padding: 30 }).run();
  }

  relayout(name) {
    this.state.layout = name;
    this.arrange();
    this.save();
  }

  // The legend is the filter: one box per node kind and per relation, with counts.
  filter() {
    const { hiddenKinds, hiddenRelations } = this.state;
    this.cy.batch(() => {
      this.cy.nodes().forEach((n) => n.toggleClass("hidden", hiddenKinds.has(n.data("kind"))));
      this.cy.edges().forEach((e) => e.toggleClass("hidden", hiddenRelations.has(e.data("type"))));
    });
    this.paintLegend();
    this.paintList();
  }

  paintLegend() {
    const count = (items, key) => {
      const out = new Map();
      for (const x of items) out.set(x[key], (out.get(x[key]) || 0) + 1);
      return [...out].sort((a, b) => a[0].localeCompare(b[0]));
    };
    const box = (name, value, hidden, n, swatch) => h("label", { class: "filter" },
      h("input", { type: "checkbox", name, value, checked: !hidden.has(value),
        onchange: (e) => {
          if (e.currentTarget.checked) hidden.delete(value); else hidden.add(value);
          this.filter();
          this.save();
        } }),
      swatch, ` ${value} (${n})`);
    const { hiddenKinds, hiddenRelations } = this.state;
    this.legend.replaceChildren(
      h("fieldset", { id: "kind-filter" }, h("legend", {}, "Node kinds"),
        count(this.graph.nodes.values(), "kind").map(([kind, n]) => box("kind", kind, hiddenKinds, n,
          h("span", { class: "swatch", "data-colour": colour(kind), "aria-hidden": "true" })))),
      h("fieldset", { id: "relation-filter" }, h("legend", {}, "Relations (edge labels)"),
        count(this.graph.edges.values(), "type").map(([type, n]) => box("relation", type,
          hiddenRelations, n, h("span", { class: "arrow", "aria-hidden": "true" }, "→")))));
    // The swatches' colours come from the same table as the nodes' (no inline style: CSP).
    for (const s of this.legend.querySelectorAll(".swatch")) s.style.background = s.dataset.colour;
  }

  // The drawn graph as a table too: readable without the canvas, and what a test reads.
  paintList() {
    // Shown as the state says (the library applies styles later than its classes change).
    const { hiddenKinds, hiddenRelations } = this.state;
    const kindShown = (id) => !hiddenKinds.has(this.graph.nodes.get(id)?.kind);
    const shownNodes = this.cy.nodes().filter((n) => kindShown(n.id()));
    const shownEdges = this.cy.edges().filter((e) => !hiddenRelations.has(e.data("type"))
      && kindShown(e.data("source")) && kindShown(e.data("target")));
    const title = (id) => shorten(this.graph.nodes.get(id)?.title, 60);
    const nodes = table(["Kind", "Node", "Project"], [], { id: "graph-nodes", class: "grid" });
    nodes.tBodies[0].append(...shownNodes.map((n) => {
      const g = this.graph.nodes.get(n.id());
      return h("tr", { "data-id": g.id, "data-kind": g.kind },
        h("td", {}, g.kind), h("td", {}, link(nodeHref(g.id), shorten(g.title, 80))),
        h("td", {}, g.project));
    }));
    const edges = table(["From", "Relation", "To"], [], { id: "graph-edges", class: "grid" });
    edges.tBodies[0].append(...shownEdges.map((e) => h("tr", {
      "data-source": e.data("source"), "data-type": e.data("type"), "data-target": e.data("target") },
    h("td", {}, title(e.data("source"))), h("td", {}, e.data("type")),
    h("td", {}, title(e.data("target"))))));
    this.listing.replaceChildren(h("details", {},
      h("summary", {}, `The ${shownNodes.length} nodes and ${shownEdges.length} relations shown, as tables`),
      nodes, edges));
    this.status.textContent = `${shownNodes.length} of ${this.graph.nodes.size} nodes, `
      + `${shownEdges.length} of ${this.graph.edges.size} relations shown`
      + (this.graph.truncated ? " — some neighbourhoods were cut at their limit" : "");
    document.documentElement.dataset.graphDrawn = String(Number(document.documentElement.dataset.graphDrawn || 0) + 1);
  }

  save() {
    if (this.current()) history.replaceState(null, "", graphHref(this.state));
  }

  async expand(id) {
    try {
      const more = await neighbourhood(id, 1);
      if (!this.current()) return;
      if (!more) { problem("That node is no longer readable."); return; }
      merge(this.graph, more);
      if (id !== this.graph.root && !this.state.expanded.includes(id)) this.state.expanded.push(id);
      this.add();
      this.filter();
      this.arrange();
      this.select(id);
    } catch (error) { failed(error); }
  }

  select(id) {
    const n = this.graph.nodes.get(id);
    if (!n) return;
    this.state.selected = id;
    this.cy.nodes(":selected").unselect();
    this.cy.getElementById(id).select();
    this.detail.replaceChildren(
      h("h2", {}, n.kind),
      h("p", { class: "title" }, n.title),
      h("p", { class: "facts" }, `project ${n.project} · key ${n.key}`),
      h("p", {},
        h("button", { type: "button", id: "expand", onclick: () => this.expand(id) }, "Expand here"), " ",
        link(nodeHref(id), "open as centre", { id: "open-centre" }),
        n.kind === "Error" ? [" · ", link(errorHref(id), "lineage", { id: "open-lineage" })] : null),
      h("pre", { class: "properties" }, JSON.stringify(n.properties, null, 2)));
    this.save();
  }
}
