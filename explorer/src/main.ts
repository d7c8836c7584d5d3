import { SparkpathError } from '@sparkpath/client';
import { emptyState, h, link, toast } from './dom.js';
import { currentUser, onSessionChange, restoreSession, signIn, signInProviders, sparkpath } from './session.js';
import { conceptView, domainView, homeView, trailView } from './views/catalog.js';
import { journeysView } from './views/journeys.js';
import { searchBox, searchView } from './views/search.js';
import { sparkView } from './views/spark.js';

/**
 * The Sparkpath explorer: the catalog, search, the prerequisite graph and a learner's journeys,
 * built on the public API only, through the typed client (client/). Served by the API at
 * /explore; every view is a function of the URL.
 */
type View = (match: RegExpExecArray, query: URLSearchParams) => Promise<Node>;
const routes: [RegExp, View][] = [
  [/^\/explore\/?$/, () => homeView()],
  [/^\/explore\/domains\/([a-z0-9-]+)$/, (m) => domainView(m[1])],
  [/^\/explore\/trails\/([a-z0-9-]+)$/, (m, q) => trailView(m[1], q)],
  [/^\/explore\/concepts\/([a-z0-9-]+)$/, (m, q) => conceptView(m[1], q)],
  [/^\/explore\/sparks\/([a-z0-9-]+)$/, (m, q) => sparkView(m[1], q)],
  [/^\/explore\/search$/, (_m, q) => searchView(q)],
  [/^\/explore\/journeys$/, (_m, q) => journeysView(q, navigate)],
];

const main = h('main', { id: 'main', class: 'container', tabindex: -1 });
const account = h('div', { class: 'account' });
let rendering = 0;

function navigate(href: string) {
  history.pushState(null, '', href);
  void render();
}

async function render() {
  const ticket = ++rendering;
  const url = new URL(location.href);
  document.dispatchEvent(new CustomEvent('explorer:navigated'));
  const route = routes.map(([pattern, view]) => [pattern.exec(url.pathname), view] as const).find(([match]) => match);
  document.querySelectorAll('.nav a').forEach((a) => a.classList.toggle('active', a.getAttribute('href') === url.pathname));
  main.setAttribute('aria-busy', 'true');
  let content: Node;
  try {
    content = route ? await route[1](route[0]!, url.searchParams) : emptyState('Page not found', 'This address is not part of the explorer.', link('/explore', { class: 'button primary' }, 'Back to the catalog'));
  } catch (error) {
    content = errorView(error);
  }
  if (ticket !== rendering) return;
  main.replaceChildren(content);
  main.removeAttribute('aria-busy');
}

function errorView(error: unknown) {
  if (error instanceof SparkpathError && error.status === 404) return emptyState('Not found', error.message, link('/explore', { class: 'button primary' }, 'Back to the catalog'));
  const message = error instanceof Error ? error.message : String(error);
  return emptyState('Something went wrong', message, h('button', { class: 'button', type: 'button', onclick: () => void render() }, 'Try again'));
}

async function paintAccount() {
  if (!sparkpath.session) {
    const providers = await signInProviders().catch(() => []);
    const menu = h(
      'div',
      { class: 'menu', hidden: true, role: 'menu' },
      providers.length
        ? providers.map((p) => h('button', { type: 'button', role: 'menuitem', 'data-provider': p.id, onclick: () => signIn(p.id) }, `Continue with ${p.name}`))
        : h('p', { class: 'muted' }, 'No sign-in provider is configured.'),
    );
    const toggle = h('button', { class: 'button primary', type: 'button', 'data-action': 'sign-in', 'aria-haspopup': 'menu', onclick: () => (menu.hidden = !menu.hidden) }, 'Sign in');
    account.replaceChildren(toggle, menu);
    return;
  }
  const user = await currentUser().catch(() => undefined);
  const role = user?.role === 'admin' ? 'Admin' : user?.plan === 'premium' ? 'Premium' : 'Free';
  account.replaceChildren(
    h(
      'div',
      { class: 'user', 'data-user': user?.email ?? '' },
      h('span', { class: 'avatar', 'aria-hidden': 'true' }, (user?.display_name || user?.email || '?').charAt(0).toUpperCase()),
      h('span', { class: 'who' }, h('strong', null, user?.display_name || user?.email || 'Signed in'), h('small', null, user?.email ?? '')),
      h('span', { class: `badge plan plan-${role.toLowerCase()}` }, role),
    ),
    h(
      'button',
      {
        class: 'button ghost',
        type: 'button',
        'data-action': 'sign-out',
        onclick: () =>
          void sparkpath.signOut().then(
            () => toast('Signed out'),
            (error: unknown) => toast(error instanceof Error ? error.message : String(error), 'error'),
          ),
      },
      'Sign out',
    ),
  );
}

function shell() {
  const header = h(
    'header',
    { class: 'topbar' },
    h(
      'div',
      { class: 'container topbar-inner' },
      link('/explore', { class: 'brand' }, h('i', { 'aria-hidden': 'true' }), 'Sparkpath', h('small', null, 'Explorer')),
      h('nav', { class: 'nav' }, link('/explore', null, 'Catalog'), link('/explore/journeys', null, 'My journeys')),
      searchBox(navigate),
      account,
    ),
  );
  const footer = h(
    'footer',
    { class: 'container footer' },
    h('span', null, 'Built only on the public API, with the typed client in client/. '),
    h('a', { href: '/docs' }, 'API reference'),
  );
  document.body.replaceChildren(header, main, footer, h('div', { id: 'toasts', class: 'toasts', 'aria-live': 'polite' }));
}

document.addEventListener('click', (event) => {
  const anchor = (event.target as Element | null)?.closest('a[data-nav]');
  const href = anchor?.getAttribute('href');
  if (!href || (event as MouseEvent).button !== 0 || (event as MouseEvent).metaKey || (event as MouseEvent).ctrlKey || (event as MouseEvent).shiftKey) return;
  event.preventDefault();
  navigate(href);
  window.scrollTo({ top: 0 });
});
document.addEventListener('explorer:rerender', () => void render());
window.addEventListener('popstate', () => void render());

/** Repaint when the signed-in learner changes (a refresh of the same session changes nothing on screen). */
let shownUser: string | undefined;
function sessionChanged() {
  const now = sparkpath.session?.claims.sub;
  if (now === shownUser) return;
  shownUser = now;
  void paintAccount();
  void render();
}

/**
 * Start: on the callback page (AUTH_CALLBACK_URL), hand code and state to the API and go where
 * the sign-in started; anywhere else, pick up a session from the refresh cookie, if any.
 */
async function start() {
  shell();
  if (location.pathname === '/explore/callback') {
    try {
      const result = await sparkpath.completeSignIn(location.search);
      const target = new URL(result.redirect_url, location.href);
      history.replaceState(null, '', target.origin === location.origin && target.pathname.startsWith('/explore') ? target.pathname + target.search : '/explore');
      toast(`Signed in as ${result.user.display_name || result.user.email}`);
    } catch (error) {
      history.replaceState(null, '', '/explore');
      toast(`Sign-in failed: ${error instanceof Error ? error.message : String(error)}`, 'error');
    }
  } else {
    await restoreSession().catch(() => undefined);
  }
  shownUser = sparkpath.session?.claims.sub;
  onSessionChange(sessionChanged);
  await paintAccount();
  await render();
}

void start();
