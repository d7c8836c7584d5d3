import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL, isEnvelope, rssMb, startApi, startPostgres, superuser, timedRequest, type Api, type Postgres } from './harness.js';
import { userToken } from './workload.js';

const RUNS_PER_OPERATION = FULL ? 300 : 20;

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: string }[];
  bodyKeys: string[];
}

const ascii = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });
const SQLISH = ["' or 1=1 --", "'; drop table app.sparks; --", '") or ("1"="1', '$1', '$$', '\\x00', '%00', '%', '%%', '%ZZ', '../../etc/passwd', "api.get_metadata()", '1e309', '-1', '0', '99999999999999999999999', 'NaN', 'true', 'null', '[]', '{}', '\u202e', '🙂🙂', 'Ωmega', '\\', '%2F%2F'];
const hostile = fc.oneof(
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.constantFrom(...SQLISH), weight: 3 },
  { arbitrary: fc.integer().map(String), weight: 2 },
  { arbitrary: fc.double().map(String), weight: 1 },
  { arbitrary: fc.uuid(), weight: 2 },
  // Huge values: under and over Node's 16 KB header limit once percent-encoded.
  { arbitrary: fc.constantFrom(1500, 6000).map((n) => 'x'.repeat(n)), weight: 1 },
  { arbitrary: fc.constant('\u00e9\u4e2d'.repeat(2000)), weight: 1 },
);
const jsonish = fc.oneof(fc.jsonValue({ maxDepth: 3 }), hostile, fc.constant(null), fc.integer(), fc.boolean(), fc.array(hostile, { maxLength: 3 }));

/** encodeURIComponent that survives lone surrogates by sending invalid UTF-8 instead. */
const encode = (text: string) => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
};

describe('hostile input', () => {
  let pg: Postgres | undefined;
  let api: Api | undefined;
  let operations: Operation[] = [];
  let token = '';

  beforeAll(async () => {
    pg = await startPostgres();
    api = await startApi({ DATABASE_URL: pg.url, DATABASE_API_URL: pg.apiUrl, SEED_DEMO_CONTENT: 'true' });
    const doc = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown>; $ref?: string } }> } }>>;
      components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> };
    };
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        const resolved = schema?.$ref ? doc.components?.schemas?.[schema.$ref.split('/').pop()!] : schema;
        operations.push({ method: method.toUpperCase(), path, params: op.parameters ?? [], bodyKeys: Object.keys(resolved?.properties ?? {}) });
      }
    }
    token = await userToken('11111111-2222-4333-8444-555555555555');
  });
  afterAll(async () => {
    await api?.stop();
    await pg?.dispose();
  });

  it('generated path segments, query strings, headers, cookies and bodies never get a 5xx, and every 4xx is an envelope', async () => {
    expect(operations.length).toBeGreaterThan(3);
    const rssBefore = rssMb(api!.pid);
    const seen: Record<number, number> = {};
    for (const op of operations) {
      if (op.path === '/docs') continue;
      const queryNames = op.params.filter((p) => p.in === 'query').map((p) => p.name);
      const request = fc.record({
        pathValues: fc.array(hostile, { minLength: 4, maxLength: 4 }),
        query: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...(queryNames.length ? queryNames : ['q'])), ascii(12)), hostile), { maxLength: 5 }),
        repeat: fc.boolean(),
        rawQuery: fc.option(fc.constantFrom('%', '%ZZ=1', 'a=%E0%A4%A', '&&&=&', 'page[]=1', '=', '?'), { nil: undefined }),
        auth: fc.oneof({ arbitrary: fc.constant('valid'), weight: 4 }, fc.constant('none'), ascii(60).map((s) => `Bearer ${s}`), ascii(40), fc.constant('Bearer a.b.c')),
        serviceAuth: fc.option(ascii(80), { nil: undefined }),
        cookie: fc.option(fc.tuple(ascii(60), ascii(60)).map(([a, b]) => `svc-access-token=${a}; svc-refresh-token=${b}`), { nil: undefined }),
        requestId: fc.option(ascii(300), { nil: undefined }),
        contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', ''),
        body: fc.oneof(
          fc.dictionary(fc.constantFrom(...(op.bodyKeys.length ? op.bodyKeys : ['x'])), jsonish, { maxKeys: 4 }).map((o) => JSON.stringify(o)),
          fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
          hostile,
          fc.constant('{"unterminated": '),
          fc.constant(JSON.stringify({ pad: 'x'.repeat(70_000) })),
        ),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          let i = 0;
          const path = op.path.replace(/\{[^}]+\}/g, () => encode(r.pathValues[i++] || 'x') || 'x');
          const params = new URLSearchParams();
          for (const [name, value] of r.query) {
            params.append(name, value);
            if (r.repeat) params.append(name, value);
          }
          let query = params.toString();
          if (r.rawQuery) query = query ? `${query}&${r.rawQuery}` : r.rawQuery;
          const headers: Record<string, string> = {};
          if (r.auth === 'valid') headers.Authorization = `Bearer ${token}`;
          else if (r.auth !== 'none') headers.Authorization = r.auth;
          if (r.serviceAuth !== undefined) headers['X-Service-Auth'] = r.serviceAuth;
          if (r.cookie !== undefined) headers.Cookie = r.cookie;
          if (r.requestId !== undefined) headers['X-Request-Id'] = r.requestId;
          if (r.contentType) headers['Content-Type'] = r.contentType;
          const hasBody = op.method !== 'GET' && op.method !== 'HEAD';
          const res = await timedRequest(`${api!.baseUrl}${path}${query ? `?${query}` : ''}`, { method: op.method, headers, body: hasBody ? r.body : undefined, redirect: 'manual' }, 15_000);
          seen[res.status] = (seen[res.status] ?? 0) + 1;
          const where = `${op.method} ${path.slice(0, 200)}?${query.slice(0, 200)} -> ${res.status} ${res.error ?? ''} ${res.body.slice(0, 300)}`;
          expect(res.status, where).toBeGreaterThan(0);
          expect(res.status, where).toBeLessThan(500);
          if (res.status >= 400) expect(isEnvelope(res.body), where).toBe(true);
        }),
        { numRuns: RUNS_PER_OPERATION },
      );
    }
    const rssAfter = rssMb(api!.pid);
    console.log(`hostile: ${operations.length} operations x ${RUNS_PER_OPERATION} runs; statuses ${JSON.stringify(seen)}; RSS ${rssBefore.toFixed(0)} -> ${rssAfter.toFixed(0)} MB`);
    expect(api!.child.exitCode).toBeNull();
    expect(rssAfter).toBeLessThan(rssBefore + 150);
  });

  it('oversized and malformed HTTP requests are refused with the error envelope, not a bare status line', async () => {
    const raw = (payload: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(api!.baseUrl).port), '127.0.0.1');
        let data = '';
        socket.on('data', (d) => (data += d));
        socket.on('end', () => resolve(data));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
        socket.setTimeout(10_000, () => socket.destroy());
        socket.write(payload);
      });
    const cases = [
      `GET /metadata HTTP/1.1\r\nHost: x\r\nCookie: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
      'GET /metadata HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'BREW /metadata HTCPCP/1.0\r\n\r\n',
      `GET /${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    ];
    for (const payload of cases) {
      const answer = await raw(payload);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
      expect(status, answer.slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
      expect(isEnvelope(answer.slice(answer.indexOf('\r\n\r\n') + 4)), answer.slice(0, 300)).toBe(true);
    }
    // And the server still serves normal requests.
    expect((await timedRequest(`${api!.baseUrl}/metadata`)).status).toBe(200);
    const sql = superuser(pg!.url);
    await sql.end();
  });
});
