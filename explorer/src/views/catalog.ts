import { SparkpathError, type Schemas } from '@sparkpath/client';
import { difficultyBadge, emptyState, fromSlug, h, link, minutes, plural, progressBar, statusBadge, toast } from '../dom.js';
import { api, journeyForTrail, journeysChanged, myJourneys, signedIn, signInProviders, signIn, unwrap } from '../session.js';

type Trail = Schemas['DiscoveryTrail'];
type JourneyDetail = Schemas['UserJourneyDetail'];

export const trailHref = (slug: string, domain?: string) => `/explore/trails/${slug}${domain ? `?domain=${domain}` : ''}`;
export const sparkHref = (slug: string, context: { concept?: string; trail?: string } = {}) => {
  const query = new URLSearchParams(Object.entries(context).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return `/explore/sparks/${slug}${query.size ? `?${query}` : ''}`;
};

export function breadcrumbs(...items: [string, string | undefined][]) {
  return h(
    'nav',
    { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    items.map(([label, href], index) => [index ? h('span', { class: 'sep' }, '›') : null, href ? link(href, null, label) : h('span', { 'aria-current': 'page' }, label)]),
  );
}

/** Buttons for the configured providers (the local dev sign-in when running `npm start`). */
export async function signInButtons(prompt: string) {
  const providers = await signInProviders();
  return h(
    'div',
    { class: 'signin-prompt' },
    h('p', null, prompt),
    providers.length
      ? h('div', { class: 'button-row' }, providers.map((p) => h('button', { class: 'button primary', type: 'button', 'data-provider': p.id, onclick: () => signIn(p.id) }, `Sign in with ${p.name}`)))
      : h('p', { class: 'muted' }, 'No sign-in provider is configured on this server.'),
  );
}

export async function homeView() {
  const [domains, journeys] = await Promise.all([
    api.GET('/discovery/domains', { params: { query: { per_page: 100, trail_limit: 4 } } }).then(unwrap),
    myJourneys(),
  ]);
  const list = domains.data as Schemas['DiscoveryDomain'][];
  const totals = list.reduce((sum, d) => ({ trails: sum.trails + d.trail_count, sparks: sum.sparks + d.spark_count, mins: sum.mins + d.estimated_mins }), { trails: 0, sparks: 0, mins: 0 });
  const active = journeys.filter((j) => j.status !== 'completed').slice(0, 3);
  return h(
    'div',
    { class: 'view' },
    h(
      'section',
      { class: 'hero' },
      h('h1', null, 'Learn one spark at a time'),
      h('p', null, `${plural(list.length, 'domain')}, ${plural(totals.trails, 'trail')} and ${plural(totals.sparks, 'spark')} in the current catalog: about ${minutes(totals.mins)} of learning, in steps of a few minutes.`),
    ),
    active.length
      ? h(
          'section',
          { class: 'section' },
          h('div', { class: 'section-head' }, h('h2', null, 'Continue learning'), link('/explore/journeys', { class: 'more' }, 'All my journeys →')),
          h('div', { class: 'grid grid-3' }, active.map((j) => journeyCard(j))),
        )
      : null,
    h(
      'section',
      { class: 'section' },
      h('div', { class: 'section-head' }, h('h2', null, 'Domains')),
      list.length
        ? h('div', { class: 'grid grid-2' }, list.map((domain) => domainCard(domain)))
        : emptyState('No published content yet', 'Import and promote a snapshot with the content CLI (npm run content).'),
    ),
  );
}

function domainCard(domain: Schemas['DiscoveryDomain']) {
  return h(
    'article',
    { class: 'card domain-card', style: `--accent:${domain.color}`, 'data-domain': domain.slug },
    h(
      'div',
      { class: 'domain-head' },
      h('span', { class: 'domain-icon', 'aria-hidden': 'true' }, domain.name.charAt(0)),
      h('div', null, h('h3', null, link(`/explore/domains/${domain.slug}`, { class: 'stretched' }, domain.name)), h('p', { class: 'meta' }, `${plural(domain.trail_count, 'trail')} · ${plural(domain.spark_count, 'spark')} · ${minutes(domain.estimated_mins)}`)),
    ),
    h('p', { class: 'description' }, domain.description),
    h('ul', { class: 'chips' }, domain.trails.map((trail) => h('li', null, link(trailHref(trail.slug, domain.slug), { class: 'chip' }, trail.title)))),
  );
}

function journeyCard(journey: Schemas['UserJourneyListItem']) {
  return h(
    'article',
    { class: 'card journey-card', 'data-journey': journey.trail.slug },
    h('div', { class: 'journey-top' }, statusBadge(journey.status), difficultyBadge(journey.trail.difficulty_level)),
    h('h3', null, link(trailHref(journey.trail.slug), { class: 'stretched' }, journey.trail.title)),
    progressBar(journey.progress_percent, `${journey.trail.title} progress`),
    h('p', { class: 'meta' }, `${journey.completed_sparks} of ${plural(journey.total_sparks, 'spark')} completed · ${journey.progress_percent}%`),
  );
}

export async function domainView(slug: string) {
  const [domain, trails, journeys] = await Promise.all([
    api.GET('/discovery/domains/{slug}', { params: { path: { slug } } }).then(unwrap),
    api.GET('/discovery/trails', { params: { query: { domain: slug, per_page: 100, concept_limit: 0 } } }).then(unwrap),
    myJourneys(),
  ]);
  const progress = new Map(journeys.map((j) => [j.trail_id, j]));
  return h(
    'div',
    { class: 'view' },
    breadcrumbs(['Catalog', '/explore'], [domain.name, undefined]),
    h(
      'header',
      { class: 'page-head', style: `--accent:${domain.color}` },
      h('span', { class: 'domain-icon large', 'aria-hidden': 'true' }, domain.name.charAt(0)),
      h('div', null, h('h1', null, domain.name), h('p', { class: 'lead' }, domain.description)),
    ),
    domain.learning_outcomes.length
      ? h('section', { class: 'card outcomes' }, h('h2', null, 'What you will be able to do'), h('ul', null, domain.learning_outcomes.map((o) => h('li', null, o))))
      : null,
    h(
      'section',
      { class: 'section' },
      h('div', { class: 'section-head' }, h('h2', null, `${plural(trails.meta.total, 'trail')}`)),
      h(
        'div',
        { class: 'grid grid-2' },
        trails.data.map((trail) => {
          const journey = progress.get(trail.id);
          return h(
            'article',
            { class: 'card trail-card', 'data-trail': trail.slug },
            h('div', { class: 'journey-top' }, difficultyBadge(trail.difficulty_level), journey ? statusBadge(journey.status) : null),
            h('h3', null, link(trailHref(trail.slug, slug), { class: 'stretched' }, trail.title)),
            h('p', { class: 'description' }, trail.description),
            journey ? progressBar(journey.progress_percent) : null,
            h('p', { class: 'meta' }, `${plural(trail.concept_count, 'concept')} · ${plural(trail.spark_count, 'spark')} · ${minutes(trail.estimated_mins)}`),
          );
        }),
      ),
    ),
  );
}

/** A trail by slug: from its domain's list when known, else page by page through all trails. */
async function findTrail(slug: string, domain?: string): Promise<Trail> {
  for (let page = 1; ; page += 1) {
    const trails = unwrap(await api.GET('/discovery/trails', { params: { query: { page, per_page: 100, concept_limit: 0, ...(domain ? { domain } : {}) } } }));
    const trail = trails.data.find((t) => t.slug === slug);
    if (trail) return trail;
    if (!trails.meta.has_next) throw new SparkpathError(404, 'NOT_FOUND', `No trail has the slug ${slug} in the current catalog`);
  }
}

export async function trailView(slug: string, query: URLSearchParams) {
  const domain = query.get('domain') ?? undefined;
  const [trail, concepts, domainInfo] = await Promise.all([
    findTrail(slug, domain),
    api.GET('/discovery/concepts', { params: { query: { trail: slug, per_page: 100, spark_limit: 50 } } }).then(unwrap),
    domain ? api.GET('/discovery/domains/{slug}', { params: { path: { slug: domain } } }).then(unwrap) : undefined,
  ]);
  const journey = signedIn() ? await journeyForTrail(trail.id) : undefined;
  const status = new Map(journey?.spark_progress.map((p) => [p.spark_id, p.status]) ?? []);

  const record = async (sparkId: string, verb: 'started' | 'completed') => {
    unwrap(await api.POST('/user/me/events', { body: { spark_id: sparkId, verb }, params: { header: { 'idempotency-key': crypto.randomUUID() } } }));
    journeysChanged();
    toast(verb === 'started' ? 'Started: good luck!' : 'Completed. Nice work!');
    rerender();
  };
  const rerender = () => document.dispatchEvent(new CustomEvent('explorer:rerender'));

  return h(
    'div',
    { class: 'view' },
    breadcrumbs(['Catalog', '/explore'], ...(domainInfo ? [[domainInfo.name, `/explore/domains/${domainInfo.slug}`] as [string, string]] : []), [trail.title, undefined]),
    h(
      'div',
      { class: 'split' },
      h(
        'div',
        null,
        h('header', { class: 'page-head plain' }, h('div', null, h('div', { class: 'journey-top' }, difficultyBadge(trail.difficulty_level)), h('h1', null, trail.title), h('p', { class: 'lead' }, trail.description), h('p', { class: 'meta' }, `${plural(trail.concept_count, 'concept')} · ${plural(trail.spark_count, 'spark')} · ${minutes(trail.estimated_mins)}`))),
        h(
          'ol',
          { class: 'concepts' },
          concepts.data.map((concept, index) =>
            h(
              'li',
              { class: `card concept${journey?.current_concept?.id === concept.id ? ' current' : ''}`, 'data-concept': concept.slug },
              h('div', { class: 'concept-head' }, h('span', { class: 'step' }, String(index + 1)), h('div', null, h('h3', null, concept.title), h('p', { class: 'description' }, concept.description)), journey?.current_concept?.id === concept.id ? h('span', { class: 'badge up-next' }, 'Up next') : null),
              h(
                'ul',
                { class: 'sparks' },
                concept.sparks.map((spark) => {
                  const sparkStatus = status.get(spark.id);
                  return h(
                    'li',
                    { class: 'spark-row', 'data-spark': spark.slug },
                    h('span', { class: `dot dot-${sparkStatus ?? 'none'}`, 'aria-hidden': 'true' }),
                    link(sparkHref(spark.slug, { concept: concept.slug, trail: slug }), { class: 'spark-title' }, spark.title),
                    h('span', { class: 'meta' }, minutes(spark.estimated_mins)),
                    journey && sparkStatus !== 'completed'
                      ? h('button', { class: 'button small', type: 'button', 'data-action': sparkStatus === 'in_progress' ? 'complete' : 'start', onclick: () => void record(spark.id, sparkStatus === 'in_progress' ? 'completed' : 'started').catch(fail) }, sparkStatus === 'in_progress' ? 'Complete' : 'Start')
                      : sparkStatus
                        ? statusBadge(sparkStatus)
                        : null,
                  );
                }),
              ),
            ),
          ),
        ),
      ),
      h('aside', { class: 'side' }, await journeyPanel(trail, journey, rerender)),
    ),
  );
}

export function fail(error: unknown) {
  toast(error instanceof Error ? error.message : String(error), 'error');
}

/** The journey box of a trail: sign in, enroll, or the progress. */
export async function journeyPanel(trail: { id: string; title: string }, journey: JourneyDetail | undefined, rerender: () => void) {
  if (!signedIn()) return h('section', { class: 'card panel' }, h('h2', null, 'Your journey'), await signInButtons('Sign in to enroll, track your progress and see each spark\'s learning path.'));
  if (!journey) {
    const enroll = async () => {
      const result = unwrap(await api.POST('/user/me/journeys', { body: { trail_id: trail.id } }));
      journeysChanged();
      toast(result.created ? `Enrolled in ${trail.title}` : `Already enrolled in ${trail.title}`);
      rerender();
    };
    return h(
      'section',
      { class: 'card panel' },
      h('h2', null, 'Your journey'),
      h('p', { class: 'muted' }, 'Enroll to follow your progress through this trail, spark by spark.'),
      h('button', { class: 'button primary wide', type: 'button', 'data-action': 'enroll', onclick: () => void enroll().catch(fail) }, 'Enroll in this trail'),
    );
  }
  return h(
    'section',
    { class: 'card panel', 'data-journey-panel': journey.id },
    h('div', { class: 'panel-top' }, h('h2', null, 'Your journey'), statusBadge(journey.status)),
    h('p', { class: 'big-number' }, h('strong', { 'data-progress': journey.progress_percent }, `${journey.progress_percent}%`), h('span', { class: 'muted' }, ' complete')),
    progressBar(journey.progress_percent, 'Journey progress'),
    h('p', { class: 'meta', 'data-completed': `${journey.completed_sparks}/${journey.total_sparks}` }, `${journey.completed_sparks} of ${plural(journey.total_sparks, 'spark')} completed`),
    journey.current_concept ? h('p', { class: 'meta' }, 'Up next: ', h('strong', null, journey.current_concept.title)) : h('p', { class: 'meta' }, 'Every spark is completed: trail finished.'),
    h('p', { class: 'meta' }, `Enrolled ${new Date(journey.started_at).toLocaleDateString()}`),
  );
}

export async function conceptView(slug: string, query: URLSearchParams) {
  const sparks = unwrap(await api.GET('/discovery/sparks', { params: { query: { concept: slug, per_page: 100 } } }));
  const title = query.get('title') ?? fromSlug(slug);
  return h(
    'div',
    { class: 'view' },
    breadcrumbs(['Catalog', '/explore'], [title, undefined]),
    h('header', { class: 'page-head plain' }, h('div', null, h('p', { class: 'eyebrow' }, 'Concept'), h('h1', null, title), h('p', { class: 'meta' }, plural(sparks.meta.total, 'spark')))),
    h(
      'ul',
      { class: 'card sparks' },
      sparks.data.map((spark) =>
        h('li', { class: 'spark-row', 'data-spark': spark.slug }, difficultyBadge(spark.difficulty), link(sparkHref(spark.slug, { concept: slug }), { class: 'spark-title' }, spark.title), h('span', { class: 'meta' }, minutes(spark.estimated_mins))),
      ),
    ),
  );
}
