// How a toolbox signature was given, in plain words, and who recorded it
// when it is not the signer's own (docs/toolboxes.md).
export interface Recorder { first_name: string; last_name: string }
export interface SignatureRow { signed_method: string; recorded_by?: Recorder | null }

const methods: Record<string, string> = {
  declaration: 'Declared attendance',
  signature: 'Signed by hand',
  toolbox_qr: 'Scanned the talk’s code',
  user_qr: 'Their own QR code',
  app: 'Signed in the app',
};

export function signedHow(u: SignatureRow): string {
  const how = methods[u.signed_method] ?? 'Signed';
  if (!u.recorded_by) return how;
  return `${how}, recorded by ${`${u.recorded_by.first_name} ${u.recorded_by.last_name}`.trim()}`;
}
