// An error's lineage: a timeline (one lane per project), per-project counts, fixes,
// recurrences after a fix with what changed, what was tried, related errors, sightings.

import {
  errorHref, gql, h, link, nodeHref, query, s, shorten, table, view, when, failed,
} from "./dom.js";

const SIGHTINGS_PAGE = 100;
export const Q_ERROR = `query($id: ID!) { error(id: $id) {
  id project key kind category signature template sightings tasks firstSeen lastSeen fixes
  fixedAt open sample alsoIn } }`;
export const STEP = "id project episodeId taskId step createdAt timeEstimated summary outcome command";
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

export async function showLineage(where, current) {
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
  const { found, lineage, sightings } = state; // state.projects: the lanes, the trend's projects
  const head = [
    h("h1", {}, shorten(found.template || found.kind || found.key, 160)),
    h("p", { class: "facts" },
      `${found.kind || "error"} · project ${found.project} · key ${found.key} · `,
      found.open ? h("span", { class: "badge open" }, "open") : h("span", { class: "badge" }, "fixed"),
      " · ", link(nodeHref(found.id), "neighbourhood graph"), " · ",
      link(`#/trends${query({ p: state.projects.join(","), error: found.id })}`, "weekly trend",
        { id: "open-trend" })),
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

