// The public HTTP API, the same one every client uses.
import { refresh, signIn, token } from './auth';

import { messageWords, wordFields } from './messages';
import type { components, paths } from './api.gen';

/**
 * A body the API description names (components.schemas of GET /openapi.json,
 * generated into api.gen.ts by `npm run gen:api`): a screen typed by it fails
 * svelte-check when it reads a field the API does not have.
 */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type JSONOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON answer of a route at 200, 201 or 202 (undefined for a 204 answer). */
export type Answer<P extends keyof paths, M extends Method = 'get'> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer A } ? JSONOf<A> : R extends { 201: infer A } ? JSONOf<A> : R extends { 202: infer A } ? JSONOf<A> : R extends { 204: unknown } ? undefined : never
  : never;

/*
 * Routes by the path a call builds. A call's path is a template string such as
 * `/organisations/${id}/roles?$top=10`; TypeScript types it as the template
 * `/organisations/${string}/roles?$top=10`, which is split into segments and
 * matched to the description's routes ({id} takes any one segment). A route
 * whose segment is the same word wins over one with a parameter there
 * (/users/@me over /users/{id}). A path TypeScript cannot see (a whole
 * variable) names no route: its answer is unknown and the caller must say.
 */
type Seg<S extends string> = S extends `${infer H}/${infer T}` ? [H, ...Seg<T>] : [S];
type NoQuery<S extends string> = S extends `${infer P}?${string}` ? P : S;
type IsParam<S> = S extends `{${string}}` ? true : false;
// Loose: a parameter segment takes anything; strict: a literal word of the call only a route's same word.
type SegMatch<R extends string[], P extends string[], Strict extends boolean> = R extends [infer RH, ...infer RT extends string[]]
  ? P extends [infer PH, ...infer PT extends string[]]
    ? IsParam<RH> extends true
      ? Strict extends true
        ? string extends PH ? SegMatch<RT, PT, Strict> : false
        : SegMatch<RT, PT, Strict>
      : [PH] extends [RH] ? SegMatch<RT, PT, Strict> : false
    : false
  : P extends [] ? true : false;
type RoutesFor<P extends string, Strict extends boolean> = {
  [R in keyof paths & string]: SegMatch<Seg<R>, Seg<NoQuery<P>>, Strict> extends true ? R : never;
}[keyof paths & string];
/** The described route a call's path names (never when it names none). */
export type RouteOf<P extends string> = [RoutesFor<P, true>] extends [never] ? RoutesFor<P, false> : RoutesFor<P, true>;
type Upper = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** The answer the description gives for a call (unknown when the path names no route). */
export type AnswerAt<P extends string, M extends Upper = 'GET'> = P extends string // one path of a union at a time
  ? [RouteOf<P>] extends [never]
    ? unknown
    : RouteOf<P> extends infer R extends keyof paths ? Answer<R, Lowercase<M>> : never
  : never;
type Item<A> = A extends (infer I)[] ? I : unknown;

export class ApiError extends Error {
  status: number;
  fields: Record<string, string>;
  /** The whole error body (a 409 of a document change carries its conflicts). */
  body: Record<string, unknown>;
  constructor(status: number, message: string, fields: Record<string, string> = {}, body: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.fields = fields;
    this.body = body;
  }
}

async function send(method: string, path: string, body: unknown, tok: string | null): Promise<Response> {
  const headers: Record<string, string> = {};
  if (tok) headers.Authorization = 'Bearer ' + tok;
  // A FormData body goes as multipart/form-data (the browser sets the boundary).
  if (body instanceof FormData) return fetch(path, { method, headers, body });
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const writeHooks: (() => void)[] = [];
/**
 * fn runs after each change the person makes through the API (any method
 * but GET that succeeded): the bell asks anew at once instead of at its next
 * poll.
 */
export function afterWrite(fn: () => void) {
  writeHooks.push(fn);
}

/**
 * background: a request the page makes by itself (a presence beat, the
 * bell's count), not the person's: a write does not count as their change,
 * and a refusal of the session does not take them to the sign-in page (the
 * bell asking after the account was deleted must not).
 */
interface CallOptions { background?: boolean }

async function call(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<Response> {
  let r: Response;
  try {
    r = await send(method, path, body, await token());
    if (r.status === 401 && (await refresh())) r = await send(method, path, body, await token());
  } catch {
    throw new ApiError(0, 'The server cannot be reached. Check the connection and try again.');
  }
  if (r.status === 401 && !opts.background) await signIn();
  if (!r.ok) {
    let msg = `The server answered ${r.status}.`;
    let fields: Record<string, string> = {};
    let body: Record<string, unknown> = {};
    try {
      body = await r.json();
      msg = (body.message as string) || msg;
      fields = (body.errors as Record<string, string>) || {};
    } catch {
      /* not JSON: keep the status message */
    }
    if (r.status === 429 && r.headers.get('Retry-After')) msg += ` (retry in ${r.headers.get('Retry-After')} s)`;
    // The API's words stay in body; a person reads the catalogue's (messages.ts).
    throw new ApiError(r.status, messageWords(msg), wordFields(fields), body);
  }
  if (method !== 'GET' && method !== 'HEAD' && !opts.background) for (const fn of writeHooks) fn();
  return r;
}

/**
 * Calls the API. The answer's type is the description's for the route the path
 * names (AnswerAt), so a screen that reads a field the answer lacks fails
 * `npm run check`.
 */
export async function api<M extends Upper, P extends string>(method: M, path: P, body?: unknown, opts?: CallOptions): Promise<AnswerAt<P, M>> {
  const r = await call(method, path, body, opts);
  if (r.status === 204) return undefined as AnswerAt<P, M>;
  const text = await r.text();
  return (text ? JSON.parse(text) : undefined) as AnswerAt<P, M>;
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** One page of a list endpoint ($skip/$top, X-Total-Count: docs/lists.md). */
export async function apiPage<P extends string, T = Item<AnswerAt<P>>>(path: P, skip: number, top: number, filter = ''): Promise<Page<T>> {
  const q = new URLSearchParams({ $skip: String(skip), $top: String(top) });
  if (filter) q.set('$filter', filter);
  const r = await call('GET', path + (path.includes('?') ? '&' : '?') + q.toString());
  const items = (await r.json()) as T[];
  return { items, total: Number(r.headers.get('X-Total-Count') ?? items.length) };
}

/** A list whose page the path already names, with its X-Total-Count. */
export async function apiCounted<P extends string, T = Item<AnswerAt<P>>>(path: P): Promise<Page<T>> {
  const r = await call('GET', path);
  const items = (await r.json()) as T[];
  return { items, total: Number(r.headers.get('X-Total-Count') ?? items.length) };
}

/** Quotes a string for an OData $filter. */
export function odata(s: string): string {
  return "'" + s.replace(/'/g, "''") + "'";
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Downloads a file the API serves (with the bearer token) under a name. */
export async function download(path: string, fallbackName: string): Promise<void> {
  const r = await call('GET', path);
  const cd = r.headers.get('Content-Disposition') ?? '';
  const m = /filename\*=UTF-8''([^;]+)/i.exec(cd) ?? /filename="?([^";]+)"?/i.exec(cd);
  const name = m ? decodeURIComponent(m[1]) : fallbackName;
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A GET answer with its headers (for counts a list sends beside X-Total-Count). */
export async function apiWithHeaders<P extends string, T = AnswerAt<P>>(path: P, opts?: CallOptions): Promise<{ body: T; headers: Headers }> {
  const r = await call('GET', path, undefined, opts);
  return { body: (await r.json()) as T, headers: r.headers };
}
