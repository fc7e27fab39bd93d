// The explorer's shared parts: building DOM from values (text, never markup), the GraphQL
// call with the entered token, and the frame's problem box.

export const TOKEN_KEY = "metisgraph.token";
const SVG = "http://www.w3.org/2000/svg";

export function build(element, attrs, children) {
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

export const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
export const s = (tag, attrs, ...children) => build(document.createElementNS(SVG, tag), attrs, children);
export const link = (href, text, attrs = {}) => h("a", { href, ...attrs }, text);
export const errorHref = (id) => `#/error/${encodeURIComponent(id)}`;
export const nodeHref = (id) => `#/node/${encodeURIComponent(id)}`;
export const kindClass = (kind) => `k-${String(kind).replace(/[^A-Za-z]/g, "")}`;

export function when(value) {
  if (!value) return "—";
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString().slice(0, 16).replace("T", " ");
}

export function shorten(text, size) {
  const t = String(text ?? "");
  return t.length > size ? `${t.slice(0, size - 1)}…` : t;
}

export function table(headings, rows, attrs = {}) {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, headings.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))));
}

export class AuthError extends Error {}
export class ApiError extends Error {}

export async function gql(query, variables = {}) {
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

export const view = () => document.getElementById("view");

export function problem(message) {
  const box = document.getElementById("problems");
  box.hidden = false;
  box.append(h("p", { class: "problem" }, message));
}

export function clearProblems() {
  const box = document.getElementById("problems");
  box.replaceChildren();
  box.hidden = true;
}

export function failed(error) {
  if (error instanceof AuthError) {
    problem(`The server needs a valid token: ${error.message}`);
    document.getElementById("token-state").textContent = "token required";
    document.getElementById("token").focus();
  } else {
    problem(error instanceof ApiError ? error.message : `Request failed: ${error.message}`);
  }
  view().replaceChildren();
}

// A route's query string with the empty values left out, so links stay short.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") q.set(k, v);
  const text = q.toString();
  return text ? `?${text}` : "";
}

export function list(params, name) {
  return (params.get(name) || "").split(",").map((x) => x.trim()).filter(Boolean);
}
