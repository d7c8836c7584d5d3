import type { Schemas } from '@sparkpath/client';
import { capitalize, emptyState, h, link, plural } from '../dom.js';
import { api, signedIn, unwrap } from '../session.js';
import { signInButtons, sparkHref, trailHref } from './catalog.js';

const TYPES = ['spark', 'concept', 'trail', 'domain'] as const;
type SearchType = (typeof TYPES)[number];

export const searchHref = (q: string, type?: string) => `/explore/search?${new URLSearchParams({ q, ...(type ? { type } : {}) })}`;

function itemHref(item: { type: SearchType; slug: string; title: string }) {
  switch (item.type) {
    case 'spark':
      return sparkHref(item.slug);
    case 'trail':
      return trailHref(item.slug);
    case 'domain':
      return `/explore/domains/${item.slug}`;
    case 'concept':
      return `/explore/concepts/${item.slug}?${new URLSearchParams({ title: item.title })}`;
  }
}

/**
 * The header's search box: suggestions from /search/autocomplete as the person types (debounced,
 * stale answers dropped), arrow keys and Enter to pick, Enter on the text for the full search.
 */
export function searchBox(navigate: (href: string) => void) {
  const input = h('input', { type: 'search', name: 'q', placeholder: 'Search sparks, trails, domains…', autocomplete: 'off', 'aria-label': 'Search', 'aria-autocomplete': 'list', 'aria-controls': 'suggestions', role: 'combobox', 'aria-expanded': 'false' });
  const list = h('ul', { id: 'suggestions', class: 'suggestions', role: 'listbox', hidden: true });
  let suggestions: Schemas['SearchSuggestions']['suggestions'] = [];
  let active = -1;
  let asked = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    active = -1;
  };
  const show = (items: Node[]) => {
    list.replaceChildren(...items);
    list.hidden = items.length === 0;
    input.setAttribute('aria-expanded', String(items.length > 0));
  };
  const paint = () =>
    show(
      suggestions.map((s, index) =>
        h(
          'li',
          { role: 'option', class: index === active ? 'active' : '', 'aria-selected': index === active, 'data-suggestion': s.text, onmousedown: (event: Event) => { event.preventDefault(); pick(index); } },
          h('span', { class: `type type-${s.type}` }, capitalize(s.type)),
          h('span', null, s.text),
        ),
      ),
    );
  const pick = (index: number) => {
    const chosen = suggestions[index];
    if (!chosen) return;
    input.value = chosen.text;
    close();
    navigate(searchHref(chosen.text, chosen.type));
  };

  const suggest = async () => {
    const q = input.value.trim();
    const ticket = ++asked;
    if (!signedIn()) {
      show(q ? [h('li', { class: 'hint' }, 'Search is for signed-in learners: sign in first.')] : []);
      return;
    }
    if (q.length < 2) {
      suggestions = [];
      close();
      return;
    }
    const result = unwrap(await api.GET('/search/autocomplete', { params: { query: { q, limit: 8 } } }));
    if (ticket !== asked) return;
    suggestions = result.suggestions;
    active = -1;
    paint();
  };

  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void suggest().catch(() => close()), 150);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      if (!suggestions.length) return;
      event.preventDefault();
      active = (active + (event.key === 'ArrowDown' ? 1 : -1) + suggestions.length) % suggestions.length;
      paint();
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (active >= 0) pick(active);
      else if (input.value.trim()) {
        close();
        navigate(searchHref(input.value.trim()));
      }
    } else if (event.key === 'Escape') close();
  });
  input.addEventListener('blur', () => setTimeout(close, 100));
  // The box shows the query of the results page, and is empty elsewhere.
  const follow = () => {
    const url = new URL(location.href);
    input.value = url.pathname === '/explore/search' ? (url.searchParams.get('q') ?? '') : '';
  };
  document.addEventListener('explorer:navigated', follow);
  follow();
  return h('div', { class: 'search', role: 'search' }, input, list);
}

export async function searchView(query: URLSearchParams) {
  const q = (query.get('q') ?? '').trim();
  const type = TYPES.find((t) => t === query.get('type'));
  const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
  if (!signedIn()) return h('div', { class: 'view' }, h('section', { class: 'card panel' }, h('h1', null, 'Search'), await signInButtons('Search is for signed-in learners.')));
  if (!q) return h('div', { class: 'view' }, emptyState('Search the catalog', 'Type in the box above: titles, summaries, even with a typo.'));

  const result = unwrap(await api.GET('/search', { params: { query: { q, page, per_page: 20, ...(type ? { type } : {}) } } }));
  const facet = (t: SearchType | undefined, label: string, count: number) =>
    link(searchHref(q, t), { class: `chip${t === type ? ' active' : ''}`, 'data-facet': t ?? 'all' }, `${label} `, h('span', { class: 'count' }, String(count)));
  const total = TYPES.reduce((sum, t) => sum + result.facets.types[t], 0);
  return h(
    'div',
    { class: 'view' },
    h('header', { class: 'page-head plain' }, h('div', null, h('p', { class: 'eyebrow' }, 'Search'), h('h1', null, `“${q}”`), h('p', { class: 'meta' }, plural(result.meta.total, 'result')))),
    result.meta.corrected_query ? h('p', { class: 'notice', 'data-corrected': result.meta.corrected_query }, 'Showing results for ', h('strong', null, result.meta.corrected_query)) : null,
    h('div', { class: 'chips facets' }, facet(undefined, 'All', total), TYPES.map((t) => facet(t, `${capitalize(t)}s`, result.facets.types[t]))),
    result.data.length
      ? h(
          'ol',
          { class: 'results' },
          result.data.map((item) =>
            h(
              'li',
              { class: 'card result', 'data-result': item.slug },
              h('span', { class: `type type-${item.type}` }, capitalize(item.type)),
              h('div', null, h('h3', null, link(itemHref(item), { class: 'stretched' }, item.title)), item.summary ? h('p', { class: 'description' }, item.summary) : null),
            ),
          ),
        )
      : emptyState('Nothing found', 'Try fewer or other words.'),
    result.meta.total_pages > 1
      ? h(
          'nav',
          { class: 'pager' },
          result.meta.has_prev ? link(`${searchHref(q, type)}&page=${page - 1}`, { class: 'button' }, '← Previous') : null,
          h('span', { class: 'meta' }, `Page ${page} of ${result.meta.total_pages}`),
          result.meta.has_next ? link(`${searchHref(q, type)}&page=${page + 1}`, { class: 'button' }, 'Next →') : null,
        )
      : null,
  );
}
