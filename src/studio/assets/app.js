// The studio page: plain ES module, no build step, no library. Every text from the server goes into the
// DOM as textContent; the graphs are SVG documents parsed as XML (the page's CSP runs no inline script).

const $ = (id) => document.getElementById(id);
const state = {
  hatcheries: new Map(),
  problems: [],
  messages: [],
  selected: null,
  run: null,
  runs: [],
  pick: null,
};

/** Creates an element with a class and a text. */
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function api(path, body) {
  const init =
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch(path, init);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

const ms = (n) => (n === undefined ? '' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`);
const tokens = (u) => (u ? `${u.inputTokens + u.outputTokens} tok` : '');
const cost = (u) => (u && u.costUsd !== undefined ? `$${u.costUsd.toFixed(4)}` : '');
const stats = (e) => [ms(e.ms), tokens(e.usage), cost(e.usage)].filter(Boolean).join(' · ');

// ---- hatcheries ----

function renderList() {
  const ul = $('hatcheries');
  ul.replaceChildren();
  for (const h of [...state.hatcheries.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const li = el('li', h.name === state.selected ? 'selected' : '', h.name);
    li.dataset.name = h.name;
    const bad = state.problems.find((p) => p.file === h.file);
    li.append(
      el('span', 'sub', bad ? `${bad.problems.length} problem(s): serving the last good version` : h.desc),
    );
    li.onclick = () => selectHatchery(h.name);
    ul.append(li);
  }
  const box = $('folder-problems');
  box.replaceChildren();
  const served = new Set([...state.hatcheries.values()].map((h) => h.file));
  for (const p of state.problems.filter((p) => !served.has(p.file))) box.append(problemBox(p));
  for (const m of state.messages) box.append(el('div', 'problem', m));
}

function problemBox(p) {
  const div = el('div', 'problem');
  div.append(el('strong', '', p.file));
  for (const q of p.problems) {
    const at = q.line ? `line ${q.line}${q.column ? `:${q.column}` : ''} ` : '';
    div.append(el('div', '', `${at}${q.path ? `${q.path}: ` : ''}${q.message}${q.fix ? ` (${q.fix})` : ''}`));
  }
  return div;
}

function selectHatchery(name) {
  state.selected = name;
  renderList();
  renderHatchery();
  if (!state.run || state.run.hatchery !== name) $('run').hidden = true;
}

function renderHatchery() {
  const h = state.hatcheries.get(state.selected);
  $('hatchery').hidden = !h;
  $('empty').hidden = Boolean(h || state.run);
  if (!h) return;
  $('h-name').textContent = h.name;
  $('h-desc').textContent = h.desc;
  $('h-file').textContent = h.file;
  const probs = $('h-problems');
  probs.replaceChildren();
  const bad = state.problems.find((p) => p.file === h.file);
  if (bad) probs.append(problemBox(bad));
  const doc = new DOMParser().parseFromString(h.svg, 'image/svg+xml');
  const graph = $('graph');
  graph.replaceChildren();
  if (doc.documentElement.nodeName === 'svg') graph.append(document.importNode(doc.documentElement, true));
  const vars = $('run-vars');
  vars.replaceChildren();
  for (const [name, prompt] of Object.entries(h.inputs)) {
    const label = el('label', '', `${name}: ${prompt}`);
    const input = el('input');
    input.dataset.var = name;
    label.append(input);
    vars.append(label);
  }
  $('run-form-error').textContent = '';
  paintGraph();
}

// ---- the run drawn on the graph ----

/** Node name -> {status, ms, usage} of the top-level run's node executions (nested runs left out). */
function nodeStates(root) {
  const out = new Map();
  const visit = (e) => {
    for (const c of e.children) {
      if (c.kind === 'node') {
        const s = out.get(c.label) ?? {
          status: c.status,
          ms: 0,
          usage: { inputTokens: 0, outputTokens: 0 },
          runs: 0,
        };
        s.status = s.status === 'running' || c.status === 'running' ? 'running' : c.status;
        s.ms += c.ms ?? 0;
        s.runs += 1;
        if (c.usage) {
          s.usage.inputTokens += c.usage.inputTokens;
          s.usage.outputTokens += c.usage.outputTokens;
          if (c.usage.costUsd !== undefined) s.usage.costUsd = (s.usage.costUsd ?? 0) + c.usage.costUsd;
        }
        out.set(c.label, s);
      }
      if (c.kind !== 'run') visit(c);
    }
  };
  visit(root);
  return out;
}

function paintGraph() {
  const h = state.hatcheries.get(state.selected);
  const svg = $('graph').querySelector('svg');
  if (!h || !svg) return;
  for (const t of svg.querySelectorAll('text.stat')) t.remove();
  for (const g of svg.querySelectorAll('g.node'))
    g.classList.remove('st-running', 'st-done', 'st-failed', 'st-waiting');
  const run = state.run;
  if (!run || run.hatchery !== h.name) return;
  for (const [name, s] of nodeStates(run.tree)) {
    const id = h.nodeIds[name];
    const g = id && svg.querySelector(`g.node[data-id="${CSS.escape(id)}"]`);
    if (!g) continue;
    g.classList.add(`st-${s.status}`);
    g.dataset.state = s.status;
    const box = g.getBBox();
    const t = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    t.setAttribute('class', 'stat');
    t.setAttribute('x', String(box.x + box.width / 2));
    t.setAttribute('y', String(box.y + box.height + 11));
    t.setAttribute('text-anchor', 'middle');
    t.textContent = [
      s.runs > 1 ? `×${s.runs}` : '',
      s.status === 'running' ? 'running' : ms(s.ms),
      s.usage.inputTokens ? tokens(s.usage) : '',
      cost(s.usage),
    ]
      .filter(Boolean)
      .join(' · ');
    svg.append(t);
  }
}

// ---- runs ----

function renderRuns() {
  const ul = $('runs');
  ul.replaceChildren();
  for (const r of state.runs) {
    const li = el('li', state.run && state.run.id === r.id ? 'selected' : '', `${r.hatchery} · ${r.status}`);
    li.dataset.run = r.id;
    li.append(el('span', 'sub', `${new Date(r.startedAt).toLocaleString()} · ${r.id.slice(0, 8)}`));
    li.onclick = () => openRun(r.id);
    ul.append(li);
  }
}

async function loadRuns() {
  state.runs = (await api('/api/runs')).runs;
  renderRuns();
}

async function openRun(id) {
  const d = await api(`/api/runs/${encodeURIComponent(id)}`);
  state.run = {
    id,
    hatchery: d.hatchery,
    status: d.status,
    tree: d.tree,
    prompts: d.prompts,
    summary: d.summary,
  };
  if (state.hatcheries.has(d.hatchery) && state.selected !== d.hatchery) {
    state.selected = d.hatchery;
    renderList();
    renderHatchery();
  }
  renderRun();
  renderRuns();
}

function renderRun() {
  const r = state.run;
  $('run').hidden = !r;
  $('empty').hidden = Boolean(r || state.selected);
  if (!r) return;
  $('r-title').textContent = `${r.hatchery} · run ${r.id.slice(0, 8)}`;
  const badge = $('r-status');
  badge.textContent = r.status;
  badge.className = `badge ${r.status}`;
  const s = r.summary;
  const root = r.tree;
  $('r-totals').textContent = [
    stats({ ms: root.ms, usage: s?.usage ?? root.usage }),
    s?.attempts > 1 ? `${s.attempts} attempts` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  // A run waiting for an answer has not failed: its question stands by the Answer box instead.
  $('r-error').textContent = r.status === 'input_required' ? '' : (s?.error ?? root.error ?? '');
  $('r-cancel').hidden = !(
    r.status === 'running' ||
    r.status === 'input_required' ||
    r.status === 'interrupted'
  );
  $('r-resume').hidden = !(r.status === 'failed' || r.status === 'interrupted' || r.status === 'cancelled');
  const q = s?.question;
  $('r-answer').hidden = !(r.status === 'input_required' && q);
  if (q)
    $('r-question').textContent =
      `${q.node} asks: ${q.question}${q.choices ? ` (${q.choices.join(' / ')})` : ''}`;
  const output = s?.output ?? root.output;
  $('r-output-wrap').hidden = output === undefined;
  $('r-output').textContent = output ?? '';
  renderTimeline();
  paintGraph();
}

/** The tree as rows: a waterfall of bars by start and duration, children under their parents. */
function renderTimeline() {
  const r = state.run;
  const rows = [];
  const walk = (e, depth) => {
    rows.push([e, depth]);
    for (const c of e.children) walk(c, depth + 1);
  };
  walk(r.tree, 0);
  const now = Date.now();
  const t0 = r.tree.start;
  const end = Math.max(...rows.map(([e]) => (e.ms === undefined ? now : e.start + e.ms)), t0 + 1);
  const span = end - t0;
  const box = $('timeline');
  box.replaceChildren();
  for (const [e, depth] of rows) {
    const row = el('div', `row${state.pick === e.id ? ' selected' : ''}`);
    row.dataset.entry = e.id;
    const item = e.item === undefined ? '' : ` #${e.item + 1}`;
    const label = el('span', 'label', `${e.kind === 'node' ? '' : `${e.kind}: `}${e.label}${item}`);
    label.style.paddingLeft = `${depth * 14}px`;
    const track = el('span', 'track');
    const bar = el('span', `bar k-${e.kind} st-${e.status}`);
    const dur = e.ms ?? now - e.start;
    bar.style.left = `${((e.start - t0) / span) * 100}%`;
    bar.style.width = `${Math.max((dur / span) * 100, 0.3)}%`;
    track.append(bar);
    row.append(label, track, el('span', 'ms', e.status === 'running' ? 'running' : ms(e.ms)));
    row.onclick = () => {
      state.pick = e.id;
      renderTimeline();
      showDetail(e);
    };
    box.append(row);
  }
  if (state.pick) {
    const picked = rows.find(([e]) => e.id === state.pick);
    if (picked) showDetail(picked[0]);
  }
}

function section(title, text) {
  const div = el('div');
  div.append(el('h3', '', title), el('pre', '', text));
  return div;
}

/** What one entry did: its prompt (model calls), output, tool arguments, error. */
function showDetail(e) {
  const box = $('detail');
  box.hidden = false;
  box.replaceChildren(
    el('strong', '', `${e.kind} ${e.label}`),
    el('span', 'muted', ` ${e.status} ${stats(e)}`),
  );
  const prompts = state.run.prompts;
  const models = e.kind === 'model' ? [e] : e.children.filter((c) => c.kind === 'model');
  for (const m of models) {
    const p = prompts[m.id];
    if (p) box.append(section(`prompt (${m.label})`, promptText(p)));
  }
  if (models.length > 0 && !models.some((m) => prompts[m.id]))
    box.append(
      el(
        'p',
        'muted small',
        'No prompt kept for this call (journals written before prompts were kept have only a hash of it).',
      ),
    );
  if (e.args) box.append(section('arguments', JSON.stringify(e.args, null, 2)));
  for (const t of e.children.filter((c) => c.kind === 'tool'))
    box.append(
      section(
        `tool call ${t.label}`,
        `${JSON.stringify(t.args ?? {}, null, 2)}\n→ ${t.output ?? t.error ?? ''}`,
      ),
    );
  if (e.output !== undefined) box.append(section('output', e.output));
  if (e.error) box.append(section(`error${e.code ? ` (${e.code})` : ''}`, e.error));
}

function promptText(p) {
  const parts = [];
  if (p.system)
    parts.push(`[system]\n${typeof p.system === 'string' ? p.system : JSON.stringify(p.system, null, 2)}`);
  for (const m of p.messages ?? [])
    parts.push(
      `[${m.role}]\n${typeof m.content === 'string' ? m.content : JSON.stringify(m.content, null, 2)}`,
    );
  if (p.tools) parts.push(`[tools] ${p.tools.map((t) => t.name).join(', ')}`);
  return parts.join('\n\n');
}

let refreshTimer;
/** Re-reads the shown run at most every 250 ms while its events stream in. */
function refreshRun() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = undefined;
    if (state.run) await openRun(state.run.id).catch(() => undefined);
  }, 250);
}

// ---- wiring ----

$('run-form').onsubmit = async (ev) => {
  ev.preventDefault();
  const vars = {};
  for (const i of $('run-vars').querySelectorAll('input')) vars[i.dataset.var] = i.value;
  try {
    const { runId } = await api('/api/runs', { hatchery: state.selected, input: $('run-input').value, vars });
    state.pick = null;
    $('detail').hidden = true;
    await openRun(runId);
    await loadRuns();
  } catch (err) {
    $('run-form-error').textContent = err.message;
  }
};
$('r-cancel').onclick = () =>
  api(`/api/runs/${state.run.id}/cancel`, {}).catch((err) => ($('r-error').textContent = err.message));
$('r-resume').onclick = () =>
  api(`/api/runs/${state.run.id}/resume`, {}).then(
    refreshRun,
    (err) => ($('r-error').textContent = err.message),
  );
$('r-answer').onsubmit = (ev) => {
  ev.preventDefault();
  api(`/api/runs/${state.run.id}/resume`, { answer: $('r-answer-text').value }).then(
    refreshRun,
    (err) => ($('r-error').textContent = err.message),
  );
};

async function start() {
  const data = await api('/api/hatcheries');
  $('dir').textContent = data.dir;
  $('no-journal').hidden = data.journal;
  for (const h of data.hatcheries) state.hatcheries.set(h.name, h);
  state.problems = data.problems;
  state.messages = data.messages;
  renderList();
  await loadRuns();
  const events = new EventSource('/api/events');
  events.onopen = () => ($('conn').textContent = 'live');
  events.onerror = () => ($('conn').textContent = 'reconnecting…');
  events.addEventListener('folder', (m) => {
    const c = JSON.parse(m.data);
    for (const name of c.removed) state.hatcheries.delete(name);
    for (const h of c.changed) state.hatcheries.set(h.name, h);
    state.problems = c.problems;
    state.messages = c.messages;
    renderList();
    renderHatchery();
  });
  events.addEventListener('run_event', (m) => {
    if (state.run && JSON.parse(m.data).runId === state.run.id) refreshRun();
  });
  events.addEventListener('run_status', (m) => {
    if (state.run && JSON.parse(m.data).runId === state.run.id) refreshRun();
    loadRuns();
  });
}

start().catch((err) => {
  $('empty').textContent = `The studio did not answer: ${err.message}`;
});
