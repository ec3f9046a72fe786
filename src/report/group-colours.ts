/** The group report's colours: one definition of what each colour means, whence both an account line's fill (workbook
 * and e-mail) and the legend that explains it, so the two cannot say different things.
 */
import type { OpenBreakCounts } from '../domain/index.js';
import type { Tone } from './cells.js';

export type AccountColour = 'red' | 'amber' | 'green';

/** What the colouring needs of an account: its state and its run's open-break counts. */
export interface Colourable {
  state: 'reconciled' | 'breaks' | 'failed' | 'not run';
  counts: OpenBreakCounts | null;
}

interface ColourRule {
  colour: AccountColour;
  /** The legend's words: exactly what `applies` tests. */
  means: string;
  applies: (a: Colourable) => boolean;
  /** The workbook fill of the account's Account and Status cells (and of the legend's colour cell). */
  tone: Tone;
  /** The e-mail's table row. */
  html: { color: string; background: string };
}

/** Open breaks of high severity with no explanation: one is enough to make an account red. */
export function unexplainedHigh(counts: OpenBreakCounts | null): number {
  if (!counts) return 0;
  return counts.rules.filter((r) => r.severity === 'high').reduce((n, r) => n + r.total - r.explained, 0);
}

/** Worst first: an account takes the first colour whose rule applies. */
const RULES: readonly ColourRule[] = [
  {
    colour: 'red',
    means: 'failed, not run (or still running), or an unexplained open break of high severity',
    applies: (a) => a.state === 'failed' || a.state === 'not run' || unexplainedHigh(a.counts) > 0,
    tone: 'high',
    html: { color: '#FFFFFF', background: '#C00000' },
  },
  {
    colour: 'amber',
    means: 'unexplained open breaks, none of high severity',
    applies: (a) => a.state === 'breaks',
    tone: 'medium',
    html: { color: '#000000', background: '#FFC000' },
  },
  {
    colour: 'green',
    means: 'reconciled: no unexplained open break (explained ones may remain)',
    applies: () => true,
    tone: 'clean',
    html: { color: '#006100', background: '#C6EFCE' },
  },
];

function ruleOf(a: Colourable): ColourRule {
  return RULES.find((r) => r.applies(a))!;
}

export function accountColour(a: Colourable): AccountColour {
  return ruleOf(a).colour;
}

/** The workbook tone of an account's line. */
export function colourTone(colour: AccountColour): Tone {
  return RULES.find((r) => r.colour === colour)!.tone;
}

export function colourHtml(colour: AccountColour): { color: string; background: string } {
  return RULES.find((r) => r.colour === colour)!.html;
}

/** The verdict's colour: the worst of its accounts' (green for none). */
export function worstColour(accounts: readonly Colourable[]): AccountColour {
  const colours = new Set(accounts.map(accountColour));
  return RULES.find((r) => colours.has(r.colour))?.colour ?? 'green';
}

/** The legend, worst first: each colour, its tone and what it means, from the rules that colour the lines. */
export function colourLegend(): Array<{ colour: AccountColour; tone: Tone; means: string }> {
  return RULES.map(({ colour, tone, means }) => ({ colour, tone, means }));
}
