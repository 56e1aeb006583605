// Small shared pieces: data loading, paginated lists, formatting.
import { useEffect, useState, useCallback } from 'preact/hooks';
import { api } from './api.js';

export function useApi(path, deps = []) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const load = useCallback(() => {
    if (!path) return;
    api(path).then((data) => setState({ data, error: null, loading: false }),
      (error) => setState({ data: null, error, loading: false }));
  }, [path, ...deps]);
  useEffect(load, [load]);
  return { ...state, reload: load, set: (data) => setState({ data, error: null, loading: false }) };
}

// A cursor-paginated list: one page at a time, "Load more" asks for the next.
export function usePages(path) {
  const [items, setItems] = useState([]);
  const [next, setNext] = useState(undefined);
  const [error, setError] = useState(null);
  const sep = path.includes('?') ? '&' : '?';
  const fetchPage = useCallback((cursor, replace) => {
    api(`${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`).then(
      (page) => { setItems((old) => (replace ? page.items : [...old, ...page.items])); setNext(page.next_cursor); setError(null); },
      setError);
  }, [path]);
  useEffect(() => fetchPage(null, true), [fetchPage]);
  return { items, setItems, more: next ? () => fetchPage(next, false) : null, error, reload: () => fetchPage(null, true), loaded: next !== undefined };
}

export const More = ({ pages, label = 'Load more' }) => (
  pages.more ? <button type="button" class="more" onClick={pages.more}>{label}</button> : null
);

export const Err = ({ error }) => (error ? <p class="error" role="alert">{error.type}: {error.message}</p> : null);

export const Loading = () => <p class="muted" aria-live="polite">Loading…</p>;

export const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
export const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`);
export const fmtUsd = (v) => (v == null ? '—' : `$${Number(v).toFixed(v < 0.01 && v > 0 ? 5 : 4)}`);
export const pct = (v) => `${Math.round(v * 100)}%`;

export const Badge = ({ value, kind }) => <span class={`badge ${kind || ''} v-${String(value).toLowerCase()}`}>{value ?? '—'}</span>;

export function Section({ title, id, children, actions }) {
  return (
    <section aria-labelledby={id} class="card">
      <div class="card-head">
        <h2 id={id}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

// Plain values as a definition list; nested values as compact JSON text (never as HTML).
export function Fields({ value }) {
  return (
    <dl class="fields">
      {Object.entries(value).map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v ?? '—')}</dd>
        </div>
      ))}
    </dl>
  );
}
