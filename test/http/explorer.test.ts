import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOfflineApp } from '../helpers/app.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('explorer routes (/explore)', () => {
  let offline: ReturnType<typeof createOfflineApp>;
  beforeAll(() => {
    offline = createOfflineApp({}, { AUTH_CALLBACK_URL: 'http://localhost:3000/explore/callback' });
  });
  afterAll(() => offline.close());

  it.each(['/explore', '/explore/', '/explore/trails/sql-from-zero?domain=data-and-ai', '/explore/callback?code=c&state=s'])('GET %s is the page, locked to this origin', async (url) => {
    const res = await offline.app.request(`http://localhost:3000${url}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(await res.text()).toBe(readFileSync(path.join(root, 'explorer/index.html'), 'utf8'));
  });

  it('serves the bundle and the stylesheet with an ETag, and 304 on a match', async () => {
    const script = await offline.app.request('http://localhost:3000/explore/assets/app.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(Buffer.from(await script.arrayBuffer()).equals(readFileSync(path.join(root, 'dist/explorer/app.js')))).toBe(true);
    const etag = script.headers.get('etag')!;
    const again = await offline.app.request('http://localhost:3000/explore/assets/app.js', { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    const styles = await offline.app.request('http://localhost:3000/explore/assets/styles.css');
    expect(styles.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await styles.text()).toContain('.graph');
  });

  it('an unknown asset is a 404 in the error envelope', async () => {
    const res = await offline.app.request('http://localhost:3000/explore/assets/../../package.json');
    expect(res.status).toBe(404);
    const other = await offline.app.request('http://localhost:3000/explore/assets/secrets.txt');
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('outside production, a page opened on another loopback name goes to the callback\'s (the sign-in cookie is per host name)', async () => {
    const res = await offline.app.request('http://127.0.0.1:3000/explore/trails/x?domain=y');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://localhost:3000/explore/trails/x?domain=y');
    const production = createOfflineApp({}, { NODE_ENV: 'production', AUTH_CALLBACK_URL: 'http://localhost:3000/explore/callback' });
    try {
      expect((await production.app.request('http://127.0.0.1:3000/explore')).status).toBe(200);
    } finally {
      await production.close();
    }
  });
});
