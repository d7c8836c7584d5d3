import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import AjvDraft04Module from 'ajv-draft-04';

/**
 * xAPI statements checked against Rustici Software's JSON Schema of the Experience API
 * (npm `tin-can-json-schema` 2.0.0, file 1.0.1.json: the statement data model, which 1.0.2 and
 * 1.0.3 left unchanged), with the string formats it ships (formats.json). Its StatementResult
 * requires `more` to be an absolute IRI, while xAPI 1.0.3 (Part 3, 2.1.3) makes it a relative
 * IRL ("excluding scheme, host, and port") or "": so statements go through the schema and
 * `more` through that rule.
 */
// A CommonJS module whose default export is the class (as ajv-formats in contract.ts).
const AjvDraft04 = AjvDraft04Module as unknown as typeof AjvDraft04Module.default;
const dir = path.dirname(createRequire(import.meta.url).resolve('tin-can-json-schema/package.json'));
const ajv = new AjvDraft04({ strict: false, allErrors: true, unicodeRegExp: false });
for (const [name, pattern] of Object.entries(JSON.parse(readFileSync(path.join(dir, 'formats.json'), 'utf8')) as Record<string, string>)) {
  ajv.addFormat(name, new RegExp(pattern));
}
ajv.addSchema(JSON.parse(readFileSync(path.join(dir, '1.0.1.json'), 'utf8')), 'tcapi');
const statement = ajv.compile({ $ref: 'tcapi#statement' });

/** Every problem of a StatementResult: schema errors per statement, and a `more` that is not a relative IRL or "". */
export function xapiStatementResultProblems(body: { statements: unknown[]; more: unknown }): string[] {
  const problems = body.statements.flatMap((s, i) =>
    statement(s) ? [] : (statement.errors ?? []).map((e) => `statements[${i}]${e.instancePath} ${e.message}`),
  );
  if (typeof body.more !== 'string' || (body.more !== '' && !/^\/[^\s]*$/.test(body.more))) problems.push(`more ${JSON.stringify(body.more)} is not a relative IRL or ""`);
  return problems;
}
