import { useEffect, useRef } from 'preact/hooks';
import { api, head, subscribe, phaseOfStream, MODE } from './api.js';
import { useApi, usePages, More, Err, Badge, Section } from './ui.jsx';

// Every golem the token sees, with its mode and phase, kept live by the event stream.
export function Golems() {
  const pages = usePages('/golems?limit=100');
  // The phase table: a golem that falls asleep is in its first phase; the stream names phases its own way.
  const machine = useApi('/machine');
  const declared = useRef(null);
  declared.current = machine.data;
  // A golem back in Waking: its row is read again from the server (cycle, episodes, cycles counted),
  // until the server's projections have caught up with the stream and say Waking too (every 0.5 s,
  // 20 times at most); until then the stream's mode stands and the ended cycle's id is dropped.
  const refresh = (golem, left) => {
    api(`/golems/${encodeURIComponent(golem)}`).then((row) => {
      if (row.mode !== 'Waking') {
        if (left > 0) setTimeout(() => refresh(golem, left - 1), 500);
        return;
      }
      pages.setItems((rows) => rows.map((g) => (g.golem_id === golem ? { ...g, ...row } : g)));
    }, () => {});
  };
  useEffect(() => {
    let stop = () => {};
    let gone = false;
    head().then((after) => {
      if (gone) return;
      stop = subscribe({ after }, (name, data) => {
        if (name === 'mode_change' || name === 'dream_progress') {
          let known = true;
          pages.setItems((rows) => {
            known = rows.some((g) => g.golem_id === data.golem_id);
            return rows.map((g) => (g.golem_id !== data.golem_id ? g : name === 'mode_change'
              ? { ...g, mode: MODE[data.mode] || data.mode, phase: data.mode === 'dreaming' ? declared.current?.phases[0]?.phase ?? null : null, ...(data.mode === 'dreaming' ? {} : { cycle_id: null }) }
              : { ...g, mode: 'Dreaming', phase: phaseOfStream(declared.current, data.phase), cycle_id: data.cycle_id }));
          });
          if (!known) pages.reload();
          else if (name === 'mode_change' && data.mode === 'waking') refresh(data.golem_id, 20);
        }
      });
    });
    return () => { gone = true; stop(); };
  }, []);
  return (
    <Section title="Golems" id="golems-title">
      <Err error={pages.error} />
      {pages.loaded && !pages.items.length ? <p class="muted">No golems yet. Create one with <code>oneiros golem create</code> or <code>POST /api/v1/golems</code>.</p> : null}
      <div class="table-wrap">
        <table class="golems">
          <caption class="sr-only">Golems, live</caption>
          <thead><tr><th scope="col">Golem</th><th scope="col">Mode</th><th scope="col">Phase</th><th scope="col">Cycle</th><th scope="col" class="num">Episodes</th><th scope="col" class="num">Cycles</th></tr></thead>
          <tbody>
            {pages.items.map((g) => (
              <tr key={g.golem_id} data-golem={g.golem_id}>
                <th scope="row"><a href={`#/golems/${encodeURIComponent(g.golem_id)}`}>{g.golem_id}</a></th>
                <td data-field="mode"><Badge value={g.mode} /></td>
                <td data-field="phase">{g.phase ? <Badge value={g.phase} kind="phase" /> : <span class="muted">—</span>}</td>
                <td class="mono">{g.cycle_id || '—'}</td>
                <td class="num">{g.episodes ?? '—'}</td>
                <td class="num">{g.cycles_completed ?? '—'}{g.cycles_interrupted ? ` (+${g.cycles_interrupted} interrupted)` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <More pages={pages} />
    </Section>
  );
}
