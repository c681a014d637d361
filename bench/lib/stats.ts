/**
 * Small statistics and the one table the bench prints. Times are milliseconds from
 * `performance.now()` (monotonic, sub-millisecond) unless a row says otherwise.
 */

/** The q-quantile (0..1) of `xs` by nearest rank; NaN for an empty list. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

/**
 * Runs `blocks` in turn, `rounds` times, each round starting one further along (a, b, c; b, c, a; …): what
 * comes first after another side's blocks, or right after the same daemon's, is each side's turn alike. A
 * fixed order gives one figure the same neighbour every round (row 11's owners' rule always ran second on
 * its daemon, right after the allow rule's spawns).
 */
export async function rotating(
  blocks: ReadonlyArray<(round: number) => Promise<unknown>>,
  rounds: number,
  /** Asked before each round after the first: false ends the rotation there. */
  goOn: (round: number) => boolean = () => true,
): Promise<void> {
  for (let round = 0; round < rounds && (round === 0 || goOn(round)); round++) {
    for (let k = 0; k < blocks.length; k++) await blocks[(round + k) % blocks.length]!(round);
  }
}

/** One line of the table: a figure, the baseline measured in the same run, their ratio and the goal. */
export interface Row {
  /** Issue 7's row number and a short name, e.g. `1 mcp overhead`. */
  id: string;
  figure: string;
  value: number;
  unit: string;
  baseline: number | null;
  baselineLabel: string;
  ratio: number | null;
  /** Human-readable goal, `—` when the row is informational. */
  goal: string;
  /** `pass` / `miss` against the goal, `info` when the row has none. */
  result: 'pass' | 'miss' | 'info';
  /** Samples, counts and anything the doc needs to explain the figure. */
  detail?: Record<string, unknown>;
}

export function ratioOf(value: number, baseline: number | null): number | null {
  if (baseline === null || !Number.isFinite(baseline) || baseline === 0) return null;
  return value / baseline;
}

function num(v: number | null, unit = ''): string {
  if (v === null || !Number.isFinite(v)) return '—';
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

/** A line with no goal: `value` beside the baseline measured in the same run, and their ratio. */
export function infoRow(
  id: string,
  figure: string,
  value: number,
  unit: string,
  baseline: number,
  baselineLabel: string,
): Row {
  return {
    id,
    figure,
    value,
    unit,
    baseline,
    baselineLabel,
    ratio: ratioOf(value, baseline),
    goal: '—',
    result: 'info',
  };
}

/** The table as fixed-width text (also valid Markdown). */
export function formatTable(rows: readonly Row[]): string {
  const head = ['row', 'figure', 'value', 'baseline', 'ratio', 'goal', 'result'];
  const body = rows.map((r) => [
    r.id,
    r.figure,
    num(r.value, r.unit),
    r.baseline === null ? '—' : `${num(r.baseline, r.unit)} (${r.baselineLabel})`,
    r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`,
    r.goal,
    r.result,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** The line a row prints when it could not be measured: no figure, a miss, and why. */
export function notMeasured(id: string, figure: string, goal: string, why: string): Row {
  return {
    id,
    figure: `${figure}: not measured`,
    value: Number.NaN,
    unit: '',
    baseline: null,
    baselineLabel: '',
    ratio: null,
    goal,
    result: 'miss',
    detail: { why },
  };
}
