// The npm tarball exactly as `npm publish` would ship it: `npm pack` of the
// built pkg/, into a scratch directory the caller removes.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../../", import.meta.url));
/** The built package; EDGEMEM_PKG_DIR points the tests at another build (e.g. an older one). */
export const pkgDir = process.env.EDGEMEM_PKG_DIR ?? join(root, "pkg");

/** Packs pkg/ into a new temp dir; returns `{ dir, tarball, files }` (`files`: paths inside the tarball). */
export function packPkg(prefix = "edgemem-pack-") {
  if (!existsSync(join(pkgDir, "edgemem_bg.wasm"))) throw new Error(`${pkgDir}/edgemem_bg.wasm does not exist; run \`make pkg\` first`);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const out = execFileSync("npm", ["pack", pkgDir, "--json", "--pack-destination", dir, "--loglevel=error"], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [info] = JSON.parse(out);
  return { dir, tarball: join(dir, info.filename), files: info.files.map((f) => f.path) };
}

/**
 * Opens `url` in `browser` and returns what the app's main.js reported on
 * `window.__edgemem`, plus any 4xx/5xx responses and page errors.
 */
export async function reportAt(browser, url, timeoutMs) {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} ${res.url()}`);
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.__edgemem !== undefined, null, { timeout: timeoutMs });
    return { result: await page.evaluate(() => window.__edgemem), problems };
  } finally {
    await page.close();
  }
}
