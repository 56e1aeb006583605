import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, token } from './api.js';
import { Golems } from './golems.jsx';
import { Golem } from './golem.jsx';
import { Cycle } from './cycle.jsx';
import { Staging, Dream } from './staging.jsx';
import { Memory } from './memory.jsx';
import './style.css';

const route = () => location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);

// A link may carry the token once (#token=...&route): keep it in the tab, drop it from the address.
const given = location.hash.match(/^#token=([^&]+)(?:&(.*))?$/);
if (given) {
  token.set(decodeURIComponent(given[1]));
  history.replaceState(null, '', `#/${given[2] || ''}`);
}

function Page({ parts, me }) {
  const [a, b, c, d] = parts;
  if (a === 'golems' && b && c === 'cycles' && d) return <Cycle golem={b} id={d} />;
  if (a === 'golems' && b && c === 'staging') return <Staging golem={b} />;
  if (a === 'golems' && b && c === 'memory') return <Memory golem={b} />;
  if (a === 'golems' && b) return <Golem id={b} />;
  if (a === 'dreams' && b) return <Dream id={b} me={me} />;
  return <Golems />;
}

function TokenForm({ onSave, message }) {
  const [value, setValue] = useState('');
  return (
    <form class="card token" onSubmit={(e) => { e.preventDefault(); onSave(value.trim()); }}>
      <h1>Sign in with a token</h1>
      <p>{message || 'The inspector reads the API with a bearer token.'} Make one with <code>oneiros token add NAME --scope read</code>; it stays in this tab only.</p>
      <label for="token">Token</label>
      <input id="token" type="password" autocomplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
      <button type="submit" class="primary">Open</button>
    </form>
  );
}

function App() {
  const [parts, setParts] = useState(route());
  const [me, setMe] = useState(undefined);
  const [problem, setProblem] = useState('');
  const check = () => api('/whoami').then(setMe, (e) => { setMe(null); setProblem(e.status === 401 ? (token.get() ? 'That token was refused.' : '') : e.message); });
  useEffect(() => {
    check();
    const onHash = () => { setParts(route()); window.scrollTo(0, 0); };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  // After a move (not on first load) focus goes to the new content, as a page load would put it.
  const moved = useRef(false);
  useEffect(() => {
    if (moved.current) document.getElementById('main')?.focus({ preventScroll: true });
    moved.current = true;
  }, [parts.join('/')]);
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main').focus(); }}>Skip to content</a>
      <header class="top">
        <a class="brand" href="#/"><span aria-hidden="true">☾</span> oneiros <span class="muted">inspector</span></a>
        {me ? <span class="who">{me.name} · {me.scopes.join(', ')}{me.golems.length ? ` · ${me.golems.join(', ')}` : ''}</span> : null}
        {token.get() ? <button type="button" class="link" onClick={() => { token.set(''); setMe(null); setProblem(''); }}>Sign out</button> : null}
      </header>
      <main id="main" tabIndex={-1}>
        {me === undefined ? <p class="muted">Connecting…</p>
          : me === null ? <TokenForm message={problem} onSave={(t) => { token.set(t); check(); }} />
          : <Page key={parts.join('/')} parts={parts} me={me} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app'));
