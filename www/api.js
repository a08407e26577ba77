// The API reference: fetches /openapi.json (generated from the crate's route
// and schema tables) and renders every operation with plain DOM calls.
// Nothing is loaded from the network but the document itself.

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
};

/** Follows a local `$ref` (`#/components/...`). */
function resolve(doc, schema) {
  let s = schema;
  while (s && s.$ref) s = s.$ref.slice(2).split("/").reduce((o, k) => o?.[k.replaceAll("~1", "/").replaceAll("~0", "~")], doc);
  return s ?? {};
}

/** One line for a schema's type: `string ≤ 256`, `integer 1..100`, `"a" | "b"`. */
function typeText(s) {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf) return s.anyOf.map(typeText).join(" or ");
  const types = [].concat(s.type ?? "any");
  let t = types.join(" | ");
  if (s.format) t += ` (${s.format})`;
  if (s.pattern && s.format === undefined && s.type !== "string") t += " pattern";
  if (s.maxLength !== undefined) t += ` ≤ ${s.maxLength} bytes`;
  if (s.minimum !== undefined || s.maximum !== undefined) t += ` ${s.minimum ?? ""}..${s.maximum ?? ""}`;
  if (s.maxItems !== undefined) t += ` ≤ ${s.maxItems} items`;
  if (types.includes("object") && s.additionalProperties === false) t += ", closed";
  return t;
}

/** A schema as a nested list of its fields. */
function schemaTree(doc, schema, depth = 0, answer = false) {
  const s = resolve(doc, schema);
  if (depth > 6) return el("span", { class: "muted" }, "…");
  if (s.anyOf) {
    return el("div", { class: "api-schema" }, el("span", { class: "muted" }, "one of:"), el("ol", {}, s.anyOf.map((o) => el("li", {}, schemaTree(doc, o, depth + 1, answer)))));
  }
  const types = [].concat(s.type ?? []);
  if (types.includes("array") && s.items) {
    return el("div", { class: "api-schema" }, el("code", {}, typeText(s)), " of ", schemaTree(doc, s.items, depth + 1, answer));
  }
  if (types.includes("object") && s.properties && Object.keys(s.properties).length > 0) {
    const required = new Set(s.required ?? []);
    const rows = Object.entries(s.properties).map(([name, p]) => {
      const ps = resolve(doc, p);
      // An array's own line already says "array ≤ n items": show its items.
      const inner = ps.items && !ps.properties ? resolve(doc, ps.items) : ps;
      const nested = inner.properties || inner.anyOf || inner.items ? schemaTree(doc, inner, depth + 1, answer) : null;
      return el(
        "li",
        {},
        el("code", { class: "api-field" }, name),
        required.has(name) ? el("span", { class: "api-req" }, " required") : null,
        " ",
        el("span", { class: "api-type" }, typeText(ps)),
        ps.description ? el("span", { class: "muted" }, ` — ${ps.description}`) : null,
        nested,
      );
    });
    const more = s.additionalProperties === false ? null : el("li", { class: "muted" }, answer ? "may hold other fields" : "other fields are ignored");
    return el("ul", { class: "api-schema" }, rows, more);
  }
  return el("code", { class: "api-type" }, typeText(s));
}

function operationView(doc, path, method, op) {
  const head = el(
    "summary",
    {},
    el("span", { class: `api-method api-${method}` }, method.toUpperCase()),
    " ",
    el("code", { class: "api-path" }, path),
    " ",
    el("span", { class: "api-summary" }, op.summary ?? ""),
    " ",
    el("span", { class: `api-scope api-scope-${op["x-edgemem-scope"]}`, title: "the API key scope it needs" }, op["x-edgemem-scope"]),
    op["x-edgemem-worker-only"] ? el("span", { class: "api-scope", title: "answered by the Worker, not the npm package" }, "worker") : null,
  );
  const body = el("div", { class: "api-body" }, el("p", { class: "muted" }, "operationId ", el("code", {}, op.operationId)));
  if (op.parameters?.length) {
    body.append(
      el("h4", {}, "Parameters"),
      el(
        "table",
        { class: "api-params" },
        el("thead", {}, el("tr", {}, el("th", {}, "name"), el("th", {}, "in"), el("th", {}, "type"), el("th", {}, "description"))),
        el(
          "tbody",
          {},
          op.parameters.map((p) =>
            el("tr", {}, el("td", {}, el("code", {}, p.name), p.required ? el("span", { class: "api-req" }, " required") : null), el("td", {}, p.in), el("td", {}, typeText(resolve(doc, p.schema))), el("td", {}, p.description ?? "")),
          ),
        ),
      ),
    );
  }
  if (op.requestBody) {
    const schema = op.requestBody.content?.["application/json"]?.schema;
    body.append(el("h4", {}, "Request body ", el("span", { class: "muted" }, op.requestBody.required ? "(application/json)" : "(application/json, may be omitted)")), schemaTree(doc, schema));
  }
  const ok = op.responses?.["200"];
  if (ok) body.append(el("h4", {}, "200 answer"), schemaTree(doc, ok.content?.["application/json"]?.schema ?? {}, 0, true));
  const errors = Object.keys(op.responses ?? {}).filter((s) => s !== "200");
  if (errors.length) {
    body.append(
      el("h4", {}, "Errors ", el("span", { class: "muted" }, "{detail, code}")),
      el("ul", { class: "api-errors" }, errors.map((s) => el("li", {}, el("code", {}, s), " ", resolve(doc, op.responses[s]).description ?? ""))),
    );
  }
  const d = el("details", { class: "api-op", "data-testid": "api-op", "data-search": `${method} ${path} ${op.summary ?? ""} ${op["x-edgemem-scope"]}`.toLowerCase() }, head, body);
  return d;
}

async function main() {
  const status = document.getElementById("api-status");
  const list = document.getElementById("api-ops");
  let doc;
  try {
    const r = await fetch("./openapi.json");
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    doc = await r.json();
  } catch (e) {
    status.textContent = `Could not load /openapi.json: ${e.message}`;
    status.classList.add("error");
    return;
  }
  document.getElementById("api-intro").textContent = `${doc.info.title} ${doc.info.version}, OpenAPI ${doc.openapi}. ${doc.info.description}`;
  const groups = new Map();
  let n = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = op.tags?.[0] ?? "other";
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag).push(operationView(doc, path, method, op));
      n++;
    }
  }
  for (const [tag, ops] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    list.append(el("section", { class: "api-group" }, el("h3", {}, tag), ops));
  }
  document.getElementById("api-count").textContent = `(${n})`;
  status.textContent = "";
  status.hidden = true;
  const filter = document.getElementById("api-filter");
  filter.addEventListener("input", () => {
    const q = filter.value.trim().toLowerCase();
    for (const d of list.querySelectorAll(".api-op")) d.hidden = q !== "" && !d.dataset.search.includes(q);
    for (const g of list.querySelectorAll(".api-group")) g.hidden = [...g.querySelectorAll(".api-op")].every((d) => d.hidden);
  });
}

main();
