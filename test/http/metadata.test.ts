import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, healthyChecks, type TestApp } from '../helpers/app.js';

describe('metadata routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('GET /metadata returns every enumeration from SQL, field by field', async () => {
    const res = await t.app.request('/metadata');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toEqual({
      difficulty_levels: [
        { value: 'beginner', label: 'Beginner', order: 1 },
        { value: 'intermediate', label: 'Intermediate', order: 2 },
        { value: 'advanced', label: 'Advanced', order: 3 },
        { value: 'expert', label: 'Expert', order: 4 },
      ],
      journey_statuses: [
        { value: 'in_progress', label: 'In progress' },
        { value: 'completed', label: 'Completed' },
        { value: 'paused', label: 'Paused' },
      ],
      learning_verbs: [
        { value: 'started', label: 'Started' },
        { value: 'completed', label: 'Completed' },
        { value: 'mastered', label: 'Mastered' },
        { value: 'bookmarked', label: 'Bookmarked' },
      ],
    });
  });

  it('GET /metadata/difficulty-levels returns {data:[{value,label,order}]} in order', async () => {
    const res = await t.app.request('/metadata/difficulty-levels');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.data.map((d: { value: string }) => d.value)).toEqual(['beginner', 'intermediate', 'advanced', 'expert']);
    expect(body.data[2]).toEqual({ value: 'advanced', label: 'Advanced', order: 3 });
  });

  it('GET /metadata reflects a label changed in the database', async () => {
    await t.db.sql`update app.journey_statuses set label = 'On hold' where value = 'paused'`;
    const body = await (await t.app.request('/metadata')).json();
    expect(body.journey_statuses[2]).toEqual({ value: 'paused', label: 'On hold' });
    await t.db.sql`update app.journey_statuses set label = 'Paused' where value = 'paused'`;
  });

  it('GET /metadata/health answers ok with the database check', async () => {
    const res = await t.app.request('/metadata/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', checks: healthyChecks(t) });
  });
});
