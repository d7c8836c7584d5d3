// oidc-provider ships no types; this covers what the development sign-in
// (src/auth/dev-identity-provider.ts) and the test providers (test/e2e/oauth-fixtures.ts) use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Interaction {
    uid: string;
    params: Record<string, unknown>;
    prompt: { name: string; reasons: string[] };
  }
  interface Grant {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    Grant: new (properties: { accountId: string; clientId: string }) => Grant;
    AccessToken: { find(token: string): Promise<{ accountId: string } | undefined> };
  }
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  /** The package's in-memory adapter factory (what it uses when none is configured). */
  export function createMemoryAdapter(clockTolerance?: number): unknown;
}
