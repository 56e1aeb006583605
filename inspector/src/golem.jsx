import { useEffect, useRef, useState } from 'preact/hooks';
import { api, head, subscribe, phaseOfStream, MODE } from './api.js';
import { Diagram } from './diagram.jsx';
import { useApi, usePages, More, Err, Loading, Badge, Section, fmtTime, fmtUsd } from './ui.jsx';

const enc = encodeURIComponent;

export function Gauge({ label, value, cap, unit = '' }) {
  const share = cap ? Math.min(1, value / cap) : 0;
  const level = share >= 0.9 ? 'high' : share >= 0.6 ? 'mid' : 'low';
  const text = cap ? `${value.toLocaleString()}${unit} of ${cap.toLocaleString()}${unit}` : `${value.toLocaleString()}${unit}, no cap`;
  return (
    <div class="gauge">
      <div class="gauge-label"><span>{label}</span><span class="muted">{text}</span></div>
      <div class={`bar ${level}`} role="meter" aria-label={label} aria-valuemin="0" aria-valuemax={cap || 0} aria-valuenow={value} aria-valuetext={text}>
        <span style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </div>
    </div>
  );
}

function Budget({ golem, cycle }) {
  const b = useApi(cycle ? `/golems/${enc(golem)}/cycles/${enc(cycle)}/budget` : null, [cycle]);
  if (!cycle) return <p class="muted">No cycle yet: nothing spent.</p>;
  if (b.error) return <Err error={b.error} />;
  if (!b.data) return <Loading />;
  return (
    <div class="gauges" data-testid="budget">
      {b.data.caps.map((c) => (
        <div key={c.cap} class="gauge-pair">
          <h3>{c.cap}</h3>
          <Gauge label={`${c.cap} tokens`} value={c.tokens} cap={c.token_cap} />
          <Gauge label={`${c.cap} USD`} value={Number(c.usd.toFixed(4))} cap={c.usd_cap} />
        </div>
      ))}
    </div>
  );
}

function ShouldDream({ golem, tick }) {
  const s = useApi(`/golems/${enc(golem)}/should-dream`, [tick]);
  if (s.error) return <Err error={s.error} />;
  if (!s.data) return <Loading />;
  const d = s.data;
  return (
    <div>
      <p class="verdict">
        <Badge value={d.dream ? `dream: ${d.trigger}` : 'no dream'} kind={d.dream ? 'ok' : 'no'} />{' '}
        <span class="muted">urgency {d.urgency.toFixed(2)} / threshold {d.threshold.toFixed(2)}{d.deep ? ', deep' : ''} · at {fmtTime(d.at)}</span>
      </p>
      <ul class="checks">
        {d.checks.map((c) => (
          <li key={c.name} class={c.passed ? 'pass' : 'fail'}>
            <span class="mark" aria-hidden="true">{c.passed ? '✓' : '✗'}</span>
            <span class="sr-only">{c.passed ? 'passed' : 'failed'}</span>
            <strong>{c.name}</strong> <span class="detail">{c.detail}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Health({ golem, tick }) {
  const h = useApi(`/golems/${enc(golem)}/health`, [tick]);
  if (h.error) return <Err error={h.error} />;
  if (!h.data) return <Loading />;
  const { alarms, history } = h.data;
  return (
    <div data-testid="health">
      {alarms.length === 0 ? (
        <p class="verdict"><Badge value="no alarm" kind="ok" /></p>
      ) : (
        <ul class="checks">
          {alarms.map((a) => (
            <li key={a.alarm} class="fail" data-alarm={a.alarm}>
              <span class="mark" aria-hidden="true">✗</span>
              <span class="sr-only">alarm raised</span>
              <strong>{a.alarm}</strong> <span class="detail">{a.detail}; since cycle <span class="mono">{a.cycle_id}</span></span>
            </li>
          ))}
        </ul>
      )}
      <p class="muted">{history.length} alarm events raised and cleared in all (oneiros health)</p>
    </div>
  );
}

export function Golem({ id }) {
  const machine = useApi('/machine');
  const [state, setState] = useState(null);
  const [error, setError] = useState(null);
  const [trail, setTrail] = useState([]);
  const [tick, setTick] = useState(0);
  const [live, setLive] = useState(false);
  const runs = usePages(`/dreaming/runs?golem=${enc(id)}&limit=10`);
  // Once a cycle ends the list is read again, but the server's projections trail the event stream:
  // a read may still have the cycle dreaming, or complete with nothing staged yet (the staging
  // process stages its outputs after it ends). So it is read again until the cycle's row has ended
  // with what it staged, or as empty (every 0.5 s, 20 times at most).
  const [settle, setSettle] = useState(null);
  const dreaming = useRef(null);
  const declared = useRef(null);
  declared.current = machine.data;
  // Moves are shown one at a time, each for a moment, so a fast cycle still visibly walks every phase.
  const moves = useRef([]);
  useEffect(() => {
    const timer = setInterval(() => {
      const next = moves.current.shift();
      if (next) setState((old) => ({ ...old, ...next }));
    }, 300);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    let stop = () => {};
    let gone = false;
    (async () => {
      try {
        const after = await head();
        const s = await api(`/golems/${enc(id)}`);
        if (gone) return;
        setState(s);
        stop = subscribe({ golem: id, after }, (name, data) => {
          if (name === 'mode_change') {
            const mode = MODE[data.mode] || data.mode;
            const first = declared.current?.phases[0];
            moves.current.push(mode === 'Dreaming'
              ? { mode, phase: first?.phase ?? null, machine_state: first?.state ?? 'Dreaming' }
              : { mode, phase: null, cycle_id: null, machine_state: mode });
            if (mode === 'Dreaming') setTrail([]);
            if (mode === 'Waking') {
              runs.reload();
              setTick((t) => t + 1);
              setSettle({ cycle: dreaming.current, left: 20 });
            }
          } else if (name === 'dream_progress') {
            const phase = phaseOfStream(declared.current, data.phase);
            const at = declared.current?.phases.find((p) => p.phase === phase)?.state;
            dreaming.current = data.cycle_id;
            moves.current.push({ mode: 'Dreaming', phase, cycle_id: data.cycle_id, ...(at ? { machine_state: at } : {}) });
            setTrail((t) => (t.includes(phase) ? t : [...t, phase]));
          } else if (name === 'dream_complete') {
            runs.reload();
            setSettle({ cycle: data.cycle_id, left: 20 });
          }
        }, setLive);
      } catch (e) { setError(e); }
    })();
    return () => { gone = true; stop(); };
  }, [id]);

  useEffect(() => {
    if (!settle?.left) return undefined;
    const row = settle.cycle ? runs.items.find((r) => r.cycle_id === settle.cycle) : runs.items[0];
    const settled = row && row.status !== 'dreaming' && (row.staged > 0 || row.empty || row.status !== 'complete');
    if (settled) { setSettle(null); return undefined; }
    const timer = setTimeout(() => {
      runs.reload();
      setTick((t) => t + 1);
      setSettle((old) => (old ? { ...old, left: old.left - 1 } : old));
    }, 500);
    return () => clearTimeout(timer);
  }, [settle, runs.items]);

  const latest = runs.items[0]?.cycle_id;
  const visited = (machine.data?.phases || []).filter((p) => trail.includes(p.phase)).map((p) => p.state);
  return (
    <>
      <h1>Golem <span class="mono">{id}</span></h1>
      <nav class="subnav" aria-label="This golem">
        <a href={`#/golems/${enc(id)}/staging`}>Staging and review</a>
        <a href={`#/golems/${enc(id)}/memory`}>Memory</a>
      </nav>
      <Err error={error || machine.error} />
      <Section title="State machine" id="machine-title" actions={<span class={`live ${live ? 'on' : ''}`} aria-live="polite">{live ? 'live' : 'connecting…'}</span>}>
        {state ? (
          <p class="state-line" aria-live="polite">
            Mode <Badge value={state.mode} /> · phase {state.phase ? <Badge value={state.phase} kind="phase" /> : <span class="muted">—</span>}
            {state.cycle_id ? <> · cycle <a class="mono" href={`#/golems/${enc(id)}/cycles/${enc(state.cycle_id)}`}>{state.cycle_id}</a></> : null}
          </p>
        ) : <Loading />}
        <Diagram machine={machine.data} current={state?.machine_state} visited={visited} />
        <ol class="trail" aria-label="Phases of the current cycle, as they arrived" data-testid="trail">
          {trail.map((p) => <li key={p} data-phase={p}>{p}</li>)}
        </ol>
      </Section>
      <div class="grid2">
        <Section title="Should it dream now?" id="should-title"><ShouldDream golem={id} tick={tick} /></Section>
        <Section title="Budget of the latest cycle" id="budget-title"><Budget golem={id} cycle={latest} /></Section>
      </div>
      <Section title="Dreaming health" id="health-title"><Health golem={id} tick={tick} /></Section>
      <Section title="Cycles" id="runs-title">
        <Err error={runs.error} />
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Cycle</th><th scope="col">Status</th><th scope="col">Trigger</th><th scope="col">Started</th><th scope="col" class="num">Staged</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th></tr></thead>
            <tbody>
              {runs.items.map((r) => (
                <tr key={r.cycle_id} data-cycle={r.cycle_id}>
                  <th scope="row"><a class="mono" href={`#/golems/${enc(id)}/cycles/${enc(r.cycle_id)}`}>{r.cycle_id}</a></th>
                  <td><Badge value={r.status} /></td>
                  <td>{r.trigger}</td>
                  <td>{fmtTime(r.started_at)}</td>
                  <td class="num">{r.staged}</td>
                  <td class="num">{r.tokens.toLocaleString()}</td>
                  <td class="num">{fmtUsd(r.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <More pages={runs} />
      </Section>
    </>
  );
}
