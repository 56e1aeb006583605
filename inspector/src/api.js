// The inspector's only way to the server: /api/v1 with the token the user gave, and the event stream.
const KEY = 'oneiros-token';

export const token = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (value) => (value ? sessionStorage.setItem(KEY, value) : sessionStorage.removeItem(KEY)),
};

function headers(extra = {}) {
  const t = token.get();
  return t ? { Authorization: `Bearer ${t}`, ...extra } : extra;
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `HTTP ${status}`);
    this.status = status;
    this.type = body?.error?.type || 'HTTPError';
  }
}

export async function api(path, { method = 'GET', body, text = false } = {}) {
  const init = { method, headers: headers(body ? { 'Content-Type': 'application/json' } : {}) };
  if (body) init.body = JSON.stringify(body);
  const r = await fetch(`/api/v1${path}`, init);
  if (!r.ok) {
    let parsed = null;
    try { parsed = await r.json(); } catch { /* not JSON */ }
    throw new ApiError(r.status, parsed);
  }
  return text ? r.text() : r.json();
}

export const q = (params) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.append(k, v);
  const text = s.toString();
  return text ? `?${text}` : '';
};

export const head = async () => (await (await fetch('/healthz')).json()).position;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Server-Sent Events over fetch, so the token travels in a header (EventSource cannot send one).
// Reconnects with Last-Event-ID: the server resumes right after the last position seen.
export function subscribe(params, onEvent, onState = () => {}) {
  let stopped = false;
  let last = params.after != null ? String(params.after) : null;
  let ctrl = null;
  const rest = { ...params };
  delete rest.after;
  (async () => {
    while (!stopped) {
      ctrl = new AbortController();
      try {
        const h = headers(last ? { 'Last-Event-ID': last } : {});
        const r = await fetch(`/api/v1/events${q(rest)}`, { headers: h, signal: ctrl.signal });
        if (!r.ok) throw new ApiError(r.status, null);
        onState(true);
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        let ev = {};
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i).replace(/\r$/, '');
            buf = buf.slice(i + 1);
            if (line === '') {
              if (ev.id) last = ev.id;
              if (ev.data !== undefined) onEvent(ev.event || 'message', JSON.parse(ev.data));
              ev = {};
            } else if (line[0] !== ':') {
              const k = line.indexOf(':');
              const field = k < 0 ? line : line.slice(0, k);
              const v = k < 0 ? '' : line.slice(k + 1).replace(/^ /, '');
              ev[field] = field === 'data' && ev.data !== undefined ? `${ev.data}\n${v}` : v;
            }
          }
        }
      } catch {
        if (stopped) return;
      }
      onState(false);
      await sleep(1000);
    }
  })();
  return () => { stopped = true; if (ctrl) ctrl.abort(); };
}

// The phase table (/api/v1/machine's phases) names each phase on the stream (Bardo's 'onset',
// 'return'...) and in the log; a name the table lacks is kept as it is.
export const phaseOfStream = (machine, name) => machine?.phases.find((p) => p.stream === name)?.phase ?? name;
export const MODE = { waking: 'Waking', dreaming: 'Dreaming', dying: 'Dying' };
