/**
 * Numbers drawn offline (docs/sync.md, "Number blocks"): a site office that
 * ran out of the numbers head office lent it gives provisional ones, which
 * the server writes PROV-<office>-<n> (negative as a plain number), and the
 * next sync replaces. People see them marked as such, in plain words.
 */

/** What a person is told about a provisional number. */
export const provisionalNote = 'Provisional number — a final one is given at the next sync';

/** Whether a number (its text, or a plain number) is provisional. */
export function isProvisional(n: string | number | null | undefined): boolean {
  if (typeof n === 'number') return n < 0;
  return typeof n === 'string' && /PROV-\d+-\d+/.test(n);
}

/** A plain number as text: a provisional one as the server writes it. */
export function numberText(n: number): string {
  if (n >= 0) return String(n);
  const m = -n;
  const node = Math.floor(m / 2 ** 32);
  return `PROV-${node}-${m - node * 2 ** 32}`;
}
