import { describe, expect, it } from 'vitest';
import { saysCreated } from '../../src/http/respond.js';

// The write routes answer 201 or 200 from the body's `created` key, read without parsing it.
describe('saysCreated', () => {
  it('reads the created key as jsonb and PostgREST print it, or compact', () => {
    expect(saysCreated('{"id": "a", "created": true, "spark_progress": []}')).toBe(true);
    expect(saysCreated('{"id":"a","created":true}')).toBe(true);
    expect(saysCreated('{"id": "a", "created": false, "spark_progress": []}')).toBe(false);
    expect(saysCreated('{"id": "a"}')).toBe(false);
  });

  it('is not fooled by the same text inside a string value', () => {
    for (const title of ['"created": true', 'x\\"created": true', '\\', '"created":true}']) {
      const body = JSON.stringify({ created: false, spark_progress: [{ title }], title });
      expect(JSON.parse(body).created).toBe(false);
      expect(saysCreated(body)).toBe(false);
      expect(saysCreated(JSON.stringify({ title, created: true }))).toBe(true);
    }
  });
});
