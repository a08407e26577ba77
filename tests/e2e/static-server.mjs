// A minimal static file server for the end-to-end tests: GET/HEAD only,
// loopback only, no directory listings, nothing outside `root`.
import { createServer } from "node:http";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
};

function send(res, status, text) {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
  res.end(text);
}

/** Maps a request path onto a file under root, or null if it escapes root. */
function fileFor(root, pathname) {
  let decoded;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes("\0")) return null;
  const file = resolve(join(root, decoded));
  return file === root || file.startsWith(root + sep) ? file : null;
}

/**
 * Serves `root` on 127.0.0.1. Resolves to `{url, close}`; `url` ends in "/",
 * `close()` resolves once the server and its connections are closed.
 */
export async function serveStatic(root, { port = 0, host = "127.0.0.1" } = {}) {
  if (host !== "127.0.0.1") throw new Error(`serveStatic binds 127.0.0.1 only, not ${host}`);
  const base = resolve(root);

  const server = createServer(async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      return send(res, 405, "method not allowed\n");
    }
    const { pathname } = new URL(req.url, "http://localhost");
    let file = fileFor(base, pathname);
    if (!file) return send(res, 404, "not found\n");
    try {
      let info = await stat(file);
      if (info.isDirectory()) {
        file = join(file, "index.html");
        info = await stat(file);
      }
      if (!info.isFile()) return send(res, 404, "not found\n");
      res.writeHead(200, {
        "content-type": MIME[extname(file).toLowerCase()] ?? "application/octet-stream",
        "content-length": info.size,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      });
      if (req.method === "HEAD") return res.end();
      createReadStream(file)
        .on("error", () => res.destroy())
        .pipe(res);
    } catch (err) {
      if (err.code === "ENOENT" || err.code === "ENOTDIR") return send(res, 404, "not found\n");
      send(res, 500, `error: ${err.code ?? err.message}\n`);
    }
  });

  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      ok();
    });
  });
  const { port: bound } = server.address();

  return {
    url: `http://${host}:${bound}/`,
    close: () =>
      new Promise((ok, fail) => {
        server.close((err) => (err ? fail(err) : ok()));
        server.closeAllConnections();
      }),
  };
}
