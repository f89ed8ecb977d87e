// Sign-in through the server's own OpenID Connect code flow with PKCE
// (docs/web.md). The access token lives only in memory; the refresh token
// rotates and is kept in sessionStorage (this tab only, gone when the tab
// closes), so a reload does not sign the person out. Nothing goes into
// localStorage.
import { sha256 } from './sha256';

export const CLIENT_ID = 'workspace-web';
const REFRESH_KEY = 'workspace.refresh';
const PENDING_KEY = 'workspace.pkce';

let accessToken = '';
let accessExpires = 0;
let refreshing: Promise<boolean> | null = null;

function b64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString(n: number): string {
  const b = new Uint8Array(n);
  crypto.getRandomValues(b);
  return b64url(b);
}

async function s256(v: string): Promise<string> {
  const data = new TextEncoder().encode(v);
  if (crypto.subtle) return b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', data)));
  return b64url(sha256(data));
}

export function redirectURI(): string {
  return location.origin + '/app/callback';
}

/** Sends the browser to the sign-in page; it comes back to returnTo. */
export async function signIn(returnTo = location.pathname + location.search, signup = false): Promise<never> {
  const verifier = randomString(32);
  const state = randomString(16);
  const nonce = randomString(16);
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, nonce, returnTo }));
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: redirectURI(),
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: await s256(verifier),
    code_challenge_method: 'S256',
  });
  if (signup) q.set('screen_hint', 'signup');
  location.assign('/oauth/authorize?' + q.toString());
  return new Promise<never>(() => {}); // the page is going away
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  id_token: string;
  expires_in: number;
  error?: string;
  error_description?: string;
}

function keep(t: TokenAnswer) {
  accessToken = t.access_token;
  // A minute early, so a request never leaves with a token about to expire.
  accessExpires = Date.now() + Math.max(0, t.expires_in - 60) * 1000;
  sessionStorage.setItem(REFRESH_KEY, t.refresh_token);
}

function idTokenNonce(idToken: string): string {
  try {
    const payload = idToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(payload)).nonce ?? '';
  } catch {
    return '';
  }
}

/** Finishes sign-in at /app/callback; returns where to go next. */
export async function completeSignIn(): Promise<string> {
  const p = new URLSearchParams(location.search);
  const saved = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null');
  sessionStorage.removeItem(PENDING_KEY);
  if (p.get('error')) throw new Error(p.get('error_description') || p.get('error') || 'Sign-in failed.');
  if (!saved || !p.get('code') || p.get('state') !== saved.state) {
    throw new Error('This sign-in answer does not belong to this tab. Please sign in again.');
  }
  const r = await fetch('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: p.get('code')!,
      redirect_uri: redirectURI(),
      client_id: CLIENT_ID,
      code_verifier: saved.verifier,
    }),
  });
  const t = (await r.json()) as TokenAnswer;
  if (!r.ok) throw new Error(t.error_description || 'Sign-in failed.');
  if (idTokenNonce(t.id_token) !== saved.nonce) throw new Error('The sign-in answer was not meant for this tab. Please sign in again.');
  keep(t);
  return typeof saved.returnTo === 'string' && saved.returnTo.startsWith('/app/') ? saved.returnTo : '/app/';
}

async function doRefresh(): Promise<boolean> {
  const rt = sessionStorage.getItem(REFRESH_KEY);
  if (!rt) return false;
  const r = await fetch('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rt }),
  });
  if (!r.ok) {
    sessionStorage.removeItem(REFRESH_KEY);
    accessToken = '';
    return false;
  }
  keep((await r.json()) as TokenAnswer);
  return true;
}

/**
 * Refreshes the access token. One refresh at a time: refresh tokens rotate,
 * and presenting one twice would revoke the whole chain.
 */
export function refresh(): Promise<boolean> {
  refreshing ??= doRefresh().finally(() => (refreshing = null));
  return refreshing;
}

/** A current access token, or null when the person must sign in. */
export async function token(): Promise<string | null> {
  if (accessToken && Date.now() < accessExpires) return accessToken;
  return (await refresh()) ? accessToken : null;
}

/** Signs out by revoking the refresh token's chain (RFC 7009). */
export async function signOut(): Promise<void> {
  const rt = sessionStorage.getItem(REFRESH_KEY);
  sessionStorage.removeItem(REFRESH_KEY);
  sessionStorage.removeItem('workspace.qr'); // the meeting QR secret (MyQrCode)
  accessToken = '';
  if (rt) {
    await fetch('/oauth/revoke', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: rt, token_type_hint: 'refresh_token' }),
    }).catch(() => undefined);
  }
}
