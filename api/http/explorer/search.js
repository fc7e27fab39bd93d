// Search: a box for words, a message or a whole pasted stack trace. The server signs the text
// the way ingest and lineage do, so a trace from another machine (other paths, other line
// numbers) finds its error; the same text finds episodes by full text. The link holds it all:
//   #/search?q=<text>&p=A,B   (no p: every project the token may read)

import { errorHref, gql, h, link, list, nodeHref, query, shorten, table, view, when } from "./dom.js";

const Q_SEARCH = `query($text: String!, $p: [String!], $first: Int!) {
  search(text: $text, projects: $p, first: $first) {
    signed
    errors { id project key kind template sightings tasks firstSeen lastSeen fixes open matched }
    episodes { episode { id project episodeId taskId createdAt summary outcome } score errors }
  }
}`;
const FIRST = 50;

export const searchHref = (text, projects) => `#/search${query({ q: text, p: projects.join(",") })}`;

export async function showSearch(where, current) {
  const text = where.params.get("q") || "";
  const projects = list(where.params, "p");
  const box = h("textarea", { id: "search-text", name: "q", rows: 4, required: true,
    placeholder: "an error message, a pasted stack trace, or words" }, text);
  const form = h("form", { id: "search-form", class: "search",
    onsubmit: (event) => {
      event.preventDefault();
      location.hash = searchHref(box.value, projects);
    } },
  h("label", { for: "search-text" }, "Find errors and episodes by text"), box,
  h("p", {}, h("button", { type: "submit" }, "Search"), " ",
    h("span", { class: "quiet" }, projects.length ? `in ${projects.join(", ")}`
      : "in every project this token may read (tick projects above to narrow)")));
  if (!text.trim()) {
    view().replaceChildren(h("h1", {}, "Search"), form);
    return;
  }
  const found = (await gql(Q_SEARCH, { text, p: projects.length ? projects : null, first: FIRST })).search;
  if (!current()) return;
  const signed = found.signed.length
    ? `The text signs to ${found.signed.length} error${found.signed.length > 1 ? "s" : ""} `
      + `(${found.signed.join(", ")}).`
    : "No error signature in the text: errors below come from the episodes it finds.";
  const errors = found.errors.length
    ? table(["Error", "Project", "Found by", "Sightings", "Tasks", "Fixes", "State", "First seen", "Last seen", ""],
      found.errors.map((e) => [
        link(errorHref(e.id), shorten(e.template || e.kind || e.key, 100), { class: "error-link" }),
        e.project, e.matched === "SIGNATURE" ? "signature" : "episodes", String(e.sightings),
        String(e.tasks), String(e.fixes),
        e.open ? h("span", { class: "badge open" }, "open") : h("span", { class: "badge" }, "closed"),
        when(e.firstSeen), when(e.lastSeen), link(nodeHref(e.id), "graph"),
      ]), { id: "search-errors", class: "grid" })
    : h("p", { class: "quiet", id: "search-errors" }, "No error found.");
  const episodes = found.episodes.length
    ? table(["When", "Project", "Episode", "Outcome", "Errors hit", "Score"],
      found.episodes.map((x) => [
        when(x.episode.createdAt), x.episode.project,
        link(nodeHref(x.episode.id), shorten(x.episode.summary || x.episode.episodeId, 90),
          { class: "episode-link" }),
        x.episode.outcome || "—",
        x.errors.length ? x.errors.map((id, i) => [i ? ", " : "", link(errorHref(id), `#${i + 1}`)]) : "—",
        x.score.toFixed(2),
      ]), { id: "search-episodes", class: "grid" })
    : h("p", { class: "quiet", id: "search-episodes" }, "No episode found.");
  view().replaceChildren(h("h1", {}, "Search"), form,
    h("p", { id: "search-signed", class: "facts" }, signed),
    h("h2", {}, `Errors (${found.errors.length})`), errors,
    h("h2", {}, `Episodes (${found.episodes.length})`), episodes);
}
