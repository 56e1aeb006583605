import { useApi, usePages, More, Err, Loading, Badge, Section, fmtTime, fmtMs, fmtUsd } from './ui.jsx';

const enc = encodeURIComponent;

// Phase timeline from the cycle's DreamPhase events (start and duration), the journal's per-phase
// tokens, and the trace's phase spans (which worker process ran each).
function Timeline({ entry, events, spans }) {
  const starts = events.filter((e) => e.type === 'DreamPhase');
  const end = events.length ? Date.parse(events[events.length - 1].time) : null;
  const byPhase = Object.fromEntries((entry.phases || []).map((p) => [p.phase, p]));
  const rows = starts.map((e, i) => {
    const t0 = Date.parse(e.time);
    const t1 = i + 1 < starts.length ? Date.parse(starts[i + 1].time) : (entry.ended_at ? Date.parse(entry.ended_at) : end);
    const phase = e.payload.phase;
    const span = spans.find((s) => (s.attributes?.['oneiros.phase'] === phase || s.name.endsWith(phase)));
    const worker = span ? (span.attributes?.['oneiros.worker'] || `pid ${span.pid}`) : '—';
    return { phase, t0, ms: t1 != null ? t1 - t0 : 0, tokens: byPhase[phase]?.tokens ?? 0, budget: byPhase[phase]?.budget_tokens ?? e.payload.budget_tokens, calls: byPhase[phase]?.calls ?? 0, worker };
  });
  const total = rows.reduce((a, r) => a + r.ms, 0) || 1;
  const first = rows.length ? rows[0].t0 : 0;
  const totalTokens = rows.reduce((a, r) => a + r.tokens, 0) || 1;
  return (
    <div class="table-wrap">
      <table class="timeline" data-testid="timeline">
        <thead><tr><th scope="col">Phase</th><th scope="col">Duration</th><th scope="col" class="num">Tokens / budget</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Cost share</th><th scope="col">Worker</th></tr></thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.phase} data-phase={r.phase}>
              <th scope="row"><Badge value={r.phase} kind="phase" /></th>
              <td><div class="tl" aria-hidden="true"><span style={{ marginLeft: `${((r.t0 - first) / total) * 100}%`, width: `${Math.max(1, (r.ms / total) * 100)}%` }} /></div>{fmtMs(r.ms)}</td>
              <td class="num">{r.tokens.toLocaleString()} / {r.budget.toLocaleString()}</td>
              <td class="num">{r.calls}</td>
              <td class="num">{fmtUsd(entry.cost_usd * (r.tokens / totalTokens))}</td>
              <td class="mono">{r.worker}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Waterfall({ spans }) {
  if (!spans.length) return <p class="muted">No spans for this cycle (tracing off, or the span file is elsewhere: <code>$ONEIROS_SPANS</code>).</p>;
  const sorted = [...spans].sort((a, b) => a.start_ns - b.start_ns);
  const t0 = sorted[0].start_ns;
  const t1 = Math.max(...sorted.map((s) => s.end_ns));
  const span = t1 - t0 || 1;
  const depth = {};
  for (const s of sorted) depth[s.span_id] = s.parent_id && depth[s.parent_id] != null ? depth[s.parent_id] + 1 : 0;
  return (
    <ol class="waterfall" data-testid="waterfall" aria-label="Trace spans by start time">
      {sorted.map((s) => {
        const left = ((s.start_ns - t0) / span) * 100;
        const width = Math.max(0.4, ((s.end_ns - s.start_ns) / span) * 100);
        const ms = (s.end_ns - s.start_ns) / 1e6;
        return (
          <li key={s.span_id} class={s.status === 'ERROR' ? 'err' : ''}>
            <span class="wf-name" style={{ paddingLeft: `${depth[s.span_id] * 0.8}rem` }} title={JSON.stringify(s.attributes)}>{s.name}</span>
            <span class="wf-track"><span class="wf-bar" style={{ left: `${left}%`, width: `${width}%` }} /></span>
            <span class="wf-ms">{fmtMs(ms)} · pid {s.pid}</span>
          </li>
        );
      })}
    </ol>
  );
}

function summary(e) {
  const p = e.payload;
  return p.pattern || p.text || p.hypothesis || p.insight || p.summary || p.reason || p.phase || p.thread || '';
}

export function Cycle({ golem, id }) {
  const base = `/golems/${enc(golem)}/cycles/${enc(id)}`;
  const entry = useApi(base);
  const report = useApi(`${base}/report`);
  const trace = useApi(`${base}/trace`);
  const events = usePages(`${base}/events?limit=200`);
  const e = entry.data;
  return (
    <>
      <h1>Cycle <span class="mono">{id}</span></h1>
      <nav class="subnav" aria-label="Cycle"><a href={`#/golems/${enc(golem)}`}>← golem {golem}</a></nav>
      <Err error={entry.error} />
      {!e ? <Loading /> : (
        <>
          <Section title="Summary" id="cycle-summary">
            <p>
              <Badge value={e.status} /> · trigger <strong>{e.trigger}</strong> · {fmtTime(e.started_at)} → {fmtTime(e.ended_at)}
              {e.interrupted_by ? <> · interrupted by {e.interrupted_by} {e.interrupted_reason}</> : null}
            </p>
            <p class="muted">{(e.tokens_in + e.tokens_out).toLocaleString()} tokens ({e.tokens_in} in, {e.tokens_out} out) · {fmtUsd(e.cost_usd)} · quality {e.quality_pct}% · staged {e.staged}, promoted {e.promoted}, refuted {e.refuted}</p>
            {e.quality_basis ? <p class="muted small" data-testid="quality-basis">quality: {e.quality_basis}</p> : null}
          </Section>
          <Section title="Timeline" id="timeline-title"><Timeline entry={e} events={events.items} spans={trace.data || []} /></Section>
          <Section title="Journal entry" id="journal-title">
            {e.thread ? <blockquote class="thread"><strong>Thread:</strong> {e.thread}</blockquote> : null}
            {e.fragments.length ? <><h3>Fragments</h3><ul class="plain">{e.fragments.map((f, i) => <li key={i}>{f}</li>)}</ul></> : null}
            <div class="journal-lists">
              {[['Patterns', e.patterns], ['Hypotheses', e.hypotheses], ['Counterfactuals', e.counterfactuals], ['Insights', e.insights]].map(([t, xs]) =>
                xs.length ? <div key={t}><h3>{t}</h3><ul class="plain">{xs.map((x, i) => <li key={i}>{x}</li>)}</ul></div> : null)}
            </div>
            {report.data?.wake_up ? <details><summary>Wake-up summary</summary><pre class="wrap">{JSON.stringify(report.data.wake_up, null, 2)}</pre></details> : null}
          </Section>
          <Section title="What it staged" id="staged-title">
            {report.data ? (report.data.staged.length ? (
              <ul class="plain staged">
                {report.data.staged.map((s) => (
                  <li key={s.entry_id}><a class="mono" href={`#/dreams/${enc(s.entry_id)}`}>{s.entry_id}</a> <Badge value={s.kind} /> {s.text}</li>
                ))}
              </ul>
            ) : <p class="muted">Nothing staged.</p>) : <Loading />}
          </Section>
          <Section title="Trace" id="trace-title"><Err error={trace.error} />{trace.data ? <Waterfall spans={trace.data} /> : null}</Section>
          <Section title="Events" id="events-title">
            <Err error={events.error} />
            <div class="table-wrap scroll" tabIndex={0} aria-label="Events of the cycle, scrollable">
              <table class="events">
                <thead><tr><th scope="col" class="num">Position</th><th scope="col">Time</th><th scope="col">Type</th><th scope="col">What</th></tr></thead>
                <tbody>
                  {events.items.map((ev) => (
                    <tr key={ev.position}>
                      <td class="num mono">{ev.position}</td>
                      <td class="mono">{ev.time.slice(11, 23)}</td>
                      <td>{ev.type}</td>
                      <td class="what">{String(summary(ev)).slice(0, 240)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <More pages={events} />
          </Section>
        </>
      )}
    </>
  );
}
