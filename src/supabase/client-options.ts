import type { SupabaseClientOptions } from '@supabase/supabase-js';

type RealtimeTransport = NonNullable<NonNullable<SupabaseClientOptions<'public'>['realtime']>['transport']>;

/**
 * What every supabase-js client of this service is built with.
 *
 * - Realtime transport: supabase-js builds its Realtime client when a client is created, and on
 *   Node.js 20 (no built-in WebSocket before 22) that throws unless a WebSocket class is given;
 *   supabase-js's documented remedy is `realtime.transport`, here the `ws` package. The service
 *   never opens a Realtime connection.
 * - A timeout on every call (`timeoutSeconds`), so a Supabase service that does not answer makes
 *   a request fail (503) instead of hang.
 *
 * Loaded on first use: a service that never talks to a Supabase project never loads supabase-js.
 *
 * @example
 *   const { createServerClient } = await import('@supabase/ssr');
 *   const client = createServerClient(url, anonKey, { ...(await supabaseClientOptions(10)), cookies });
 */
export async function supabaseClientOptions(timeoutSeconds: number): Promise<SupabaseClientOptions<'public'>> {
  const { WebSocket } = await import('ws');
  return {
    // ws is the WebSocket Realtime expects; its event types are Node's own, not the DOM's that
    // supabase-js's declaration names, hence the cast.
    realtime: { transport: WebSocket as unknown as RealtimeTransport },
    global: {
      fetch: (input, init) => {
        const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
        return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
      },
    },
  };
}
