// Compare: two or more projects side by side — the errors they share (one column a project:
// sightings, fixes, state, recurrences), the ways that fixed an error in one project and
// failed in another, and for the error opened, where each project fixed it and what it
// tried, as lineage derived them from evidence. The link holds the whole view:
//   #/compare?p=A,B&sel=<error key>&n=20

import { errorHref, gql, h, link, list, nodeHref, query, shorten, table, view, when } from "./dom.js";
import { STEP } from "./lineage.js";

const plural = (n, word, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;

const Q_COMPARE = `query($p: [String!]!, $first: Int!) {
  compare(projects: $p, first: $first) {
    projects sharedCount
    shared { key kind template projects
      sides { id project sightings tasks firstSeen lastSeen fixes fixedAt open workarounds
        attemptCount recurrences afterFixElsewhere
        fixedBy { kind rule why confidence episode { ${STEP} } }
        attempts { kind rule why episode { ${STEP} } } }
      contrasts { rule why workedIn failedIn } }
  }
}`;

export function compareHref(state) {
  return `#/compare${query({ p: state.p.join(","), sel: state.sel,
    n: state.n === 20 ? "" : String(state.n) })}`;
}

export async function showCompare(where, current) {
  const p = list(where.params, "p");
  const state = { p, sel: where.params.get("sel") || "",
    n: Math.min(100, Math.max(1, Number(where.params.get("n")) || 20)) };
  const controls = h("form", { class: "controls", id: "compare-controls",
    onsubmit: (event) => {
      event.preventDefault();
      location.hash = compareHref({ ...state, n: Number(event.currentTarget.n.value) || 20 });
    } },
  h("label", {}, "shared errors shown ",
    h("input", { type: "number", name: "n", min: 1, max: 100, value: state.n })),
  h("button", { type: "submit" }, "Apply"));
  if (p.length < 2) {
    view().replaceChildren(h("h1", {}, "Compare"), controls,
      h("p", { class: "quiet", id: "pick-hint" }, "Pick two or more projects above."));
    return;
  }
  const c = (await gql(Q_COMPARE, { p, first: state.n })).compare;
  if (!current()) return;
  const names = c.projects;
  const chosen = c.shared.find((x) => x.key === state.sel);
  view().replaceChildren(h("h1", {}, `Compare ${names.join(" · ")}`), controls,
    h("p", { class: "facts", id: "compare-count" },
      `${plural(c.sharedCount, "error")} met in two or more of these projects`
      + (c.sharedCount > c.shared.length ? ` (the first ${c.shared.length} shown)` : "")),
    sharedTable(c, state),
    h("h2", {}, "Fixed in one project, failed in another"), contrastsTable(c, state),
    chosen ? details(chosen, names) : h("p", { class: "quiet" },
      "Open an error above to see where each project fixed it and what it tried."));
}

function sideCell(side) {
  if (!side) return h("span", { class: "quiet" }, "not met");
  const state = side.open ? h("span", { class: "badge open" }, "open") : h("span", { class: "badge" }, "fixed");
  const notes = [];
  if (side.fixes) notes.push(plural(side.fixes, "fix", "fixes"));
  if (side.workarounds) notes.push(plural(side.workarounds, "workaround"));
  if (side.attemptCount) notes.push(`${side.attemptCount} tried`);
  const back = [];
  if (side.recurrences) back.push(h("span", { class: "recur" }, `↺ ${side.recurrences} after its fix`));
  if (side.afterFixElsewhere) {
    back.push(h("span", { class: "recur" }, `${side.afterFixElsewhere} after a fix elsewhere`));
  }
  return h("div", { class: "side", "data-project": side.project },
    h("span", { class: "count" }, plural(side.sightings, "sighting")), " ",
    state, notes.length ? h("div", { class: "quiet" }, notes.join(" · ")) : null,
    back.length ? h("div", {}, back.map((x, i) => [i ? " · " : "", x])) : null,
    h("div", {}, link(errorHref(side.id), "lineage", { class: "lineage-link" }), " · ",
      link(nodeHref(side.id), "graph")));
}

function sharedTable(c, state) {
  if (!c.shared.length) {
    return h("p", { class: "quiet", id: "compare-shared" }, "These projects share no error.");
  }
  const rows = c.shared.map((x) => {
    const by = new Map(x.sides.map((side) => [side.project, side]));
    const open = x.key === state.sel;
    return [
      link(compareHref({ ...state, sel: open ? "" : x.key }),
        shorten(x.template || x.kind || x.key, 100),
        { class: "shared-error", "data-key": x.key, "aria-expanded": open ? "true" : "false" }),
      String(x.projects.length),
      ...c.projects.map((name) => sideCell(by.get(name))),
      x.contrasts.length ? String(x.contrasts.length) : "—",
    ];
  });
  return table(["Shared error", "Projects", ...c.projects, "Worked here, failed there"], rows,
    { id: "compare-shared", class: "grid" });
}

function contrastsTable(c, state) {
  const rows = c.shared.flatMap((x) => x.contrasts.map((k) => [
    link(compareHref({ ...state, sel: x.key }), shorten(x.template || x.kind || x.key, 70)),
    `${k.rule}: ${k.why}`, k.workedIn.join(", "), k.failedIn.join(", "),
  ]));
  return rows.length
    ? table(["Error", "What was done", "Fixed it in", "Tried without ending it in"], rows,
      { id: "compare-contrasts", class: "grid" })
    : h("p", { class: "quiet", id: "compare-contrasts" },
      "None: no way of dealing with a shared error both fixed it in one of these projects and "
      + "failed in another (as the evidence links say).");
}

function stepLink(e) {
  return link(nodeHref(e.id), `${e.episodeId}${e.step === null ? "" : ` (step ${e.step})`}`);
}

function details(x, names) {
  const cards = names.map((name) => {
    const side = x.sides.find((s) => s.project === name);
    if (!side) return h("section", { class: "compare-card" }, h("h3", {}, name), h("p", { class: "quiet" }, "Not met here."));
    const fixes = side.fixedBy.length
      ? table(["When", "Step", "Kind", "Why", "Confidence"], side.fixedBy.map((f) => [
        when(f.episode.createdAt), stepLink(f.episode), f.kind, `${f.rule}: ${f.why}`,
        f.confidence === null ? "—" : f.confidence.toFixed(2)]), { class: "grid fixed-by" })
      : h("p", { class: "quiet" }, "Never fixed here (no step with evidence).");
    const tried = side.attempts.length
      ? table(["When", "Step", "Why"], side.attempts.map((a) => [
        when(a.episode.createdAt), stepLink(a.episode), `${a.rule}: ${a.why}`]), { class: "grid attempts" })
      : h("p", { class: "quiet" }, "Nothing tried that did not end it.");
    return h("section", { class: "compare-card", "data-project": name },
      h("h3", {}, name),
      h("p", { class: "facts" }, `${plural(side.sightings, "sighting")} in ${plural(side.tasks, "task")}, `
        + `${when(side.firstSeen)} to ${when(side.lastSeen)}; `
        + `${side.recurrences} after its own fix, ${side.afterFixElsewhere} after a fix elsewhere`),
      h("h4", {}, "Where it was fixed"), fixes, h("h4", {}, "Tried, did not end it"), tried);
  });
  return h("section", { id: "compare-detail" },
    h("h2", {}, `Side by side: ${shorten(x.template || x.kind || x.key, 140)}`),
    h("div", { class: "compare-cards" }, cards));
}
