import { useState } from 'preact/hooks';
import { api } from './api.js';
import { useApi, usePages, More, Err, Loading, Badge, Section, Fields, pct, fmtTime } from './ui.jsx';

const enc = encodeURIComponent;
const STATUSES = ['', 'proposed', 'reinforced', 'promoted', 'rejected', 'stale', 'refuted', 'expired', 'displaced', 'revoked'];

export function Staging({ golem }) {
  const [status, setStatus] = useState('');
  const pages = usePages(`/golems/${enc(golem)}/staging?limit=50${status ? `&status=${status}` : ''}`);
  return (
    <>
      <h1>Staging of <span class="mono">{golem}</span></h1>
      <nav class="subnav" aria-label="Staging"><a href={`#/golems/${enc(golem)}`}>← golem {golem}</a></nav>
      <Section title="Staged entries" id="staging-title" actions={
        <label class="inline">Status{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            {STATUSES.map((s) => <option key={s} value={s}>{s || 'any'}</option>)}
          </select>
        </label>}>
        <Err error={pages.error} />
        {pages.loaded && !pages.items.length ? <p class="muted">Nothing staged{status ? ` with status ${status}` : ''}.</p> : null}
        <ul class="entries">
          {pages.items.map((d) => (
            <li key={d.entry_id} data-dream={d.entry_id}>
              <div class="entry-head">
                <a class="mono" href={`#/dreams/${enc(d.entry_id)}`}>{d.entry_id}</a>
                <Badge value={d.kind} /> <Badge value={d.status} />
                <span class="conf" aria-label={`confidence ${pct(d.confidence)}`}><span class="bar small"><span style={{ width: pct(d.confidence) }} /></span>{pct(d.confidence)}</span>
              </div>
              <p>{d.text}</p>
            </li>
          ))}
        </ul>
        <More pages={pages} />
      </Section>
    </>
  );
}

// Confidence over time: one point per step, each labelled with the outcome that moved it.
function ConfidenceChart({ start, steps }) {
  const pts = [{ y: start, label: 'staged', verdict: 'staged' },
    ...steps.filter((s) => s.type === 'ConfidenceChanged').map((s) => ({
      y: s.payload.after_pct, verdict: s.payload.verdict, delta: `${s.payload.after_pct >= s.payload.before_pct ? '+' : '−'}${(Math.abs(s.payload.after_pct - s.payload.before_pct) / 100).toFixed(2)}`, at: s.payload.outcome_position,
      label: `${s.payload.verdict} ${s.payload.after_pct - s.payload.before_pct > 0 ? '+' : ''}${((s.payload.after_pct - s.payload.before_pct) / 100).toFixed(2)} by outcome @${s.payload.outcome_position}`,
    }))];
  const W = 560; const H = 200; const L = 40; const R = 40; const T = 22; const B = 28;
  const x = (i) => L + (pts.length === 1 ? 0 : (i / (pts.length - 1)) * (W - L - R));
  const y = (v) => T + (1 - v / 100) * (H - T - B);
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="conf-title">
      <title id="conf-title">{`Confidence over time: ${pts.map((p) => `${p.y}%`).join(', ')}`}</title>
      {[0, 25, 50, 75, 100].map((v) => (
        <g key={v} class="grid"><line x1={L} x2={W - R} y1={y(v)} y2={y(v)} /><text x={L - 6} y={y(v) + 4} text-anchor="end">{v}%</text></g>
      ))}
      <polyline points={pts.map((p, i) => `${x(i)},${y(p.y)}`).join(' ')} class="line" />
      {pts.map((p, i) => (
        <g key={i}>
          <circle cx={x(i)} cy={y(p.y)} r="5" class={`pt ${p.verdict}`}><title>{`${p.y}% — ${p.label}`}</title></circle>
          {p.delta ? <text x={x(i)} y={y(p.y) - 10} text-anchor="middle" class={`delta ${p.verdict}`}>{`${p.delta} @${p.at}`}</text> : null}
        </g>
      ))}
      <text x={L} y={H - 8} class="axis">staged</text>
      <text x={W - R} y={H - 8} class="axis" text-anchor="end">{pts.length - 1} outcome step(s)</text>
    </svg>
  );
}

// The server says which decisions the dream's status allows now (`decisions`): a promoted dream
// offers only Revoke, a settled one none.
const DECISIONS = {
  promote_candidate: ['Promote', 'primary'], reinforce: ['Reinforce', ''], stale: ['Mark stale', ''],
  reject: ['Reject', 'danger'], revoke: ['Revoke', 'danger'],
};

function Review({ dream, onDone }) {
  const [why, setWhy] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const act = async (decision) => {
    setBusy(true); setError(null);
    try {
      onDone(await api(`/dreams/${enc(dream.entry_id)}/feedback`, { method: 'POST', body: { decision, feedback: why } }));
      setWhy('');
    } catch (e) { setError(e); }
    setBusy(false);
  };
  const allowed = dream.decisions || [];
  if (!allowed.length) return <p class="muted" data-testid="settled">No review decision applies to a {dream.status} dream.</p>;
  const revoking = allowed.includes('revoke');
  return (
    <form class="review" onSubmit={(e) => e.preventDefault()} aria-labelledby="review-title">
      <h3 id="review-title">Review</h3>
      {revoking ? <p class="muted small">Promoted: it is in MEMORY.md. Revoking drops its line from the next version; the revocation, with your reason, stays in its history.</p> : null}
      <label for="why">Reason (recorded with the decision)</label>
      <textarea id="why" rows="2" value={why} onInput={(e) => setWhy(e.currentTarget.value)} />
      <div class="actions">
        {allowed.filter((d) => DECISIONS[d]).map((d) => (
          <button key={d} type="button" class={DECISIONS[d][1]} disabled={busy} data-decision={d} onClick={() => act(d)}>{DECISIONS[d][0]}</button>
        ))}
      </div>
      <Err error={error} />
    </form>
  );
}

export function Dream({ id, me }) {
  const dream = useApi(`/dreams/${enc(id)}`);
  const history = useApi(`/dreams/${enc(id)}/history`);
  const d = dream.data;
  const steps = history.data?.steps || [];
  const staged = steps.find((s) => s.type === 'EntryStaged');
  const start = staged?.payload?.confidence_pct ?? steps.find((s) => s.type === 'ConfidenceChanged')?.payload.before_pct ?? (d ? Math.round(d.confidence * 100) : 0);
  return (
    <>
      <h1>Dream <span class="mono">{id}</span></h1>
      {d ? <nav class="subnav" aria-label="Dream"><a href={`#/golems/${enc(d.golem_id)}/staging`}>← staging of {d.golem_id}</a></nav> : null}
      <Err error={dream.error} />
      {!d ? <Loading /> : (
        <>
          <Section title="Hypothesis" id="hyp-title">
            <p class="status-line">Status <Badge value={d.status} /> <span data-testid="status" class="sr-only">{d.status}</span> · {d.kind} · confidence {pct(d.confidence)} · {d.confirmations} confirmation(s), {d.contradictions} contradiction(s)</p>
            <blockquote class="hypothesis">{d.text}</blockquote>
            <p class="muted small">A dream is a hypothesis generated while idle, never an instruction or a fact.</p>
            {me?.write ? <Review dream={d} onDone={(row) => { dream.set(row); history.reload(); }} /> : <p class="muted" data-testid="read-only">This token can read only: no review actions.</p>}
          </Section>
          <Section title="Confidence over time" id="conf-section">
            <ConfidenceChart start={start} steps={steps} />
            <div class="table-wrap">
              <table>
                <thead><tr><th scope="col" class="num">Position</th><th scope="col">Event</th><th scope="col">Change</th><th scope="col">Caused by</th></tr></thead>
                <tbody>
                  {steps.map((s) => (
                    <tr key={s.position}>
                      <td class="num mono">{s.position}</td>
                      <td>{s.type}</td>
                      <td>{s.type === 'ConfidenceChanged' ? `${s.payload.before_pct}% → ${s.payload.after_pct}%` : s.payload.decision || s.payload.by || ''}</td>
                      <td>{s.outcome ? <>outcome @{s.outcome.position}: <strong>{s.outcome.payload.verdict}</strong> {s.outcome.payload.summary} <span class="muted">(tick {s.outcome.payload.tick}, {fmtTime(s.outcome.time)})</span></> : (s.payload.reason || s.payload.why || '')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Section>
          <div class="grid2">
            <Section title="Lineage" id="lineage-title">
              <Fields value={d.lineage} />
              <p><a href={`#/golems/${enc(d.golem_id)}/cycles/${enc(d.lineage.cycle_id)}`}>Open the cycle that dreamt it</a></p>
            </Section>
            <Section title="Validation criterion" id="criterion-title"><Fields value={d.criterion} /></Section>
          </div>
          <Section title="Reviews" id="reviews-title">
            {d.reviews.length ? <ul class="plain">{d.reviews.map((r, i) => <li key={i}><strong>{r.decision}</strong> by {r.who}{r.why ? `: ${r.why}` : ''}{r.time ? <span class="muted"> ({fmtTime(r.time)})</span> : null}</li>)}</ul> : <p class="muted">No reviews yet.</p>}
          </Section>
        </>
      )}
    </>
  );
}
