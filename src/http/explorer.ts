import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono, type Context } from 'hono';
import { ApiError, notFound } from './api-error.js';
import type { AppEnv } from './env.js';

/**
 * The explorer (/explore): static files, a page of HTML, a stylesheet and the script bundle
 * `npm run build` makes from explorer/src (npm start builds it; so does the test setup). Every
 * path under /explore that is not an asset is the page, which routes on the URL itself.
 * Files are read when asked, so a rebuilt bundle is served without a restart; the ETag is a
 * digest of the bytes, so a browser revalidates cheaply.
 */
const ASSETS: Record<string, { file: string; type: string }> = {
  'app.js': { file: 'dist/explorer/app.js', type: 'text/javascript; charset=utf-8' },
  'app.js.map': { file: 'dist/explorer/app.js.map', type: 'application/json; charset=utf-8' },
  'styles.css': { file: 'explorer/styles.css', type: 'text/css; charset=utf-8' },
};
const PAGE = 'explorer/index.html';
// Same origin only: the page calls this API and nothing else, and loads nothing from elsewhere.
const PAGE_SECURITY = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** The repository root: the nearest folder with a package.json above this module (src/http, or dist/src once bundled). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the explorer module');
    dir = parent;
  }
  return dir;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `callbackUrl` is AUTH_CALLBACK_URL. A sign-in's browser-binding cookie belongs to one host
 * name, so outside production a page opened on another loopback name than the callback's
 * (127.0.0.1 while the callback says localhost) is sent there first.
 */
export function explorerRouter(options: { callbackUrl: string; production: boolean }) {
  const root = projectRoot();
  const router = new Hono<AppEnv>();
  const callback = new URL(options.callbackUrl);

  async function send(c: Context<AppEnv>, file: string, type: string, headers: Record<string, string> = {}) {
    let body: Buffer;
    try {
      body = await readFile(path.join(root, file));
    } catch {
      throw new ApiError('SERVICE_UNAVAILABLE', 'The explorer is not built: run `npm run build` (npm start does)', { file });
    }
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const common = { ETag: etag, 'Cache-Control': 'no-cache', ...headers };
    if (c.req.header('if-none-match') === etag) return c.body(null, 304, common);
    return c.body(new Uint8Array(body), 200, { 'Content-Type': type, ...common });
  }

  router.get('/assets/:file', (c) => {
    const asset = ASSETS[c.req.param('file')];
    if (!asset) throw notFound('No such explorer asset');
    return send(c, asset.file, asset.type);
  });
  router.get('*', async (c) => {
    const url = new URL(c.req.url);
    if (!options.production && url.host !== callback.host && LOOPBACK.has(url.hostname) && LOOPBACK.has(callback.hostname)) {
      return c.redirect(`${callback.origin}${url.pathname}${url.search}`, 302);
    }
    return send(c, PAGE, 'text/html; charset=utf-8', { 'Content-Security-Policy': PAGE_SECURITY, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'same-origin' });
  });
  return router;
}
