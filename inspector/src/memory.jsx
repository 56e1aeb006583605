import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { usePages, More, Err, Section, Badge } from './ui.jsx';

const enc = encodeURIComponent;

function Diff({ text }) {
  return (
    <pre class="diff wrap" data-testid="diff" aria-label="Unified diff">
      {text.split('\n').map((line, i) => (
        <span key={i} class={line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : line.startsWith('@@') ? 'hunk' : ''}>
          {line.startsWith('+') && !line.startsWith('+++') ? <span class="sr-only">added: </span> : null}
          {line.startsWith('-') && !line.startsWith('---') ? <span class="sr-only">removed: </span> : null}
          {line}{'\n'}
        </span>
      ))}
    </pre>
  );
}

// The item's text first; its other fields as a quiet line under it.
function SinkItem({ item }) {
  if (typeof item !== 'object' || item === null) return <li>{String(item)}</li>;
  const { content, text, priority, validated, ...rest } = item;
  return (
    <li>
      {priority ? <Badge value={priority} kind={`prio-${priority}`} /> : null}
      {validated !== undefined ? <Badge value={validated ? 'validated' : 'unvalidated'} kind={validated ? 'ok' : ''} /> : null}
      <p>{content ?? text ?? ''}</p>
      <p class="meta">{Object.entries(rest).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' · ')}</p>
    </li>
  );
}

function Sink({ golem, which, title }) {
  const pages = usePages(`/golems/${enc(golem)}/${which}?limit=20`);
  return (
    <Section title={title} id={`${which}-title`}>
      <Err error={pages.error} />
      {pages.loaded && !pages.items.length ? <p class="muted">None yet.</p> : null}
      <ul class="sink">{pages.items.map((item, i) => <SinkItem key={i} item={item} />)}</ul>
      <More pages={pages} />
    </Section>
  );
}

export function Memory({ golem }) {
  const versions = usePages(`/golems/${enc(golem)}/memory/versions?limit=20`);
  const [pick, setPick] = useState({ from: null, to: null });
  const [shown, setShown] = useState(null);
  const [diff, setDiff] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const vs = versions.items;
    if (vs.length && pick.to == null) setPick({ to: vs[0].version, from: vs[1]?.version ?? vs[0].version });
  }, [versions.items]);
  useEffect(() => {
    if (pick.to == null) return;
    setError(null);
    api(`/golems/${enc(golem)}/memory/versions/${pick.to}`).then(setShown, setError);
    if (pick.from != null && pick.from !== pick.to) {
      api(`/golems/${enc(golem)}/memory/diff?from=${pick.from}&to=${pick.to}`, { text: true }).then(setDiff, setError);
    } else setDiff(null);
  }, [pick.from, pick.to]);
  const options = versions.items.map((v) => <option key={v.version} value={v.version}>v{v.version}</option>);
  return (
    <>
      <h1>Memory of <span class="mono">{golem}</span></h1>
      <nav class="subnav" aria-label="Memory"><a href={`#/golems/${enc(golem)}`}>← golem {golem}</a></nav>
      <Section title="MEMORY.md" id="memory-title" actions={versions.items.length ? (
        <div class="pickers">
          <label class="inline">From <select value={pick.from ?? ''} onChange={(e) => setPick({ ...pick, from: Number(e.currentTarget.value) })}>{options}</select></label>
          <label class="inline">To <select value={pick.to ?? ''} onChange={(e) => setPick({ ...pick, to: Number(e.currentTarget.value) })}>{options}</select></label>
        </div>) : null}>
        <Err error={versions.error || error} />
        {versions.loaded && !versions.items.length ? <p class="muted">No MEMORY.md yet: nothing has been promoted.</p> : null}
        {diff != null ? <><h3>Changes v{pick.from} → v{pick.to}</h3><Diff text={diff} /></> : null}
        {shown ? <><h3>Version {shown.version} <span class="muted small">at log position {shown.position}{shown.reason ? ` · ${shown.reason}` : ''}</span></h3><pre class="wrap memory">{shown.content}</pre></> : null}
        <More pages={versions} label="Older versions" />
      </Section>
      <div class="grid3">
        <Sink golem={golem} which="beliefs" title="Beliefs" />
        <Sink golem={golem} which="noise" title="Noise fragments" />
        <Sink golem={golem} which="observations" title="Observations" />
      </div>
    </>
  );
}
