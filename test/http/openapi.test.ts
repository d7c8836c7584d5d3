import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('openapi routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('GET /openapi.json serves an OpenAPI 3.1 document that a standalone validator accepts', async () => {
    const res = await t.app.request('/openapi.json');
    expect(res.status).toBe(200);
    const document = await res.json();
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('declares the three security schemes: bearer JWT, cookie and X-Service-Auth', async () => {
    const document = await (await t.app.request('/openapi.json')).json();
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['bearerAuth', 'cookieAuth', 'serviceAuth']);
    expect(document.components.securitySchemes.serviceAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Service-Auth' });
  });

  it('every operation has a tag, a summary and declares its error responses with the envelope', async () => {
    const document = await (await t.app.request('/openapi.json')).json();
    const problems: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, Record<string, unknown>>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (!Array.isArray(operation.tags) || operation.tags.length === 0) problems.push(`${name}: no tag`);
        if (!operation.summary) problems.push(`${name}: no summary`);
        const responses = operation.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>;
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) >= 400 && !path.endsWith('/health') && !response.content?.['application/json']) {
            problems.push(`${name}: ${status} has no JSON body`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('GET /docs serves the API reference page wired to /openapi.json and the local script', async () => {
    const res = await t.app.request('/docs');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('/openapi.json');
    expect(html).toContain('/docs/scalar.js');
  });
});
