import type { Schema } from './api';
// Shapes of the fleets and assets API (docs/assets.md) the screens use.
// The API's bodies, as its description states them (api.gen.ts).
// GET /fleets/{id} only adds what the caller may do on this fleet (a fleet grant may give MANAGE_FLEETS).
export type Fleet = Schema<'Fleet'> & Partial<Pick<Schema<'FleetFull'>, 'permissions'>>;
export type AssetStatus = Schema<'AssetStatus'>;
export type AssetType = Schema<'AssetType'>;
export type SubLocation = Schema<'SubLocation'>;
export type Location = Schema<'Location'>;
export type Asset = Schema<'Asset'>;
export type AssetLog = Schema<'AssetLog'>;
export type ImportReport = Schema<'ImportReport'>;

/** The ephemeralities of asset types (0 assets, 1 and 2 groups). */
export const ephemeralities = ['single asset', 'temporary group', 'permanent group'];
