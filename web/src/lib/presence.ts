// A document's presence stream (GET /documents/{id}/presence/stream,
// Server-Sent Events). EventSource cannot send the bearer token, so the
// stream is read with fetch; it reconnects after a drop.
import type { Schema } from './api';
import { refresh, token } from './auth';

export type Presence = Schema<'Presence'>;
export interface RevisionEvent { id: string; hash: string; parents: string[]; branches: string[] }

export interface StreamHandlers {
  presence: (p: Presence) => void;
  revision: (r: RevisionEvent) => void;
  connected: (yes: boolean) => void;
}

/** Opens the stream; the answer closes it. */
export function openPresenceStream(documentId: string, on: StreamHandlers): () => void {
  let closed = false;
  let ctl: AbortController | null = null;
  let retry = 1000;
  const run = async () => {
    while (!closed) {
      ctl = new AbortController();
      try {
        let r = await fetch(`/documents/${documentId}/presence/stream`, { headers: { Authorization: 'Bearer ' + (await token()), Accept: 'text/event-stream' }, signal: ctl.signal });
        if (r.status === 401 && (await refresh())) {
          r = await fetch(`/documents/${documentId}/presence/stream`, { headers: { Authorization: 'Bearer ' + (await token()), Accept: 'text/event-stream' }, signal: ctl.signal });
        }
        if (!r.ok || !r.body) throw new Error(`stream ${r.status}`);
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        let ended = false;
        while (!closed && !ended) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let name = 'message';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) name = line.slice(6).trim();
              else if (line.startsWith('data:')) data += line.slice(5).trim();
            }
            if (!data) continue;
            const v = JSON.parse(data);
            if (name === 'ready') {
              retry = 1000;
              on.connected(true);
            } else if (name === 'presence') on.presence(v);
            else if (name === 'revision') on.revision(v);
            else if (name === 'end') ended = true;
          }
        }
      } catch {
        /* dropped: try again below */
      }
      on.connected(false);
      if (closed) return;
      await new Promise((res) => setTimeout(res, retry));
      retry = Math.min(retry * 2, 30_000);
    }
  };
  run();
  return () => {
    closed = true;
    ctl?.abort();
  };
}
