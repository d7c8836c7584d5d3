/**
 * The content CLI's import progress: on a terminal, a bar for reading the bundle (by bytes, with
 * the items staged) and one for the database's phases, with a summary line per finished phase;
 * anywhere else (a pipe, a log, CI), one JSON line per finished phase, e.g.
 *   {"phase":"write","state":"finished","ms":8123,"counts":{"sparks":50000,...}}
 */
import cliProgress from 'cli-progress';
import type { ImportEvent } from '../content/operations.js';

export interface ProgressOutput {
  /** Where bars are drawn when it is a terminal. */
  terminal?: NodeJS.WriteStream;
  /** One line (without newline), for summaries and structured lines. */
  line: (text: string) => void;
}

const number = (n: unknown) => (typeof n === 'number' ? n.toLocaleString('en') : '?');
const seconds = (ms: unknown) => (typeof ms === 'number' ? `${(ms / 1000).toFixed(1)} s` : '');
const megabytes = (characters: unknown) => (typeof characters === 'number' ? (characters / 1e6).toFixed(1) : '?');

/** What a finished phase says in one line on a terminal. */
function summary(event: ImportEvent): string {
  const counts = Object.entries(event.counts ?? {}).map(([kind, n]) => `${number(n)} ${kind}`).join(', ');
  switch (event.phase) {
    case 'read':
      return `read      ${megabytes(event.characters)} MB, ${number(event.items)} items in ${seconds(event.ms)}${counts ? ` (${counts})` : ''}`;
    case 'validate':
      return `validate  ${number(event.items)} items, no problem, in ${seconds(event.ms)}`;
    case 'write':
      return `write     ${counts} in ${seconds(event.ms)}`;
    case 'derive':
      return `derive    ${number(event.search_postings)} search postings, ${number(event.lexicon_words)} lexicon words, ${number(event.graph_nodes)} graph nodes, ${number(event.rounds)} prerequisite rounds, rollups in ${seconds(event.ms)}`;
    default:
      return `${event.phase.padEnd(9)} ${seconds(event.ms)}`;
  }
}

/** A progress listener for `importBundle`'s events; `done` stops any bar still drawn. */
export function importProgress(output: ProgressOutput, databasePhases: string[]): { onEvent: (event: ImportEvent) => void; done: () => void } {
  const tty = output.terminal?.isTTY === true;
  let bar: cliProgress.SingleBar | undefined;
  const stop = () => {
    bar?.stop();
    bar = undefined;
  };
  const start = (format: string, total: number, value: number, payload: object) => {
    stop();
    bar = new cliProgress.SingleBar({ format, stream: output.terminal, hideCursor: true, clearOnComplete: true, etaBuffer: 20 }, cliProgress.Presets.shades_classic);
    bar.start(total, value, payload);
  };
  return {
    onEvent(event) {
      if (!tty) {
        if (event.state === 'finished') output.line(JSON.stringify(event));
        return;
      }
      if (event.phase === 'read') {
        if (event.state === 'started') start('read      [{bar}] {percentage}% | {mb} MB | {items} items', event.size ?? 1, 0, { mb: '0.0', items: '0' });
        else bar?.update(Math.min(event.characters ?? 0, bar.getTotal()), { mb: megabytes(event.characters), items: number(event.items) });
        if (event.state !== 'finished') return;
      }
      const index = databasePhases.indexOf(event.phase);
      if (event.state === 'started' && index >= 0) {
        start('{phase} [{bar}] phase {value}/{total} | {duration}s', databasePhases.length, index, { phase: event.phase.padEnd(9) });
      } else if (event.state === 'finished') {
        stop();
        output.line(summary(event));
      }
    },
    done: stop,
  };
}
