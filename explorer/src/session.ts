import { createSparkpathClient, unwrap, type ClientSession, type ProviderName, type Schemas } from '@sparkpath/client';

/**
 * The explorer's one API client, exactly as a front end on another origin would hold it
 * (docs/auth.md#browser-front-ends): the refresh token is the HttpOnly cookie the API set, the
 * access token lives here in memory only and goes out as the bearer header.
 */
const listeners = new Set<(session: ClientSession | undefined) => void>();
// Not a secret, only a hint that a refresh cookie may be there: without it, a first visit would
// ask /auth/refresh for nothing and log a 401 in the console.
const HINT = 'sparkpath.signed-in';

export const sparkpath = createSparkpathClient({
  // Served by the API itself: same origin. A separate front end would name the API's origin here.
  baseUrl: '',
  onSessionChange: (session) => {
    journeysCache = undefined;
    if (session) localStorage.setItem(HINT, '1');
    else localStorage.removeItem(HINT);
    for (const listener of listeners) listener(session);
  },
});
export const api = sparkpath.api;
export { unwrap };

export function onSessionChange(listener: (session: ClientSession | undefined) => void) {
  listeners.add(listener);
}

export const signedIn = () => sparkpath.session !== undefined;

/** A session from an earlier visit, if this browser had one. */
export async function restoreSession() {
  if (localStorage.getItem(HINT)) await sparkpath.restore();
}

/** What the header shows: the name from /auth/session, role and plan from the token's claims. */
export async function currentUser() {
  const state = unwrap(await api.GET('/auth/session'));
  const claims = sparkpath.session?.claims;
  return state.user && claims ? { ...state.user, role: claims.user_role ?? 'learner', plan: claims.subscription_plan ?? 'free' } : undefined;
}

let providers: Promise<Schemas['SignInProviders']['providers']> | undefined;
export function signInProviders() {
  providers ??= api.GET('/auth/providers').then((result) => unwrap(result).providers);
  return providers;
}

export function signIn(provider: ProviderName) {
  // Come back to this very page after the provider's login page and the callback.
  location.assign(sparkpath.signInUrl(provider, location.href));
}

type Journey = Schemas['UserJourneyListItem'];
let journeysCache: Promise<Journey[]> | undefined;

/** The signed-in learner's journeys, read once per change (enrolling, an event, signing in or out). */
export function myJourneys(): Promise<Journey[]> {
  if (!signedIn()) return Promise.resolve([]);
  journeysCache ??= api.GET('/user/me/journeys', { params: { query: { sort: 'recent' } } }).then((result) => unwrap(result).data);
  return journeysCache;
}

export function journeysChanged() {
  journeysCache = undefined;
}

export async function journeyForTrail(trailId: string) {
  const journey = (await myJourneys()).find((j) => j.trail_id === trailId);
  return journey ? unwrap(await api.GET('/user/me/journeys/{id}', { params: { path: { id: journey.id } } })) : undefined;
}
