// The GolemMode/DreamPhase diagram, laid out from the machine's own declaration (/api/v1/machine):
// top-level states in a row, a compound state's children in a row inside it, each transition an
// arrow labelled with its trigger; each state's label is the server's (a phase's from the phase
// table). Nothing about the states is written here.
const W = 172; // a leaf state's width: "Hypnopompic Return" in 14 px bold, with room
const H = 48;
const GAP = 52;
const PAD = 18;

function layout(machine) {
  const kids = {};
  for (const s of machine.states) (kids[s.parent || ''] ||= []).push(s);
  const box = {};
  let x = PAD;
  const top = 70;
  for (const s of kids[''] || []) {
    const children = kids[s.name] || [];
    if (children.length) {
      let cx = x + PAD;
      for (const c of children) {
        box[c.name] = { x: cx, y: top + 34, w: W, h: H, label: c.label };
        cx += W + GAP;
      }
      box[s.name] = { x, y: top, w: cx - GAP + PAD - x, h: H + 34 + PAD, label: s.label, compound: true };
    } else {
      box[s.name] = { x, y: top + 34, w: W - 30, h: H, label: s.label };
    }
    x += box[s.name].w + GAP * 2;
  }
  return { box, width: x - GAP * 2 + PAD, height: top + 34 + H + PAD + 90 };
}

// On a phone the same declaration is laid out top to bottom.
function layoutColumn(machine) {
  const kids = {};
  for (const s of machine.states) (kids[s.parent || ''] ||= []).push(s);
  const box = {};
  const left = 96;
  const g = 30;
  let y = PAD;
  for (const s of kids[''] || []) {
    const children = kids[s.name] || [];
    if (children.length) {
      let cy = y + 34;
      for (const c of children) {
        box[c.name] = { x: left + PAD, y: cy, w: W, h: H - 6, label: c.label };
        cy += H - 6 + g;
      }
      box[s.name] = { x: left, y, w: W + 2 * PAD, h: cy - g + PAD - y, label: s.label, compound: true };
    } else {
      box[s.name] = { x: left + PAD, y, w: W, h: H - 6, label: s.label };
    }
    y += box[s.name].h + g * 1.6;
  }
  return { box, width: left * 2 + W + 2 * PAD, height: y - g * 1.6 + PAD, vertical: true };
}

function edgeColumn(a, b, i) {
  const sa = mid(a);
  const sb = mid(b);
  const down = sb.y > sa.y;
  if (down && b.y - (a.y + a.h) <= 60 && Math.abs(sa.x - sb.x) < 40) {
    const x = sa.x;
    return { d: `M${x},${a.y + a.h} L${x},${b.y - 2}`, lx: x + 8, ly: (a.y + a.h + b.y) / 2 + 4, anchor: 'start' };
  }
  // Longer moves bend: downward ones on the right, upward ones on the left.
  const lift = 30 + (i % 3) * 14;
  const xa = down ? a.x + a.w : a.x;
  const xb = down ? b.x + b.w : b.x;
  const xc = down ? Math.max(xa, xb) + lift : Math.min(xa, xb) - lift;
  const d = `M${xa},${sa.y} C${xc},${sa.y} ${xc},${sb.y} ${xb + (down ? 2 : -2)},${sb.y}`;
  return { d, lx: xc + (down ? -4 : 4), ly: (sa.y + sb.y) / 2, anchor: down ? 'end' : 'start', rotate: true };
}

const mid = (b) => ({ x: b.x + b.w / 2, y: b.y + b.h / 2 });

function edgePath(a, b, i) {
  const sa = mid(a);
  const sb = mid(b);
  const forward = sb.x > sa.x;
  const adjacent = forward && b.x - (a.x + a.w) <= GAP * 2 + 1 && Math.abs(sa.y - sb.y) < 40;
  if (adjacent) {
    const x1 = a.x + a.w;
    const x2 = b.x;
    const y = Math.max(a.y, b.y) + Math.min(a.h, b.h) / 2 + (a.h > 60 ? 17 : 0);
    return { d: `M${x1},${y} L${x2 - 2},${y}`, lx: (x1 + x2) / 2, ly: y - 7 };
  }
  // Longer moves bend: forward ones over the top, backward ones under the bottom.
  const above = forward;
  const ya = above ? a.y : a.y + a.h;
  const yb = above ? b.y : b.y + b.h;
  const lift = 34 + (i % 3) * 16;
  const yc = above ? Math.min(ya, yb) - lift : Math.max(ya, yb) + lift;
  const d = `M${sa.x},${ya} C${sa.x},${yc} ${sb.x},${yc} ${sb.x},${yb + (above ? -2 : 2)}`;
  return { d, lx: (sa.x + sb.x) / 2, ly: yc + (above ? 10 : 4) };
}

const narrow = () => typeof matchMedia === 'function' && matchMedia('(max-width: 640px)').matches;

export function Diagram({ machine, current, visited = [] }) {
  if (!machine) return null;
  const column = narrow();
  const { box, width, height } = column ? layoutColumn(machine) : layout(machine);
  const lit = new Set();
  for (let s = current; s; s = machine.states.find((x) => x.name === s)?.parent) lit.add(s);
  const parentOf = Object.fromEntries(machine.states.map((s) => [s.name, s.parent]));
  const where = {};
  for (const t of machine.transitions) {
    if (t.internal && !machine.transitions.some((u) => u.internal && u.trigger === t.trigger && u.source === parentOf[t.source])) {
      (where[t.trigger] ||= []).push(t.source);
    }
  }
  const internal = {};
  for (const [trigger, states] of Object.entries(where)) (internal[states.join(', ')] ||= []).push(trigger);
  const moves = machine.transitions.filter((t) => !t.internal && box[t.source] && box[t.dest]);
  return (
    <figure class="diagram">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="diagram-title" data-current={current || ''}>
        <title id="diagram-title">{`GolemMode/DreamPhase machine; current state ${current || 'unknown'}`}</title>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
          </marker>
        </defs>
        {machine.states.map((s) => {
          const b = box[s.name];
          if (!b) return null;
          const on = lit.has(s.name);
          const seen = visited.includes(s.name);
          return (
            <g key={s.name} class={`state${b.compound ? ' compound' : ''}${on ? ' lit' : ''}${seen ? ' seen' : ''}`} data-state={s.name} data-lit={on ? 'true' : 'false'}>
              <rect x={b.x} y={b.y} width={b.w} height={b.h} rx={b.compound ? 14 : 10} />
              <text x={b.compound ? b.x + 12 : b.x + b.w / 2} y={b.compound ? b.y + 21 : b.y + b.h / 2 + 5} text-anchor={b.compound ? 'start' : 'middle'}>
                {b.label}
              </text>
            </g>
          );
        })}
        {moves.map((t, i) => {
          const p = (column ? edgeColumn : edgePath)(box[t.source], box[t.dest], i);
          return (
            <g key={`${t.source}-${t.trigger}`} class="edge">
              <path d={p.d} marker-end="url(#arrow)" />
              <text x={p.lx} y={p.ly} text-anchor={p.anchor || 'middle'}>{t.trigger}</text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        Drawn from the machine's declaration (<code>/api/v1/machine</code>). Legal without a move:{' '}
        {Object.entries(internal).map(([s, ts]) => `${ts.join(', ')} in ${s}`).join('; ')} (and the states inside).
      </figcaption>
    </figure>
  );
}
