import type { Schemas } from '@sparkpath/client';
import { difficultyBadge, fromSlug, h, link, minutes, plural, statusBadge, toast } from '../dom.js';
import { drawGraph, layoutGraph } from '../graph.js';
import { api, journeyForTrail, journeysChanged, signedIn, unwrap } from '../session.js';
import { breadcrumbs, fail, journeyPanel, signInButtons, sparkHref, trailHref } from './catalog.js';

type Direction = 'ancestors' | 'descendants' | 'both';
interface SparkInfo {
  id?: string;
  slug: string;
  title: string;
  summary?: string;
  difficulty?: string;
  estimated_mins?: number;
}

/** The graph controls survive navigation between sparks, as a person expects. */
const graphState: { direction: Direction; depth: number; showMastered: boolean } = { direction: 'both', depth: 2, showMastered: false };

/**
 * A spark: what it is, marking it started / completed / mastered, its prerequisite graph and the
 * learning path to it. Details come from its concept's list when the link said which concept,
 * else (signed in) from search, since the API has no read of one spark by slug.
 */
async function sparkInfo(slug: string, concept: string | undefined): Promise<SparkInfo> {
  if (concept) {
    const sparks = unwrap(await api.GET('/discovery/sparks', { params: { query: { concept, per_page: 100 } } }));
    const spark = sparks.data.find((s) => s.slug === slug);
    if (spark) return spark;
  }
  if (signedIn()) {
    const found = unwrap(await api.GET('/search', { params: { query: { q: slug.replace(/-/g, ' ').slice(0, 200), type: 'spark', per_page: 50 } } }));
    const hit = found.data.find((item) => item.slug === slug);
    if (hit) return { id: hit.id, slug, title: hit.title, summary: hit.summary };
  }
  return { slug, title: fromSlug(slug) };
}

export async function sparkView(slug: string, query: URLSearchParams) {
  const concept = query.get('concept') ?? undefined;
  const trailSlug = query.get('trail') ?? undefined;
  const info = await sparkInfo(slug, concept);
  const rerender = () => document.dispatchEvent(new CustomEvent('explorer:rerender'));

  if (!signedIn()) {
    return h(
      'div',
      { class: 'view' },
      breadcrumbs(['Catalog', '/explore'], ...(trailSlug ? [[fromSlug(trailSlug), trailHref(trailSlug)] as [string, string]] : []), [info.title, undefined]),
      sparkHeader(info),
      h('section', { class: 'card panel' }, h('h2', null, 'Prerequisites and your learning path'), await signInButtons('Sign in to see what this spark builds on, what it unlocks, and the shortest path to it from what you have mastered.')),
    );
  }

  // Signed in: the graph root names the spark's id even when the details came from nowhere else.
  const ancestors = graphState.direction !== 'descendants'
    ? unwrap(await api.GET('/graph/sparks/{slug}', { params: { path: { slug }, query: { direction: 'ancestors', max_depth: graphState.depth } } }))
    : undefined;
  const descendants = graphState.direction !== 'ancestors'
    ? unwrap(await api.GET('/graph/sparks/{slug}', { params: { path: { slug }, query: { direction: 'descendants', max_depth: graphState.depth } } }))
    : undefined;
  const rootId = (ancestors ?? descendants)!.root_id;
  const sparkId = info.id ?? rootId;
  const trail = trailSlug ? await trailBySlug(trailSlug) : undefined;
  const [journey, path] = await Promise.all([
    trail ? journeyForTrail(trail.id) : Promise.resolve(undefined),
    api.GET('/graph/path', { params: { query: { target: slug, skip_mastered: graphState.showMastered ? 'false' : 'true' } } }).then(unwrap),
  ]);
  const status = new Map(journey?.spark_progress.map((p) => [p.spark_id, p.status]) ?? []);
  const current = status.get(sparkId);

  const record = async (verb: 'started' | 'completed' | 'mastered') => {
    unwrap(await api.POST('/user/me/events', { body: { spark_id: sparkId, verb }, params: { header: { 'idempotency-key': crypto.randomUUID() } } }));
    journeysChanged();
    toast({ started: 'Marked as started', completed: 'Marked as completed', mastered: 'Mastered: it leaves your learning paths' }[verb]);
    rerender();
  };
  const layout = layoutGraph(rootId, ancestors, descendants);

  return h(
    'div',
    { class: 'view' },
    breadcrumbs(['Catalog', '/explore'], ...(trail ? [[trail.title, trailHref(trail.slug)] as [string, string]] : []), [info.title, undefined]),
    h(
      'div',
      { class: 'split' },
      h(
        'div',
        null,
        sparkHeader(info),
        h(
          'section',
          { class: 'card actions-card' },
          h('div', { class: 'panel-top' }, h('h2', null, 'Your progress'), current ? statusBadge(current) : null),
          h(
            'div',
            { class: 'button-row' },
            (['started', 'completed', 'mastered'] as const).map((verb) =>
              h('button', { class: `button${verb === 'completed' ? ' primary' : ''}`, type: 'button', 'data-verb': verb, onclick: () => void record(verb).catch(fail) }, { started: 'Start', completed: 'Complete', mastered: 'Mastered' }[verb]),
            ),
          ),
          h('p', { class: 'muted small' }, 'Each click records a learning event. Mastered sparks drop out of your learning paths.'),
        ),
      ),
      h('aside', { class: 'side' }, pathCard(path, slug, rerender), trail ? await journeyPanel(trail, journey, rerender) : null),
    ),
    graphCard(layout, rootId, (id) => status.get(id), rerender),
  );
}

/** The trail the spark was opened from (id and title for its journey box). */
async function trailBySlug(slug: string) {
  const found = unwrap(await api.GET('/search', { params: { query: { q: slug.replace(/-/g, ' ').slice(0, 200), type: 'trail', per_page: 20 } } }));
  return found.data.find((item) => item.slug === slug);
}

function sparkHeader(info: SparkInfo) {
  return h(
    'header',
    // Which spark is shown, so a caller can tell one spark page from the next.
    { class: 'page-head plain', 'data-spark-page': info.slug },
    h(
      'div',
      null,
      h('p', { class: 'eyebrow' }, 'Spark'),
      h('h1', null, info.title),
      info.summary ? h('p', { class: 'lead' }, info.summary) : null,
      h('div', { class: 'journey-top' }, difficultyBadge(info.difficulty), info.estimated_mins !== undefined ? h('span', { class: 'badge' }, minutes(info.estimated_mins)) : null),
    ),
  );
}

function graphCard(layout: ReturnType<typeof layoutGraph>, rootId: string, status: (id: string) => string | undefined, rerender: () => void) {
  const directions: [Direction, string][] = [['ancestors', 'Prerequisites'], ['both', 'Both'], ['descendants', 'Unlocks']];
  const depthLabel = h('output', { class: 'depth-value' }, String(graphState.depth));
  return h(
    'section',
    { class: 'card graph-card' },
    h(
      'div',
      { class: 'graph-controls' },
      h('h2', null, 'Prerequisite graph'),
      h(
        'div',
        { class: 'segmented', role: 'group', 'aria-label': 'Direction' },
        directions.map(([value, label]) =>
          h('button', { type: 'button', class: value === graphState.direction ? 'active' : '', 'aria-pressed': value === graphState.direction, 'data-direction': value, onclick: () => { graphState.direction = value; rerender(); } }, label),
        ),
      ),
      h(
        'label',
        { class: 'depth' },
        'Depth ',
        h('input', {
          type: 'range',
          min: 1,
          max: 10,
          value: graphState.depth,
          'data-depth': true,
          oninput: (event: Event) => (depthLabel.textContent = (event.target as HTMLInputElement).value),
          onchange: (event: Event) => {
            graphState.depth = Number((event.target as HTMLInputElement).value);
            rerender();
          },
        }),
        depthLabel,
      ),
    ),
    layout.nodes.length > 1
      ? h('div', { class: 'graph-scroll' }, drawGraph(layout, { rootId, status, href: (node) => sparkHref(node.slug) }))
      : h('p', { class: 'muted' }, 'No prerequisite links in this direction.'),
    h(
      'p',
      { class: 'legend' },
      h('span', null, h('i', { class: 'swatch root' }), 'This spark'),
      h('span', null, h('i', { class: 'swatch completed' }), 'Completed'),
      h('span', null, h('i', { class: 'swatch in_progress' }), 'In progress'),
      h('span', { class: 'muted' }, `${plural(layout.nodes.length, 'spark')} · arrows point from a prerequisite to what it unlocks`),
    ),
  );
}

function pathCard(path: Schemas['LearningPath'], slug: string, rerender: () => void) {
  return h(
    'section',
    { class: 'card path-card', 'data-path-steps': path.path.length },
    h('h2', null, 'Learning path'),
    h('p', { class: 'meta' }, `${plural(path.path.length, 'step')} · ${minutes(path.total_mins)}`, path.skipped_count ? ` · ${path.skipped_count} mastered skipped` : ''),
    h(
      'ol',
      { class: 'path' },
      path.path.map((step, index) =>
        h(
          'li',
          { class: step.slug === slug ? 'target' : '', 'data-step': step.slug },
          h('span', { class: 'step' }, String(index + 1)),
          link(sparkHref(step.slug), null, step.title),
          h('span', { class: 'meta' }, minutes(step.estimated_mins)),
        ),
      ),
    ),
    h(
      'label',
      { class: 'toggle' },
      h('input', { type: 'checkbox', checked: graphState.showMastered, onchange: (event: Event) => { graphState.showMastered = (event.target as HTMLInputElement).checked; rerender(); } }),
      ' Include sparks I mastered',
    ),
  );
}
