import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';


describe.skipIf(!hasChromium)('API reference page in a real browser', () => {
  let t: TestApp;
  let server: ServerType;
  let browser: Browser;
  let baseUrl: string;

  beforeAll(async () => {
    t = await createTestApp();
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await t?.close();
  });

  it('GET /docs renders every tag of /openapi.json and is saved as a screenshot', async () => {
    const document = await (await fetch(`${baseUrl}/openapi.json`)).json();
    const tags = [...new Set(Object.values<Record<string, { tags?: string[] }>>(document.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? [])))];
    expect(tags.length).toBeGreaterThan(0);

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const failedRequests: string[] = [];
    page.on('requestfailed', (request) => failedRequests.push(request.url()));
    await page.goto(`${baseUrl}/docs`, { waitUntil: 'networkidle' });
    for (const tag of tags) {
      await page.getByText(tag, { exact: true }).first().waitFor({ timeout: 20_000 });
    }
    const artifacts = path.resolve('test-artifacts');
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, 'api-reference.png'), fullPage: false });
    expect(failedRequests.filter((url) => url.startsWith(baseUrl))).toEqual([]);
  }, 60_000);
});
