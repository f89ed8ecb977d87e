// Documents (docs/documents.md): the shapes the editor reads.
export interface Sheet { sheet_id: string; name: string; order: number }
export interface Column {
  column_id: string; name: string; description: string; type: string; data_format: number;
  formula: string; conditional_formatting: string; order: number;
}
export interface Cell { column_id: string; value: string; formatted_value?: string; background_colour: string | null }
export interface Clause { clause_id: string; sheet_id: string; order: number; text: string; fields: Cell[] }
export interface Revision {
  id: string; hash: string; created_at: string; user: { id: string }; parents: string[]; message: string | null; title: string;
  tree?: { sheets: Sheet[]; columns: Column[]; clauses: Clause[]; clause_count: number };
}
export interface Branch { id: string; name: string; protected: boolean; commit_count: number; revision: { id: string; hash: string } }
export interface Doc {
  id: string; organisation_id: string; formatted_number: string; title: string; default_branch: Branch | null;
  permissions: Record<string, boolean>; is_deleted: boolean;
}
export interface Conflict { id: string; kind: string; sheet_id: string | null; clause_id: string | null; column_id: string | null; base: unknown; ours: unknown; theirs: unknown }
export interface Change { kind: string; sheet_id?: string; clause_id?: string; column_id?: string; attribute?: string; from: unknown; to: unknown }

/** How a conflict's or a change's value reads. */
export function shown(v: unknown): string {
  if (v === null || v === undefined || v === '') return '(empty)';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}
