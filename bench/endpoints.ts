/**
 * The benchmarked endpoint families. Adding one is one line: a name, the OpenAPI route it needs
 * (the family is reported "not available" while /openapi.json lacks it), its target group and
 * how to build its request variants from the sampled dataset.
 */
import type { Fixtures } from './fixtures.js';

export type Group = 'catalog' | 'snapshot' | 'journey' | 'search' | 'graph' | 'auth' | 'metadata';

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Family {
  name: string;
  /** "METHOD /openapi/path/{param}" that must be listed in /openapi.json. */
  route: string;
  group: Group;
  /** Request variants; wrk walks them round-robin and pgbench replays the same mix. */
  requests: (f: Fixtures) => RequestSpec[];
  /**
   * Single-use requests: `rotate` (refresh: the response carries the replacement token) or
   * `consume` (logout: each request ends a session; a thread stops when its sessions run out).
   * Both get freshly minted sessions for every wrk invocation.
   */
  singleUse?: 'rotate' | 'consume';
}

const get = (path: string, headers?: Record<string, string>): RequestSpec => ({ method: 'GET', path, headers });
const each = <T>(items: T[], build: (item: T, i: number) => RequestSpec) => items.map(build);

export const FAMILIES: Family[] = [
  { name: 'metadata', route: 'GET /metadata', group: 'metadata', requests: () => [get('/metadata')] },
  { name: 'metadata.difficulty-levels', route: 'GET /metadata/difficulty-levels', group: 'metadata', requests: () => [get('/metadata/difficulty-levels')] },
  { name: 'discovery.domains', route: 'GET /discovery/domains', group: 'catalog', requests: () => [get('/discovery/domains'), get('/discovery/domains?page=2&per_page=5')] },
  { name: 'discovery.trails', route: 'GET /discovery/trails', group: 'catalog', requests: (f) => [get('/discovery/trails'), ...each(f.domainSlugs.slice(0, 7), (s) => get(`/discovery/trails?domain=${s}`))] },
  { name: 'discovery.all+facets', route: 'GET /discovery/all', group: 'catalog', requests: (f) => [get('/discovery/all?include_facets=true'), get('/discovery/all?include_facets=true&page=3'), ...each(f.domainSlugs.slice(0, 6), (s) => get(`/discovery/all?include_facets=true&domain=${s}`))] },
  { name: 'discovery.facets', route: 'GET /discovery/facets', group: 'catalog', requests: (f) => [get('/discovery/facets'), ...each(f.domainSlugs.slice(0, 7), (s) => get(`/discovery/facets?domain=${s}`))] },
  { name: 'domains.detail', route: 'GET /discovery/domains/{slug}', group: 'catalog', requests: (f) => each(f.domainSlugs, (s) => get(`/discovery/domains/${s}`)) },
  { name: 'domains.trails', route: 'GET /discovery/domains/{slug}/trails', group: 'catalog', requests: (f) => each(f.domainSlugs, (s) => get(`/discovery/domains/${s}/trails`)) },
  { name: 'domains.related', route: 'GET /discovery/domains/{slug}/related', group: 'catalog', requests: (f) => each(f.domainSlugs, (s) => get(`/discovery/domains/${s}/related`)) },
  { name: 'search', route: 'GET /search', group: 'search', requests: (f) => each(f.searchTerms, (q, i) => get(`/search?q=${encodeURIComponent(q)}`, f.userHeaders(i))) },
  { name: 'search.autocomplete', route: 'GET /search/autocomplete', group: 'search', requests: (f) => each(f.autocompleteTerms, (q, i) => get(`/search/autocomplete?q=${encodeURIComponent(q)}`, f.userHeaders(i))) },
  { name: 'graph.ancestors.d3', route: 'GET /graph/sparks/{slug}', group: 'graph', requests: (f) => each(f.sparkSlugs, (s, i) => get(`/graph/sparks/${s}?direction=ancestors&max_depth=3`, f.userHeaders(i))) },
  { name: 'graph.ancestors.d10', route: 'GET /graph/sparks/{slug}', group: 'graph', requests: (f) => each(f.sparkSlugs, (s, i) => get(`/graph/sparks/${s}?direction=ancestors&max_depth=10`, f.userHeaders(i))) },
  { name: 'graph.path', route: 'GET /graph/path', group: 'graph', requests: (f) => each(f.sparkSlugs, (s, i) => get(`/graph/path?target=${s}`, f.userHeaders(i))) },
  { name: 'journeys.list', route: 'GET /user/me/journeys', group: 'journey', requests: (f) => each(f.users, (u) => get('/user/me/journeys', { Authorization: `Bearer ${u.token}` })) },
  { name: 'journeys.detail', route: 'GET /user/me/journeys/{id}', group: 'journey', requests: (f) => each(f.users, (u) => get(`/user/me/journeys/${u.enrollmentId}`, { Authorization: `Bearer ${u.token}` })) },
  { name: 'snapshots.current', route: 'GET /snapshots/current', group: 'snapshot', requests: (f) => each(f.users, (_u, i) => get('/snapshots/current', f.userHeaders(i))) },
  { name: 'auth.session', route: 'GET /auth/session', group: 'auth', requests: (f) => each(f.sessions, (s) => get('/auth/session', { Authorization: `Bearer ${s.accessToken}` })) },
  { name: 'auth.refresh', route: 'POST /auth/refresh', group: 'auth', singleUse: 'rotate', requests: (f) => each(f.sessions, (s) => ({ method: 'POST', path: '/auth/refresh', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ refresh_token: s.refreshToken }) })) },
  { name: 'auth.logout', route: 'POST /auth/logout', group: 'auth', singleUse: 'consume', requests: (f) => each(f.sessions, (s) => ({ method: 'POST', path: '/auth/logout', headers: { Authorization: `Bearer ${s.accessToken}` } })) },
];

/** p95 targets at 8 connections on the base dataset (issue 9), in milliseconds. */
export const P95_TARGET_MS: Record<Group, number> = {
  catalog: 10,
  snapshot: 10,
  journey: 10,
  metadata: 10,
  search: 20,
  graph: 25,
  // Auth: at least 10x under the spec (session < 50 ms -> 5 ms, refresh < 300 ms -> 30 ms).
  auth: 5,
};
export const AUTH_TARGET_MS: Record<string, number> = { 'auth.session': 5, 'auth.refresh': 30, 'auth.logout': 20 };

/** Families whose p95 growth 10x/1x must stay <= 1.5. */
export const GROWTH_GROUPS: Group[] = ['search', 'graph', 'catalog', 'journey'];
