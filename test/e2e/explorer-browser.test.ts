import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/test-database.js';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const root = path.resolve(import.meta.dirname, '../..');
/** Kept after the run (test-artifacts/ is where `npm test` leaves its reports). */
const SHOTS = path.join(root, 'test-artifacts/explorer');

/**
 * The done-when of the explorer, as a person does it: `npm start` with the defaults of a fresh
 * clone (development, no provider configured: the dev sign-in runs), open /explore in Chromium,
 * sign in with the dev provider, enroll, complete a spark, see the progress, master a
 * prerequisite and see the learning path shrink, search, sign out. Only the port, the database
 * (a fresh clone of the migrated template instead of the embedded one; the demo catalog is
 * loaded into it on start) and the data directory of the generated development secret differ.
 */
describe.skipIf(!hasChromium)('explorer: npm start, then /explore in a browser', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let base: string;
  let work: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    db = await createTestDatabase();
    work = await mkdtemp(path.join(os.tmpdir(), 'sparkpath-explorer-'));
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATABASE_URL: db.url, EMBEDDED_PG_DATA_DIR: work, LOG_LEVEL: 'info' };
    // A fresh clone's environment: NODE_ENV unset (vitest sets it to test).
    delete env.NODE_ENV;
    server = await startServerProcess('npm', ['start'], env);
    base = `http://localhost:${port}`;
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await db?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** A full-page screenshot once the last toast has gone (it would cover the page). */
  const shot = async (page: Page, name: string) => {
    await page.waitForFunction(() => !document.querySelector('.toast'), undefined, { timeout: 10_000 });
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  it('starts with the dev sign-in and names the explorer', () => {
    expect(server.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('dev sign-in'))).toMatchObject({ callback: `${base}/explore/callback` });
    expect(server.lines.find((l) => l.msg === 'Sparkpath API listening')).toMatchObject({ explorer: `${base}/explore` });
  });

  it('signs in with the dev provider, enrolls, completes a spark, sees progress and the path change, searches and signs out', async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    // Every /user call carries the bearer header (the spec's rule; a cookie alone is 401 there).
    const userCalls: { url: string; authorization: string | undefined }[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/user/')) userCalls.push({ url: request.url(), authorization: request.headers().authorization });
    });

    // Anonymous: the catalog.
    await page.goto(`${base}/explore`);
    await page.waitForSelector('[data-domain="data-and-ai"]');
    expect(await page.locator('.domain-card').count()).toBe(4);
    await shot(page, '01-catalog');
    await page.click('[data-domain="data-and-ai"] h3 a');
    await page.waitForSelector('[data-trail="sql-from-zero"]');
    expect(page.url()).toBe(`${base}/explore/domains/data-and-ai`);
    await shot(page, '02-domain');
    await page.click('[data-trail="sql-from-zero"] h3 a');
    await page.waitForSelector('[data-concept]');
    const sparks = await page.locator('.spark-row').count();
    expect(sparks).toBe(12);
    await shot(page, '03-trail-anonymous');

    // Sign in: the dev provider's login page, a demo learner, back on the same trail.
    await page.click('[data-action="sign-in"]');
    await page.click('.menu [data-provider="dev"]');
    await page.waitForSelector('button[data-email="learner@example.com"]');
    expect(new URL(page.url()).hostname).toBe('127.0.0.1');
    await shot(page, '04-dev-sign-in');
    await page.click('button[data-email="learner@example.com"]');
    await page.waitForSelector('.user[data-user="learner@example.com"]');
    await page.waitForSelector('[data-action="enroll"]');
    expect(page.url()).toBe(`${base}/explore/trails/sql-from-zero?domain=data-and-ai`);
    expect(await page.textContent('.user')).toContain('Lena Learner');
    // The tokens: the refresh token in an HttpOnly cookie (Secure works on http://localhost),
    // the access token in memory only.
    const cookies = await context.cookies(`${base}/auth/refresh`);
    expect(cookies.find((c) => c.name === 'svc-refresh-token')).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/auth' });
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toMatch(/eyJ/);

    // Enroll, start and complete the first spark: the journey's progress moves.
    await page.click('[data-action="enroll"]');
    await page.waitForSelector('[data-journey-panel] [data-progress="0"]');
    await page.locator('.spark-row [data-action="start"]').first().click();
    await page.waitForSelector('.spark-row [data-action="complete"]');
    await page.locator('.spark-row [data-action="complete"]').first().click();
    await page.waitForSelector('[data-journey-panel] [data-progress="8"]');
    expect(await page.getAttribute('[data-journey-panel] [data-completed]', 'data-completed')).toBe('1/12');
    expect(await page.locator('.spark-row .status-completed').count()).toBe(1);
    await shot(page, '05-trail-progress');

    // A spark later in the trail: its graph and the learning path to it.
    await page.click('[data-spark="inner-joins"] .spark-title');
    await page.waitForSelector('.graph-card svg.graph');
    await page.waitForSelector('.path-card');
    const stepsBefore = Number(await page.getAttribute('.path-card', 'data-path-steps'));
    expect(stepsBefore).toBeGreaterThan(1);
    expect(await page.locator('.graph .node.root').count()).toBe(1);
    // The completed first spark is a prerequisite, drawn as completed.
    expect(await page.locator('.graph .node-completed').count()).toBeGreaterThan(0);
    await shot(page, '06-spark-graph-and-path');

    // Depth and direction controls ask the API again.
    const nodesAtTwo = await page.locator('.graph .node').count();
    await page.click('[data-direction="ancestors"]');
    await page.waitForSelector('[data-direction="ancestors"].active');
    expect(await page.locator('.graph .node').count()).toBeLessThan(nodesAtTwo);
    await page.locator('[data-depth]').fill('1');
    await page.waitForFunction(() => document.querySelector('.depth-value')?.textContent === '1' && document.querySelectorAll('.graph .node').length > 0);

    // Mastering the first prerequisite on the path takes it off the path.
    const firstStep = await page.getAttribute('.path li:first-child', 'data-step');
    await page.click(`.path li:first-child a`);
    // The spark page just left has the same buttons: wait for the step's own page.
    await page.waitForSelector(`.page-head[data-spark-page="${firstStep}"]`);
    await page.click('[data-verb="mastered"]');
    // Earlier toasts may still be showing: wait for this event's own.
    await page.waitForSelector('.toast:has-text("Mastered")');
    await page.goBack();
    await page.waitForSelector('.path-card');
    await page.waitForFunction((before) => Number(document.querySelector('.path-card')?.getAttribute('data-path-steps')) === before - 1, stepsBefore);
    expect(await page.locator(`.path li[data-step="${firstStep}"]`).count()).toBe(0);
    expect(await page.textContent('.path-card .meta')).toContain('1 mastered skipped');
    await shot(page, '07-path-after-mastered');

    // Search with autocomplete.
    await page.fill('.search input', 'joi');
    await page.waitForSelector('.suggestions li[data-suggestion]');
    await shot(page, '08-autocomplete');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.result');
    expect(new URL(page.url()).pathname).toBe('/explore/search');
    await shot(page, '09-search');

    // My journeys, then a reload: the session comes back from the refresh cookie.
    await page.click('.nav a[href="/explore/journeys"]');
    await page.waitForSelector('[data-journey="sql-from-zero"]');
    await page.reload();
    await page.waitForSelector('[data-journey="sql-from-zero"]');
    expect(await page.textContent('[data-journey="sql-from-zero"]')).toMatch(/\d+%/);
    await shot(page, '10-journeys');

    // Sign out: the cookies are gone, a reload stays signed out.
    await page.click('[data-action="sign-out"]');
    await page.waitForSelector('[data-action="sign-in"]');
    expect((await context.cookies(`${base}/auth/refresh`)).filter((c) => c.name === 'svc-refresh-token' || c.name === 'svc-access-token')).toEqual([]);
    await page.reload();
    await page.waitForSelector('[data-action="sign-in"]');
    await shot(page, '11-signed-out');

    expect(userCalls.length).toBeGreaterThan(5);
    expect(userCalls.filter((call) => !call.authorization?.startsWith('Bearer ey'))).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
