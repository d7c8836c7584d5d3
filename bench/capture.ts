/**
 * Captures the exact statements the API sends for one HTTP request, from the Postgres log
 * (log_statement=all, log_line_prefix '%a|', filtered on the API's application_name): the
 * varied mixes are built from them (bench/mix.ts), and a hot run's R2 replays them verbatim.
 */
export interface CapturedStatement {
  text: string;
  params: string[]; // SQL literals as logged: 'text' with doubled quotes, or NULL
}

const API_APP = 'sparkpath-api';

export class PgLogTap {
  private buffer = '';
  readonly lines: string[] = [];

  push(chunk: string) {
    this.buffer += chunk.endsWith('\n') ? chunk : `${chunk}\n`;
    const parts = this.buffer.split('\n');
    this.buffer = parts.pop() ?? '';
    this.lines.push(...parts);
  }

  mark(): number {
    return this.lines.length;
  }

  /** Statements of the API logged since `mark`, in order. */
  statementsSince(mark: number): CapturedStatement[] {
    const out: CapturedStatement[] = [];
    for (const line of this.lines.slice(mark)) {
      if (!line.startsWith(`${API_APP}|`)) continue;
      const body = line.slice(API_APP.length + 1);
      const statement = /^LOG:\s+(?:execute [^:]*|statement): (.*)$/.exec(body);
      if (statement) {
        out.push({ text: statement[1], params: [] });
        continue;
      }
      const detail = /^DETAIL:\s+Parameters: (.*)$/.exec(body);
      if (detail && out.length > 0) {
        out[out.length - 1].params = [...detail[1].matchAll(/\$(\d+) = ('(?:[^']|'')*'|NULL)/g)].map((m) => m[2]);
      }
    }
    // postgres.js fetches array types on a fresh connection; that is not part of the request.
    return out.filter((s) => !/pg_catalog\.pg_type|from pg_type/i.test(s.text));
  }
}

export const unquote = (literal: string) => (literal === 'NULL' ? '' : literal.slice(1, -1).replaceAll("''", "'"));
export const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * pgbench reads `:name` in a script as a variable, so a JSON literal such as
 * `{"snapshot_id":null}` would force the simple protocol. A space after the key's colon means
 * the same JSON and keeps pgbench on the API's protocol (prepared).
 */
const pgbenchSafe = (literal: string) => literal.replace(/(?<!\\)":(null|true|false)\b/g, '": $1');

function bind(text: string, params: string[]): string {
  return text.replace(/\$(\d+)/g, (whole, n: string) => (params[Number(n) - 1] === undefined ? whole : pgbenchSafe(params[Number(n) - 1])));
}

/** R2: exactly the statements the API sent, parameters inlined as the literals it bound. */
export function r2Script(statements: CapturedStatement[]): string {
  return statements.map((s) => `${bind(s.text, s.params)};\n`).join('');
}

/**
 * The dispatched call of a request: `private.dispatch(role, claims, call, args, headers)`, or for
 * snapshot content `private.dispatch_snapshot_read(role, claims, call, args, held_versions,
 * headers)`; both carry the endpoint's api function call and its arguments in the same places
 * (headers, the forwarded X-Service-Auth, is null for the bench's learners and anonymous callers).
 */
export function lastDispatch(statements: CapturedStatement[]): CapturedStatement | undefined {
  return statements
    // At least the arguments R1/R2 replay; the baseline tree's dispatchers (before the headers argument) have one fewer.
    .filter((s) => (s.text.includes('private.dispatch(') && s.params.length >= 4) || (s.text.includes('private.dispatch_snapshot_read(') && s.params.length >= 5))
    .at(-1);
}

/** pgbench -M prepared turns every :name into a variable; such text needs the simple protocol. */
export function needsSimpleProtocol(script: string): boolean {
  return /(^|[^:]):[A-Za-z_]/.test(script);
}
