// A document's release tags, forks and shares (docs/documents.md, docs/web.md):
// the shapes the document page's tags, forks and shares panels and the
// "Shared with me" screen read.
import type { Schema } from './api';
import type { DocumentShare as BaseDocumentShare } from './shares';

export type Tag = Schema<'Tag'>;

/** What the panels read of a document beyond the editor's Doc. */
/** The document as its page's header reads it (GET /documents/{id}). */
export type DocMeta = Schema<'Document'>;

/** The spec's Revision Format values: how a release is labelled. */
export const revisionFormats: Record<number, { name: string; example: string }> = {
  0: { name: 'none', example: 'labels are given by hand' },
  1: { name: 'zero', example: '0, 1, 2…' },
  2: { name: 'one', example: '1, 2, 3…' },
  3: { name: 'major.minor', example: '0.1, 0.2, 1.0…' },
  4: { name: 'major.minor.revision', example: '0.0.1, 0.0.2, 0.1.3…' },
  5: { name: 'alphabet', example: '-, A, B… (no I, O, Q, S, X, Z)' },
  6: { name: 'alphabet, all letters', example: '-, A, B, C…' },
};
/** A document without a type releases with the spec's default, alphabet. */
export const formatOf = (d: DocMeta) => d.type?.revision_format ?? 5;

export const scopeNames = ['view', 'edit', 'branch', 'fork', 'revisions', 'export'] as const;
export type ScopeName = (typeof scopeNames)[number];
export const scopeLabels: Record<ScopeName, string> = {
  view: 'View it', edit: 'Edit it', branch: 'Make branches', fork: 'Fork it', revisions: 'Read every revision', export: 'Export it',
};

const scopeWords: Record<ScopeName, string> = {
  view: 'view', edit: 'edit', branch: 'make branches', fork: 'fork', revisions: 'read every revision', export: 'export',
};

/** A document share as the document's page reads it (the shared shape of lib/shares.ts, with its scopes). */
export type DocumentShare = BaseDocumentShare;

/** The scopes a share grants, in words (the owner's list and the recipient's "Shared with me"). */
export function scopesOf(s: BaseDocumentShare): string {
  return scopeNames.filter((k) => s[`scope_${k}`]).map((k) => scopeWords[k]).join(', ');
}
