// Documents (docs/documents.md): the shapes the editor reads.
import type { Schema } from './api';
import type { FormState } from './form.svelte';

export type Sheet = Schema<'Sheet'>;
export type Column = Schema<'Column'>;
export type Cell = Schema<'Cell'>;
export type Clause = Schema<'Clause'>;
export type Revision = Schema<'Revision'>;
export type Branch = Schema<'Branch'>;
export type Doc = Schema<'Document'>;
export type Conflict = Schema<'Conflict'>;
/** One change between two revisions (GET .../diff/{other}). */
export type Change = Schema<'RevisionDiff'>['changes'][number];

/** How a conflict's or a change's value reads. */
export function shown(v: unknown): string {
  if (v === null || v === undefined || v === '') return '(empty)';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** A change sent on a base revision: its answer names the new revision. */
export type ChangeResult = Schema<'Change'> | Schema<'RevisionChange'> | Schema<'FieldUpdate'>;
/**
 * One change of the content, run by the editor's change flow (on the
 * revision shown, merged or its conflicts shown). Errors go to form when
 * given (next to that form's inputs), else to the editor's own; what was
 * done is always the editor's message (the form that asked may close).
 */
export interface Pending { run: (base: string) => Promise<ChangeResult>; describe: string; form?: FormState }
export type RunChange = (p: Pending) => Promise<boolean>;

/** An item field of the organisation (docs/documents.md); type 4 is enum. */
export type ItemField = Schema<'DocumentField'>;
export const ENUM_FIELD = 4;

/** A prefix of the organisation (its template numbers clauses without a format of their own). */
export type Prefix = Schema<'Prefix'>;

/** Data formats of number and formula columns (the spec's Document Data Formats). */
export const DATA_FORMATS = ['As typed', 'Decimal (0.0000)', 'Scientific (0.0000x10^0)', 'Engineering (x10^3n)', 'Time (dd:hh:mm:ss)', 'Date and time (Unix seconds)'];

/** Column types as a person reads them. */
export const COLUMN_TYPES: [string, string][] = [
  ['text', 'Text'], ['number', 'Number'], ['boolean', 'Yes or no'], ['date', 'Date'], ['enum', 'Choice from an item field'], ['formula', 'Formula'],
];

/**
 * Numbers clauses as the server's exports do (docs/documents.md, Exports):
 * the revision's clause_prefix_format with {number} zero-padded to
 * clause_digits and {document} the document's formatted number; without a
 * format, the clause_prefix_id prefix's template and digits; else the number.
 */
export function clauseNumberer(rev: Revision, documentNumber: string, prefix: Prefix | null): (n: number) => string {
  let format = rev.clause_prefix_format || '';
  let digits = rev.clause_digits && rev.clause_digits > 0 ? rev.clause_digits : 0;
  if (!format && prefix && rev.clause_prefix_id === prefix.id) {
    format = prefix.number_format;
    if (!digits) digits = prefix.number_digits ?? 0;
  }
  if (!format) format = '{number}';
  format = format.replaceAll('{document}', documentNumber);
  return (n) => format.replaceAll('{number}', String(n).padStart(digits, '0'));
}

/**
 * The path of a change on a revision: typed as the route it names, so the
 * change's answer is the description's (the query the editor adds names no
 * other route).
 */
export function revisionPath<R extends string>(id: string, base: string, rest: R, query = ''): `/documents/${string}/revisions/${string}${R}` {
  return `/documents/${id}/revisions/${base}${rest}${query}` as `/documents/${string}/revisions/${string}${R}`;
}
