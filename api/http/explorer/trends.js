// Trends: an error's (and its family's) sightings per week per project as a bar chart with
// labelled axes and the same numbers in a table beside it; the projects' recurring errors and
// those new to the window. The link holds the whole view:
//   #/trends?p=A,B&error=<global id>&since=2026-03-01&until=2026-03-31&top=10

import { errorHref, gql, h, link, list, query, s, shorten, table, view, when } from "./dom.js";

const Q_TRENDS = `query($p: [String!]!, $e: ErrorRef, $since: DateTime, $until: DateTime, $top: Int!) {
  trends(projects: $p, error: $e, since: $since, until: $until, top: $top) {
    errors weeks { project week sightings }
    recurring { id project key kind template sightings tasks firstSeen lastSeen fixes open }
    newlyAppearing { id project key kind template sightings tasks firstSeen lastSeen fixes open }
  }
}`;
const Q_NAME = "query($id: ID!) { error(id: $id) { id project kind template key } }";
const DAY = 86400000;
const PALETTE = ["#2457c5", "#c8372d", "#1d8a4e", "#d97706", "#7c3aed", "#0e9384", "#c11574", "#475467"];

export function trendsHref(state) {
  return `#/trends${query({ p: state.p.join(","), error: state.error, since: state.since,
    until: state.until, top: state.top === 10 ? "" : String(state.top) })}`;
}

export async function showTrends(where, current) {
  const p = list(where.params, "p");
  const state = { p, error: where.params.get("error") || "", since: where.params.get("since") || "",
    until: where.params.get("until") || "",
    top: Math.min(50, Math.max(1, Number(where.params.get("top")) || 10)) };
  const controls = h("form", { class: "controls", id: "trend-controls",
    onsubmit: (event) => {
      event.preventDefault();
      const f = event.currentTarget;
      location.hash = trendsHref({ ...state, since: f.since.value, until: f.until.value,
        top: Number(f.top.value) || 10 });
    } },
  h("label", {}, "since ", h("input", { type: "date", name: "since", value: state.since })),
  h("label", {}, " until ", h("input", { type: "date", name: "until", value: state.until })),
  h("label", {}, " top ", h("input", { type: "number", name: "top", min: 1, max: 50, value: state.top })),
  h("button", { type: "submit" }, "Apply"),
  state.error ? link(trendsHref({ ...state, error: "" }), "clear the error", { id: "clear-error" }) : null);
  if (!p.length) {
    view().replaceChildren(h("h1", {}, "Trends"), controls,
      h("p", { class: "quiet", id: "pick-hint" }, "Pick one or more projects above."));
    return;
  }
  const [data, named] = await Promise.all([
    gql(Q_TRENDS, { p, e: state.error ? { id: state.error } : null, top: state.top,
      since: state.since ? `${state.since}T00:00:00Z` : null,
      until: state.until ? `${state.until}T23:59:59Z` : null }),
    state.error ? gql(Q_NAME, { id: state.error }) : Promise.resolve(null),
  ]);
  if (!current()) return;
  const t = data.trends;
  const rows = (errors, id) => errors.length ? table(
    ["Error", "Project", "Sightings", "Tasks", "First seen", "Last seen", "Fixes", "State", ""],
    errors.map((e) => [link(errorHref(e.id), shorten(e.template || e.kind || e.key, 90), { class: "error-link" }),
      e.project, String(e.sightings), String(e.tasks), when(e.firstSeen), when(e.lastSeen),
      String(e.fixes), e.open ? h("span", { class: "badge open" }, "open") : h("span", { class: "badge" }, "closed"),
      link(trendsHref({ ...state, error: e.id }), "weekly trend", { class: "trend-link" })]),
    { id, class: "grid" }) : h("p", { class: "quiet", id }, "None in this window.");
  const head = named?.error
    ? h("h2", {}, `Weekly sightings: ${shorten(named.error.template || named.error.kind || named.error.key, 120)}`)
    : null;
  const weekly = state.error
    ? [head, t.weeks.length ? chartAndTable(t.weeks, p) : h("p", { class: "quiet", id: "trend-chart" },
      "No sighting of this error in the window, in these projects."),
    h("p", { class: "quiet" }, `Counted over ${t.errors.length} Error node(s): the error and its family in each project.`)]
    : h("p", { class: "quiet" }, "Choose an error below (weekly trend) to see its sightings week by week.");
  view().replaceChildren(h("h1", {}, "Trends"), controls, ...[weekly].flat().filter(Boolean),
    h("h2", {}, "Recurring in the window"), rows(t.recurring, "recurring"),
    h("h2", {}, "Newly appearing in the window"), rows(t.newlyAppearing, "newly-appearing"));
}

// Every week from the first to the last with a sighting (weeks without any count 0).
function allWeeks(weeks) {
  const times = weeks.map((w) => Date.parse(`${w.week}T00:00:00Z`));
  const out = [];
  for (let t = Math.min(...times); t <= Math.max(...times); t += 7 * DAY) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

function chartAndTable(weeks, projects) {
  const names = [...new Set([...projects, ...weeks.map((w) => w.project)])]
    .filter((name) => weeks.some((w) => w.project === name));
  const days = allWeeks(weeks);
  const count = new Map(weeks.map((w) => [`${w.project}|${w.week}`, w.sightings]));
  const at = (name, day) => count.get(`${name}|${day}`) || 0;
  const top = Math.max(1, ...weeks.map((w) => w.sightings));
  const step = top <= 5 ? 1 : Math.ceil(top / 5);
  const ceiling = Math.ceil(top / step) * step;
  const width = 760, height = 300, left = 56, right = 12, head = 14, foot = 58;
  const plotW = width - left - right, plotH = height - head - foot;
  const slot = plotW / days.length, bar = Math.max(2, Math.min(28, (slot * 0.8) / names.length));
  const y = (v) => head + plotH - (plotH * v) / ceiling;
  const svg = s("svg", { id: "trend-chart", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-labelledby": "trend-chart-title trend-chart-desc" },
  s("title", { id: "trend-chart-title" }, "Sightings per week per project"),
  s("desc", { id: "trend-chart-desc" }, `${days.length} weeks from ${days[0]} to ${days.at(-1)}; `
    + "the table beside the chart holds the same numbers."));
  for (let v = 0; v <= ceiling; v += step) {
    svg.append(s("line", { class: "grid-line", x1: left, x2: width - right, y1: y(v), y2: y(v) }),
      s("text", { class: "tick y-tick", x: left - 6, y: y(v) + 4, "text-anchor": "end" }, String(v)));
  }
  const every = Math.ceil(days.length / 10); // at most ten week labels: they stay readable
  days.forEach((day, i) => {
    const x0 = left + i * slot + (slot - bar * names.length) / 2;
    names.forEach((name, k) => {
      const v = at(name, day);
      svg.append(s("rect", { class: "bar", x: x0 + k * bar, y: y(v), width: bar - 1,
        height: Math.max(0, head + plotH - y(v)), fill: PALETTE[k % PALETTE.length],
        "data-project": name, "data-week": day, "data-count": v },
      s("title", {}, `${name}, week of ${day}: ${v} sighting${v === 1 ? "" : "s"}`)));
    });
    if (i % every === 0) {
      svg.append(s("text", { class: "tick x-tick", x: left + i * slot + slot / 2, y: head + plotH + 16,
        "text-anchor": "middle" }, day.slice(5)));
    }
  });
  svg.append(
    s("line", { class: "axis", x1: left, x2: width - right, y1: head + plotH, y2: head + plotH }),
    s("line", { class: "axis", x1: left, x2: left, y1: head, y2: head + plotH }),
    s("text", { class: "axis-label", x: left + plotW / 2, y: height - 18, "text-anchor": "middle" },
      `Week (starting Monday, UTC), ${days[0].slice(0, 4)}`),
    s("text", { class: "axis-label", x: 14, y: head + plotH / 2, "text-anchor": "middle",
      transform: `rotate(-90 14 ${head + plotH / 2})` }, "Sightings"));
  const key = h("p", { class: "legend chart-key" }, names.map((name, k) => [
    h("span", { class: "swatch", "data-colour": PALETTE[k % PALETTE.length], "aria-hidden": "true" }),
    ` ${name}   `]));
  for (const sw of key.querySelectorAll(".swatch")) sw.style.background = sw.dataset.colour;
  const numbers = table(["Week of", ...names, "All"], days.map((day) => [day,
    ...names.map((name) => String(at(name, day))),
    String(names.reduce((sum, name) => sum + at(name, day), 0))]), { id: "trend-table", class: "grid" });
  numbers.prepend(h("caption", {}, "Sightings per week per project (the chart's numbers)"));
  return h("div", { class: "trend-pane" }, h("figure", {}, svg, key), numbers);
}
