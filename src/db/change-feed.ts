import postgres from 'postgres';

/** The channel the content triggers notify (20261122160000_content_change_notify.sql). */
export const CONTENT_CHANNEL = 'sparkpath_content';
/** The channel app.sessions notifies, with the session id (20261123000000_session_vouching.sql). */
export const SESSIONS_CHANNEL = 'sparkpath_sessions';

/**
 * Tells an in-memory cache whether what it keeps may still be served.
 *
 * `epoch()` is a number that changes on every content notification and every time the
 * listening connection is lost or regained, or null while nothing is listening: then a change
 * could go unnoticed, so nothing may be served from memory.
 */
export interface ChangeFeed {
  epoch(): number | null;
  /** Calls `listener` with the id of every session row that changes ('*': all of them). */
  onSessionChange(listener: (sessionId: string) => void): void;
  close(): Promise<void>;
}

export interface ListenOptions {
  url: string;
  connectTimeoutSeconds: number;
  /** Pause between attempts to listen again after the connection is lost. */
  retryMs?: number;
  /** The first failed attempt after the feed last listened (not every retry of an outage). */
  onError?: (error: unknown) => void;
}

/**
 * LISTENs on the content and sessions channels over a connection of its own (a pooled connection may be
 * recycled at any time, and a notification missed while it is gone would go unnoticed).
 * When that connection closes, the feed stops vouching (epoch null) and listens again every
 * `retryMs` until it succeeds; only then does it vouch again, with a new epoch, so nothing
 * kept from before the gap is served.
 *
 * Behind a transaction-mode pooler (PgBouncer, Supavisor port 6543) notifications are not
 * delivered; turn the feed off there (DB_LISTEN_CHANGES=false).
 */
export function listenForChanges(options: ListenOptions): ChangeFeed {
  let epoch = 0;
  const sessionListeners: ((sessionId: string) => void)[] = [];
  let live: postgres.Sql | undefined; // the client whose LISTEN is in effect
  let closing = false;
  let attempt: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let failing = false; // an attempt has failed since the feed last listened
  const retryMs = options.retryMs ?? 500;

  /** A fresh client per attempt: a client wedged while connecting cannot stall the feed. */
  function open(): postgres.Sql {
    const client: postgres.Sql = postgres(options.url, {
      max: 1,
      idle_timeout: 0,
      max_lifetime: 0,
      connect_timeout: options.connectTimeoutSeconds,
      fetch_types: false,
      onnotice: () => undefined,
      connection: { application_name: 'sparkpath-api-listen' },
      // `onnotify` is the hook postgres.js's own sql.listen() is built on; its types leave it
      // out. sql.listen() itself reconnects silently and offers no way to learn that the
      // connection was gone, which is exactly what this feed must know.
      ...({
        onnotify: (channel: string, payload: string) => {
          if (channel === CONTENT_CHANNEL) epoch++;
          else if (channel === SESSIONS_CHANNEL) for (const listener of sessionListeners) listener(payload);
        },
      } as object),
      onclose: () => {
        if (live !== client) return;
        live = undefined;
        epoch++;
        void client.end({ timeout: 0 }).catch(() => undefined);
        scheduleListen(0);
      },
    });
    return client;
  }

  /** One attempt; false when it failed and another should follow. */
  async function listen(): Promise<boolean> {
    const client = open();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.unsafe(`listen ${CONTENT_CHANNEL}`).then(() => client.unsafe(`listen ${SESSIONS_CHANNEL}`)),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('LISTEN did not complete in time')), options.connectTimeoutSeconds * 1000 + 1000);
        }),
      ]);
      if (closing) throw new Error('closing');
      // Whatever was kept before this moment may predate a change nobody heard of.
      epoch++;
      live = client;
      failing = false;
      return true;
    } catch (error) {
      void client.end({ timeout: 0 }).catch(() => undefined);
      if (!closing && !failing) options.onError?.(error);
      failing = true;
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  function scheduleListen(delayMs: number) {
    if (closing || retryTimer || attempt) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      attempt = listen().then((listening) => {
        attempt = undefined;
        if (!listening) scheduleListen(retryMs);
      });
    }, delayMs);
    retryTimer.unref();
  }

  scheduleListen(0);

  return {
    epoch: () => (live ? epoch : null),
    onSessionChange: (listener) => void sessionListeners.push(listener),
    async close() {
      closing = true;
      clearTimeout(retryTimer);
      const client = live;
      live = undefined;
      await attempt;
      await client?.end({ timeout: 1 }).catch(() => undefined);
    },
  };
}
