// The person's own TOTP secret for signing (QR code at meetings, witness
// signing): made in the browser, registered with PUT /users/@me/qr/token
// (the server keeps it 24 hours) and held in this tab's sessionStorage only.
import { api } from './api';
import { totp } from './totp';

const KEY = 'workspace.qr';

function newSecret(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const b = new Uint8Array(20);
  crypto.getRandomValues(b);
  let bits = 0, value = 0, out = '';
  for (const x of b) {
    value = (value << 8) | x;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** This tab's registered secret for userId, registering a new one when there is none (or it is about to lapse). */
export async function mySecret(userId: string): Promise<string> {
  const saved = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
  if (saved && saved.user === userId && Date.parse(saved.expires_at) > Date.now() + 60_000) return saved.secret;
  const s = newSecret();
  const r = await api('PUT', '/users/@me/qr/token', { token: s });
  sessionStorage.setItem(KEY, JSON.stringify({ user: userId, secret: s, expires_at: r.expires_at }));
  return s;
}

/** A code of the person's own secret, for one use (each code is accepted once). */
export async function myCode(userId: string): Promise<string> {
  return (await totp(await mySecret(userId))).code;
}

/** Forgets this tab's secret, so the next mySecret registers a new one. */
export function forgetSecret() {
  sessionStorage.removeItem(KEY);
}

/**
 * Runs fn with a fresh code of the person's own secret. Each code is
 * accepted once and the server allows one step of skew, so a refused code
 * is retried with the next step's, then once with a newly registered secret
 * (another tab may have replaced this one).
 */
export async function withMyCode<T>(userId: string, fn: (code: string) => Promise<T>, refused: (e: unknown) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const secret = await mySecret(userId);
    const { code } = await totp(secret, Date.now() + (attempt === 1 ? 30_000 : 0));
    try {
      return await fn(code);
    } catch (e) {
      if (attempt >= 2 || !refused(e)) throw e;
      if (attempt === 1) forgetSecret();
    }
  }
}
