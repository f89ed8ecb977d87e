// Shapes of the asset catalogue (fields, zones), asset groups and the full
// asset object, for the screens that edit them (docs/assets.md).
import { ApiError, api, type Schema } from './api';
import type { Asset, AssetType, Location } from './assets';

// The API's bodies, as its description states them (api.gen.ts).
export type EnumValue = Schema<'AssetEnumValue'>;
export type AssetField = Schema<'AssetField'>;
export type AssetZone = Schema<'AssetZone'>;
/** A field attached to a type, with its enum values. */
export type TypeField = Schema<'AssetTypeField'>;
export type FullAssetType = Schema<'AssetType'>;
export type FieldValue = Schema<'AssetFieldValue'>;
/** The asset object with what editing needs besides the register's shape. */
export type FullAsset = Schema<'Asset'>;
export type AssetGroup = Schema<'AssetGroup'>;

/** Asset field types by their integer (docs/assets.md). */
export const fieldTypes = ['text', 'number', 'yes/no', 'date', 'choice', 'member', 'location'];
export const FIELD_ENUM = 4;

/** A field value as a form shows it (text in an input). */
export function valueText(f: AssetField, v: FieldValue | undefined): string {
  if (!v || v.value === null || v.value === undefined) return '';
  if (f.type === 2) return v.value ? 'true' : 'false';
  if (f.type === 3 && typeof v.value === 'string') return v.value.slice(0, 10);
  return String(v.value);
}

/**
 * A field value as a page shows it: choices by their text, members and
 * locations by name (from the maps given), numbers with their units.
 */
export function shownFieldValue(v: FieldValue | undefined, f: TypeField, people: Map<string, string>, places: Map<string, string>): string {
  if (!v || v.value === null || v.value === undefined) return 'not set';
  switch (f.field.type) {
    case 2:
      return v.value ? 'yes' : 'no';
    case 4:
      return f.enum_values.find((e) => e.id === v.value)?.value ?? String(v.value);
    case 5:
      return people.get(String(v.value)) ?? String(v.value);
    case 6:
      return places.get(String(v.value)) ?? String(v.value);
  }
  const units = v.units ?? f.field.units;
  return valueText(f.field, v) + (units && f.field.type === 1 ? ' ' + units : '');
}

/**
 * The value to send for a field from its form text: '' removes it (null);
 * numbers and yes/no go as JSON numbers and booleans so the API checks them.
 */
export function valueOf(f: AssetField, text: string): unknown {
  const t = text.trim();
  if (t === '') return null;
  if (f.type === 1) {
    const n = Number(t);
    return Number.isFinite(n) ? n : t; // the API names a non-number at its field
  }
  if (f.type === 2) return t === 'true';
  return t;
}

/**
 * Whether the person may change a fleet's assets and groups: MANAGE_FLEETS
 * in the organisation (its permissions come with /users/@me/organisations),
 * or on the fleet itself, which the client learns from the fleet's
 * permission list: the API answers it only to holders of MANAGE_FLEETS on
 * the fleet (docs/web.md). The API decides every write anyway.
 */
export async function mayManageFleet(orgId: string, fleetId: string | null): Promise<boolean> {
  const mine = await api('GET', '/users/@me/organisations');
  if (mine.find((o) => o.id === orgId)?.permissions?.MANAGE_FLEETS) return true;
  if (!fleetId) return false;
  try {
    await api('GET', `/fleets/${fleetId}/permissions`);
    return true;
  } catch (e) {
    if (e instanceof ApiError && (e.status === 403 || e.status === 404)) return false;
    throw e;
  }
}
