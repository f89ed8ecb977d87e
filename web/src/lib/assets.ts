// Shapes of the fleets and assets API (docs/assets.md) the screens use.
export interface Fleet {
  id: string; organisation_id: string; name: string; description: string; prefix_id: string | null;
  // GET /fleets/{id} only: what the caller may do on this fleet (a fleet grant may give MANAGE_FLEETS).
  permissions?: { MANAGE_FLEETS: boolean };
}
export interface AssetStatus { id: string; name: string; description: string; active: boolean }
export interface AssetType { id: string; name: string; description: string; fleet_id: string | null; prefix_id: string | null; ephemerality: number }
export interface SubLocation { id: string; name: string; code: string }
export interface Location { id: string; name: string; code: string; sub_locations: SubLocation[] }
export interface Asset {
  id: string;
  organisation_id: string;
  fleet_id: string | null;
  type: AssetType | null;
  status: AssetStatus | null;
  location: Location | null;
  name: string;
  description: string;
  formatted_number: string | null;
  active: boolean;
  created_at: string;
}
export interface AssetLog {
  id: string;
  log: string;
  logged_at: string;
  created_by: { id: string };
  attachment: { id: string; file_name: string } | null;
}
export interface ImportReport {
  dry_run: boolean;
  applied: boolean;
  created: number;
  updated: number;
  invalid: number;
  rows: { row: number; number: string; action: string; errors?: Record<string, string> }[];
}

/** The ephemeralities of asset types (0 assets, 1 and 2 groups). */
export const ephemeralities = ['single asset', 'temporary group', 'permanent group'];
