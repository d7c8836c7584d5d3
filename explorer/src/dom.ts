/** Building the page: elements from data, never HTML strings (every text is a text node). */

export type Child = Node | string | number | false | null | undefined | Child[];
type Handler = (event: Event) => void;
export type Props = Record<string, string | number | boolean | Handler | null | undefined>;

function append(parent: Node, children: Child[]) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function apply(element: HTMLElement | SVGElement, props: Props | null | undefined) {
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (name === 'style') {
      // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
      for (const declaration of String(value).split(';')) {
        const at = declaration.indexOf(':');
        if (at > 0) element.style.setProperty(declaration.slice(0, at).trim(), declaration.slice(at + 1).trim());
      }
    } else element.setAttribute(name, value === true ? '' : String(value));
  }
}

/**
 * An HTML element.
 *
 * @example
 *   h('a', { href: '/explore', class: 'brand' }, 'Sparkpath')
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, props);
  append(element, children);
  return element;
}

/** An SVG element (the prerequisite graph). */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  apply(element, props);
  append(element, children);
  return element;
}

export const minutes = (mins: number) => (mins >= 60 ? `${Math.floor(mins / 60)} h ${mins % 60 ? `${mins % 60} min` : ''}`.trim() : `${mins} min`);
export const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
export const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
/** `sql-joins-explained` → `Sql joins explained`, for a title not loaded yet. */
export const fromSlug = (slug: string) => capitalize(slug.replace(/-/g, ' '));

/** A link inside the explorer; the router handles it without a page load. */
export const link = (href: string, props: Props | null, ...children: Child[]) => h('a', { ...props, href, 'data-nav': true }, ...children);

export function progressBar(percent: number, label?: string) {
  return h(
    'div',
    { class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': percent, 'aria-label': label ?? 'Progress' },
    h('div', { class: 'progress-fill', style: `width:${percent}%` }),
  );
}

export function difficultyBadge(level: string | null | undefined) {
  return level ? h('span', { class: `badge difficulty difficulty-${level}` }, capitalize(level)) : null;
}

const STATUS_LABEL: Record<string, string> = { not_started: 'Not started', in_progress: 'In progress', completed: 'Completed' };
export function statusBadge(status: string) {
  return h('span', { class: `badge status status-${status}`, 'data-status': status }, STATUS_LABEL[status] ?? status);
}

export function emptyState(title: string, text: string, ...actions: Child[]) {
  return h('div', { class: 'empty' }, h('h3', null, title), h('p', null, text), actions.length ? h('div', { class: 'empty-actions' }, ...actions) : null);
}

/** A short message at the bottom of the screen. */
export function toast(message: string, kind: 'info' | 'error' = 'info') {
  const host = document.getElementById('toasts');
  if (!host) return;
  const item = h('div', { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, message);
  host.appendChild(item);
  setTimeout(() => item.classList.add('leaving'), 3500);
  setTimeout(() => item.remove(), 4000);
}
