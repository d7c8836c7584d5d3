import type { Schemas } from '@sparkpath/client';
import { svg } from './dom.js';

type SparkGraph = Schemas['SparkGraph'];

export interface PlacedNode {
  id: string;
  slug: string;
  title: string;
  /** Prerequisites to the left (negative), what the spark unlocks to the right, the spark at 0. */
  layer: number;
  x: number;
  y: number;
}

const NODE_W = 172;
const NODE_H = 46;
const COLUMN = 214;
const ROW = 62;
const PAD = 16;

/**
 * Lays the prerequisite graph out in columns: each node at its distance from the spark (the API's
 * shortest depth), prerequisites to the left, what it unlocks to the right, so every link reads
 * left to right ("source before target"). Inside a column, nodes are ordered by the mean row of
 * their neighbours in the column nearer the spark (two sweeps), which keeps most links straight.
 */
export function layoutGraph(rootId: string, ancestors: SparkGraph | undefined, descendants: SparkGraph | undefined) {
  const nodes = new Map<string, PlacedNode>();
  const edges = new Map<string, SparkGraph['edges'][number]>();
  for (const [graph, sign] of [[ancestors, -1], [descendants, 1]] as const) {
    for (const node of graph?.nodes ?? []) {
      if (!nodes.has(node.id) || node.id === rootId) nodes.set(node.id, { id: node.id, slug: node.slug, title: node.title, layer: sign * node.depth, x: 0, y: 0 });
    }
    for (const edge of graph?.edges ?? []) edges.set(`${edge.source}>${edge.target}`, edge);
  }
  const layers = new Map<number, PlacedNode[]>();
  for (const node of nodes.values()) layers.set(node.layer, [...(layers.get(node.layer) ?? []), node]);
  for (const column of layers.values()) column.sort((a, b) => a.title.localeCompare(b.title));

  const neighbours = (id: string) => [...edges.values()].flatMap((e) => (e.source === id ? [e.target] : e.target === id ? [e.source] : []));
  const order = () => {
    for (const column of layers.values()) column.forEach((node, index) => (node.y = index));
  };
  order();
  const keys = [...layers.keys()];
  const outward = [...keys.filter((k) => k > 0).sort((a, b) => a - b), ...keys.filter((k) => k < 0).sort((a, b) => b - a)];
  for (let sweep = 0; sweep < 2; sweep += 1) {
    for (const key of outward) {
      const inner = key > 0 ? key - 1 : key + 1;
      const column = layers.get(key)!;
      const mean = (node: PlacedNode) => {
        const rows = neighbours(node.id).flatMap((id) => {
          const other = nodes.get(id);
          return other && other.layer === inner ? [other.y] : [];
        });
        return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : node.y;
      };
      column.sort((a, b) => mean(a) - mean(b) || a.title.localeCompare(b.title));
      order();
    }
  }

  const tallest = Math.max(...[...layers.values()].map((column) => column.length), 1);
  const minLayer = Math.min(...keys, 0);
  for (const column of layers.values()) {
    const offset = ((tallest - column.length) * ROW) / 2;
    for (const [index, node] of column.entries()) {
      node.x = PAD + (node.layer - minLayer) * COLUMN;
      node.y = PAD + offset + index * ROW;
    }
  }
  const width = PAD * 2 + (Math.max(...keys, 0) - minLayer) * COLUMN + NODE_W;
  const height = PAD * 2 + (tallest - 1) * ROW + NODE_H;
  return { nodes: [...nodes.values()], edges: [...edges.values()], width, height };
}

/** The graph as an SVG picture; `status` colours the sparks the learner has progress on. */
export function drawGraph(
  layout: ReturnType<typeof layoutGraph>,
  options: { rootId: string; status: (id: string) => string | undefined; href: (node: PlacedNode) => string },
) {
  const byId = new Map(layout.nodes.map((node) => [node.id, node]));
  const edges = layout.edges.flatMap((edge) => {
    const from = byId.get(edge.source);
    const to = byId.get(edge.target);
    if (!from || !to) return [];
    const x1 = from.x + NODE_W;
    const y1 = from.y + NODE_H / 2;
    const x2 = to.x - 6;
    const y2 = to.y + NODE_H / 2;
    const bend = Math.max(40, (x2 - x1) / 2);
    return [svg('path', { class: 'edge', d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`, 'marker-end': 'url(#arrow)' })];
  });
  const nodes = layout.nodes.map((node) => {
    const status = options.status(node.id);
    const title = node.title.length > 23 ? `${node.title.slice(0, 22)}…` : node.title;
    const classes = ['node', node.id === options.rootId ? 'root' : '', status ? `node-${status}` : ''].filter(Boolean).join(' ');
    return svg(
      'a',
      { href: options.href(node), 'data-nav': true, class: classes, 'data-slug': node.slug },
      svg('title', null, node.title),
      svg('rect', { x: node.x, y: node.y, width: NODE_W, height: NODE_H, rx: 10 }),
      svg('text', { x: node.x + 14, y: node.y + NODE_H / 2 + 5 }, title),
    );
  });
  return svg(
    'svg',
    { class: 'graph', viewBox: `0 0 ${layout.width} ${layout.height}`, width: layout.width, height: layout.height, role: 'img', 'aria-label': 'Prerequisite graph' },
    svg('defs', null, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }))),
    edges,
    nodes,
  );
}
