import { difficultyBadge, emptyState, h, link, plural, progressBar, statusBadge } from '../dom.js';
import { api, signedIn, unwrap } from '../session.js';
import { signInButtons, trailHref } from './catalog.js';

const SORTS = [
  ['recent', 'Recent activity'],
  ['progress', 'Progress'],
  ['started', 'Enrollment date'],
] as const;

/** The signed-in learner's journeys, with their derived progress. */
export async function journeysView(query: URLSearchParams, navigate: (href: string) => void) {
  if (!signedIn()) return h('div', { class: 'view' }, h('section', { class: 'card panel' }, h('h1', null, 'My journeys'), await signInButtons('Sign in to see the trails you are following.')));
  const sort = SORTS.find(([value]) => value === query.get('sort'))?.[0] ?? 'recent';
  const journeys = unwrap(await api.GET('/user/me/journeys', { params: { query: { sort } } })).data;
  return h(
    'div',
    { class: 'view' },
    h(
      'header',
      { class: 'page-head plain row' },
      h('div', null, h('h1', null, 'My journeys'), h('p', { class: 'meta' }, plural(journeys.length, 'trail'))),
      h(
        'label',
        { class: 'sort' },
        'Sort by ',
        h(
          'select',
          { 'data-sort': true, onchange: (event: Event) => navigate(`/explore/journeys?sort=${(event.target as HTMLSelectElement).value}`) },
          SORTS.map(([value, label]) => h('option', { value, selected: value === sort }, label)),
        ),
      ),
    ),
    journeys.length
      ? h(
          'ul',
          { class: 'journey-list' },
          journeys.map((journey) =>
            h(
              'li',
              { class: 'card journey-row', 'data-journey': journey.trail.slug },
              h('div', { class: 'journey-main' }, h('div', { class: 'journey-top' }, statusBadge(journey.status), difficultyBadge(journey.trail.difficulty_level)), h('h3', null, link(trailHref(journey.trail.slug), { class: 'stretched' }, journey.trail.title)), h('p', { class: 'meta' }, `Last activity ${new Date(journey.last_activity_at).toLocaleString()}`)),
              h('div', { class: 'journey-progress' }, h('strong', null, `${journey.progress_percent}%`), progressBar(journey.progress_percent), h('span', { class: 'meta' }, `${journey.completed_sparks} / ${journey.total_sparks} sparks`)),
            ),
          ),
        )
      : emptyState('No journey yet', 'Pick a trail in the catalog and enroll to start one.', link('/explore', { class: 'button primary' }, 'Browse the catalog')),
  );
}
