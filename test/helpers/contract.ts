import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Json }> }> }>>;
  components?: Json;
}

export class ContractViolation extends Error {}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Validates real responses against the OpenAPI document the app serves, so the contract can
 * never drift from the behaviour. Used automatically by createTestApp() for every request.
 */
export function createContractChecker(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  // Component refs resolve against the document itself.
  ajv.addSchema({ $id: 'openapi', components: document.components ?? {} });
  const rewrite = (schema: unknown): unknown => {
    if (Array.isArray(schema)) return schema.map(rewrite);
    if (schema && typeof schema === 'object') {
      return Object.fromEntries(
        Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi${v}` : rewrite(v)]),
      );
    }
    return schema;
  };

  const routes = Object.entries(document.paths).map(([path, operations]) => ({
    path,
    pattern: new RegExp(`^${path.replace(/\/+$/, '').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    literalSegments: path.split('/').filter((s) => s && !s.startsWith('{')).length,
    operations,
  }));
  const compiled = new Map<string, ValidateFunction>();
  const envelope = ajv.compile(
    rewrite({
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
        },
      },
    }) as Json,
  );

  return function check(method: string, url: string, status: number, contentType: string | null, body: string): void {
    const pathname = new URL(url, 'http://x').pathname;
    if (!contentType?.includes('application/json')) {
      if (status >= 400) throw new ContractViolation(`${method} ${pathname} → ${status} is not JSON`);
      return;
    }
    const parsed: unknown = body === '' ? undefined : JSON.parse(body);
    // The most specific template wins (/discovery/domains/{slug} vs /discovery/{x}).
    const candidates = routes
      .filter((r) => r.pattern.test(pathname) && r.operations[method.toLowerCase()])
      .sort((a, b) => b.literalSegments - a.literalSegments);
    const route = candidates[0];
    if (!route) {
      if (status >= 400 && !envelope(parsed)) throw new ContractViolation(`${method} ${pathname} → ${status}: not an error envelope`);
      return;
    }
    const responses = route.operations[method.toLowerCase()].responses ?? {};
    const response = responses[String(status)] ?? responses.default;
    if (!response) {
      throw new ContractViolation(`${method} ${route.path} answered ${status}, which its contract does not declare (declared: ${Object.keys(responses).join(', ')})`);
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) throw new ContractViolation(`${method} ${route.path} → ${status} returned JSON but declares no JSON schema`);
    const key = `${method} ${route.path} ${status}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(rewrite(schema) as Json);
      compiled.set(key, validate);
    }
    if (!validate(parsed)) {
      const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      throw new ContractViolation(`${key}: body does not match the contract: ${problems}`);
    }
  };
}
