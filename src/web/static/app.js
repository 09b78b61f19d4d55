// awtui web: the page. Everything an agent wrote is put in the document
// with textContent (never innerHTML): agent text is hostile input.
'use strict';

const S = {
  csrf: '', user: 'user', overview: null, current: null, state: null,
  tab: 'channel', known: new Set(), primed: false, refetch: null, diffAgent: null,
  whole: new Map(),  // 'instance:id' -> a shortened message read whole ("show all")
  liveAgent: null,   // whose live view is open
  dirty: new Set(),  // agents whose card (and live view) wait to be drawn again
  drawing: false,    // a redraw is scheduled for the next frame
};

// As many tool calls and as much text as the server keeps of a turn
// (report::shown): a flood from an agent stays bounded in the page.
const CALLS_KEPT = 40;
const TEXT_KEPT = 16 * 1024;

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

function toast(text, bad) {
  const t = $('toast');
  t.textContent = text;
  t.className = 'show' + (bad ? ' bad' : '');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.className = ''; }, 4000);
}

function when(at) {
  const d = new Date(at);
  if (isNaN(d)) return '';
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'})
               : d.toLocaleString([], {month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit'});
}

async function api(path) {
  const r = await fetch(path, {headers: awtuiAuth.headers(), credentials: 'omit', cache: 'no-store'});
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

async function act(instance, action) {
  const r = await fetch('/api/instances/' + encodeURIComponent(instance) + '/action', {
    method: 'POST', credentials: 'omit',
    headers: awtuiAuth.headers({'Content-Type': 'application/json', 'X-Awtui-Csrf': S.csrf}),
    body: JSON.stringify(action),
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) { toast(body.error || r.statusText, true); return false; }
  if (body.said) toast(body.said);
  return true;
}

// ---- overview: approvals, attention, instances ----

function renderOverview() {
  const o = S.overview;
  if (!o) return;
  renderApprovals(o.approvals || []);
  const att = $('attention');
  clear(att);
  $('attention-n').textContent = o.attention.length ? String(o.attention.length) : '';
  if (!o.attention.length) att.appendChild(el('li', 'empty', 'Nothing waits for you.'));
  for (const a of o.attention) {
    const li = el('li');
    const b = el('button', 'item k-' + a.kind);
    b.type = 'button';
    b.dataset.key = a.key;
    b.appendChild(el('span', 'kind', a.kind));
    b.appendChild(el('span', 'meta', '@' + a.instance_name + (a.from ? ' · ' + a.from : '') + ' · ' + when(a.at)));
    b.appendChild(el('span', 'sum', a.summary));
    b.addEventListener('click', () => open(a.instance, a.message, a.agent));
    li.appendChild(b);
    if (a.message && (a.kind === 'mention' || a.kind === 'HELP_REQUEST')) {
      // Acknowledges your inbox up to and including this message (as the
      // control room's ack: acks are a cursor), and says so.
      const ack = el('button', 'ack', 'Ack up to #' + a.message);
      ack.type = 'button';
      ack.title = 'mark your mentions up to and including #' + a.message + ' as read';
      ack.addEventListener('click', () => act(a.instance, {action: 'ack', agent: S.user, until: a.message}));
      li.className = 'with-ack';
      li.appendChild(ack);
    }
    att.appendChild(li);
  }
  const list = $('instances');
  clear(list);
  if (!o.instances.length) list.appendChild(el('li', 'empty', 'No instance runs. Start one: awtui start <workflow.yaml> --background'));
  for (const i of o.instances) {
    const li = el('li');
    const b = el('button', 'item inst' + (i.id === S.current ? ' on' : ''));
    b.type = 'button';
    b.dataset.instance = i.id;
    b.appendChild(el('span', 'sum', '@' + i.name + '  ' + i.workflow));
    let meta = i.working + '/' + i.total + ' working · $' + Number(i.cost).toFixed(2);
    if (i.unread) meta += ' · ' + i.unread + ' for you';
    if (i.note) meta += ' · ' + i.note;
    b.appendChild(el('span', 'meta', meta));
    b.addEventListener('click', () => open(i.id));
    li.appendChild(b);
    list.appendChild(li);
  }
  // Each waiting request counts once (its agent's "approval" item is the same thing).
  const n = o.attention.filter((a) => a.kind !== 'approval').length + (o.approvals || []).length;
  $('count').textContent = n ? String(n) : '';
  document.title = (n ? '(' + n + ') ' : '') + 'awtui';
  notifyNew(o);
  if (!S.current && o.instances.length) {
    const fromHash = location.hash.match(/^#i=([0-9a-f]+)/);
    const pick = fromHash && o.instances.find((i) => i.id === fromHash[1]);
    open((pick || o.instances[0]).id);
  }
}

// Cards are kept while they wait (a reason being typed survives updates);
// new ones are added in order, answered ones leave.
function renderApprovals(cards) {
  const box = $('approvals');
  const key = (c) => c.instance + ':' + c.id;
  const want = new Set(cards.map(key));
  const have = new Map();
  for (const node of [...box.children]) {
    if (want.has(node.dataset.key)) have.set(node.dataset.key, node);
    else node.remove();
  }
  for (const c of cards) {
    const node = have.get(key(c)) || approvalCard(c);
    node.dataset.key = key(c);
    box.appendChild(node);
  }
  $('approvals-n').textContent = cards.length ? String(cards.length) : '';
  $('approvals-box').hidden = !cards.length;
}

function approvalCard(c) {
  const card = el('div', 'card approval');
  card.dataset.approval = String(c.id);
  card.dataset.instance = c.instance;
  const who = el('div', 'who');
  who.appendChild(el('span', null, '@' + c.agent));
  who.appendChild(document.createTextNode(' wants to run '));
  who.appendChild(el('b', null, c.tool));
  who.appendChild(el('span', 'meta', '  #' + c.id + ' in @' + (c.instance_name || '') + ' · ' + when(c.at)));
  card.appendChild(who);
  const pre = el('pre');
  for (const l of c.lines) pre.appendChild(el('span', 'l-' + l.kind, l.text));
  card.appendChild(pre);
  if (c.context) {
    const first = c.context.split('\n').find((l) => l.trim()) || '';
    card.appendChild(el('div', 'context', 'last message: ' + first.trim()));
  }
  const row = el('div', 'actions');
  const allow = el('button', 'allow primary', 'Allow');
  const always = el('button', 'always', 'Always allow');
  const reason = el('input', 'reason');
  reason.placeholder = 'deny reason';
  const deny = el('button', 'deny danger', 'Deny');
  for (const b of [allow, always, deny]) b.type = 'button';
  const decide = async (verdict, alwaysToo) => {
    for (const b of [allow, always, deny]) b.disabled = true;
    const ok = await act(c.instance, {action: 'approve', request: c.id, verdict,
      always: !!alwaysToo, reason: verdict === 'deny' ? reason.value : null});
    if (ok) { card.classList.add('done'); toast((verdict === 'allow' ? 'Allowed' : 'Denied') + ' #' + c.id); }
    else for (const b of [allow, always, deny]) b.disabled = false;
  };
  allow.addEventListener('click', () => decide('allow'));
  always.addEventListener('click', () => decide('allow', true));
  deny.addEventListener('click', () => decide('deny'));
  reason.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); decide('deny'); } });
  row.append(allow, always, reason, deny);
  card.appendChild(row);
  return card;
}

// ---- browser notifications ----

function notifyNew(o) {
  const items = o.attention.map((a) => ['a:' + a.key, 'awtui: ' + a.kind + ' in @' + a.instance_name, (a.from ? a.from + ': ' : '') + a.summary])
    .concat((o.approvals || []).map((c) => ['p:' + c.instance + ':' + c.id, 'awtui: @' + c.agent + ' wants ' + c.tool, c.subject]));
  const keys = new Set(items.map((i) => i[0]));
  if (S.primed && 'Notification' in window && Notification.permission === 'granted') {
    for (const [key, title, body] of items) {
      if (!S.known.has(key)) {
        try {
          const n = new Notification(title, {body: String(body).slice(0, 200), tag: key});
          n.onclick = () => window.focus();
        } catch (_) { /* not allowed here */ }
      }
    }
  }
  S.known = keys;
  S.primed = true;
}

// ---- one instance ----

async function open(id, messageId, agent) {
  const changed = S.current !== id;
  S.current = id;
  history.replaceState(null, '', '#i=' + id);
  $('instance').hidden = false;
  for (const b of document.querySelectorAll('.inst')) b.classList.toggle('on', b.dataset.instance === id);
  if (changed && S.tab === 'live') { S.liveAgent = null; showTab('agents'); }
  if (changed || !S.state) await loadState();
  if (agent) {
    S.diffAgent = agent;
    showTab('agents');
    const row = document.querySelector('#agents li[data-agent="' + CSS.escape(agent) + '"]');
    (row || $('instance')).scrollIntoView({block: 'start'});
  }
  else if (messageId) {
    showTab('channel');
    const m = document.querySelector('.msg[data-id="' + Number(messageId) + '"]');
    if (m) { m.classList.add('hl'); m.scrollIntoView({block: 'center'}); }
  }
}

async function loadState() {
  const id = S.current;
  if (!id) return;
  try {
    const st = await api('/api/instances/' + encodeURIComponent(id));
    if (S.current !== id) return;
    S.state = st;
    renderState();
  } catch (e) {
    toast(String(e.message || e), true);
  }
}

function scheduleRefetch() {
  clearTimeout(S.refetch);
  S.refetch = setTimeout(loadState, 250);
}

function renderState() {
  const st = S.state;
  $('instance-name').textContent = '@' + st.instance + '  ' + st.workflow;
  $('instance-note').textContent = st.paused ? 'paused: ' + st.paused : '';
  $('resume').hidden = !st.paused;
  renderChannel();
  renderAgents();
  renderTasks();
  renderDocs();
  renderDiffAgents();
  if (S.tab === 'live') renderLive();
}

function mark(m) {
  const marks = [];
  for (const who of m.mentions || []) {
    const c = S.state.cursors[who];
    let state = 'queued', sym = '…';
    if (c && m.id <= c.acked) { state = 'acked'; sym = '✓✓'; }
    else if (c && m.id <= c.delivered) { state = 'delivered'; sym = '✓'; }
    const s = el('span', 'mark ' + state, '@' + who + ' ' + sym);
    s.title = state;
    marks.push(s);
  }
  return marks;
}

function messageNode(m) {
  const li = el('li', 'msg' + ((m.mentions || []).includes(S.user) ? ' you' : ''));
  li.dataset.id = String(m.id);
  const head = el('div', 'head');
  head.appendChild(el('span', 'from' + (m.from === 'system' ? ' system' : ''), m.from));
  head.appendChild(el('span', null, '#' + m.id + ' · ' + when(m.at)));
  const thread = (S.state.threads || {})[m.id];
  if (thread) head.appendChild(el('span', 'badge thread ' + thread.state, thread.label));
  if (m.mail) head.appendChild(el('span', 'badge mail', m.mail));
  for (const s of mark(m)) head.appendChild(s);
  li.appendChild(head);
  if (m.parts && m.parts.length) {
    for (const p of m.parts) {
      if (p.block) {
        const b = el('div', 'aop aop-' + p.block);
        b.appendChild(el('div', 'label', p.block + (p.attrs ? ' · ' + p.attrs : '')));
        b.appendChild(el('div', 'text', p.text));
        li.appendChild(b);
      } else {
        li.appendChild(el('div', 'text', p.text));
      }
    }
  } else {
    li.appendChild(el('div', 'text', m.text));
  }
  if (m.truncated) li.appendChild(cutNode(m, li));
  return li;
}

// A shortened message (pages carry at most 64 KiB of each): its whole
// size, and "show all", which reads it whole and draws it in its place.
function cutNode(m, li) {
  const row = el('div', 'cut', 'shortened: ' + new TextEncoder().encode(m.text || '').length + ' of ' + m.bytes + ' bytes shown ');
  const all = el('button', null, 'show all');
  all.addEventListener('click', async () => {
    try {
      const r = await api('/api/instances/' + encodeURIComponent(S.current) + '/messages/' + Number(m.id));
      S.whole.set(S.current + ':' + m.id, r.message);
      li.replaceWith(messageNode(r.message));
    } catch (e) { toast(String(e.message || e), true); }
  });
  row.appendChild(all);
  return row;
}

function renderChannel() {
  const ch = $('channel');
  const atBottom = ch.scrollHeight - ch.scrollTop - ch.clientHeight < 40;
  clear(ch);
  for (const m of S.state.messages) ch.appendChild(messageNode(S.whole.get(S.current + ':' + m.id) || m));
  $('older').hidden = !(S.state.messages.length && S.state.messages[0].id > 1);
  if (atBottom || !renderChannel.done) { ch.scrollTop = ch.scrollHeight; renderChannel.done = true; }
}

function agentNode(a) {
  const li = el('li', 'card agent');
  li.dataset.agent = a.name;
  li.appendChild(el('span', 'name', a.name));
  li.appendChild(el('span', 'st st-' + a.class, a.status));
  li.appendChild(el('span', 'activity', a.activity || ''));
  const sum = liveSummary(a);
  if (sum) li.appendChild(el('span', 'live-sum', sum));
  const m = a.metrics || {};
  li.appendChild(el('span', 'nums', (m.turns || 0) + ' turns · ' + (m.tokens_in || 0) + ' in / ' + (m.tokens_out || 0) +
    ' out tokens · $' + Number(m.cost_usd || 0).toFixed(2) + (m.unread ? ' · ' + m.unread + ' unread' : '') +
    (m.step ? ' · ' + m.step : '') + ' · ' + a.backend + (a.model ? ' ' + a.model : '') +
    (a.place && a.place !== 'local' ? ' on ' + a.place : '') + (a.protocol ? ' · ' + a.protocol : '')));
  const row = el('div', 'actions');
  const mk = (label, fn, cls) => { const b = el('button', cls || null, label); b.type = 'button'; b.addEventListener('click', fn); row.appendChild(b); };
  mk('Stop', () => {
    if (confirm('Stop ' + a.name + '? Its turn ends; its unread messages stay.')) act(S.current, {action: 'stop', agent: a.name});
  }, 'danger');
  mk('Restart', () => act(S.current, {action: 'restart', agent: a.name}));
  mk('Ack all', () => {
    const last = S.state.messages.length ? S.state.messages[S.state.messages.length - 1].id : 0;
    act(S.current, {action: 'ack', agent: a.name, until: last});
  });
  mk('Diff', () => { S.diffAgent = a.name; showTab('diff'); });
  mk('Live', () => openLive(a.name), 'open-live');
  li.appendChild(row);
  return li;
}

// "2 running: Edit src/a.rs · plan 1/3": an agent's turn in a line.
function liveSummary(a) {
  const live = a.live || {};
  const calls = live.calls || [];
  const running = calls.filter((c) => c.status !== 'completed' && c.status !== 'failed');
  const parts = [];
  if (running.length) parts.push(running.length + ' running: ' + (running[running.length - 1].title || running[running.length - 1].kind));
  const plan = live.plan || [];
  if (plan.length) parts.push('plan ' + plan.filter((e) => e.status === 'completed').length + '/' + plan.length);
  return parts.join(' · ');
}

// ---- one agent's live view ----

function openLive(name) {
  S.liveAgent = name;
  showTab('live');
  $('live-input').focus();
}

function liveAgent() {
  return S.state && S.liveAgent ? S.state.agents.find((x) => x.name === S.liveAgent) : null;
}

function callNode(c) {
  const li = el('li', 'call s-' + String(c.status).replace(/[^a-z_]/g, ''));
  li.dataset.call = c.id;
  const head = el('div', 'head');
  head.appendChild(el('span', 'badge', c.status));
  head.appendChild(el('span', 'badge', c.kind));
  head.appendChild(el('span', 'title', c.title || c.kind));
  li.appendChild(head);
  if (c.locations && c.locations.length) li.appendChild(el('div', 'files', c.locations.join(', ')));
  for (const d of c.diffs || []) {
    li.appendChild(el('div', 'files', d.path + ' +' + d.added + ' −' + d.removed));
    const pre = el('pre', 'diff');
    for (const line of String(d.preview || '').split('\n')) {
      if (!line) continue;
      pre.appendChild(el('span', line[0] === '+' ? 'l-added' : line[0] === '-' ? 'l-removed' : 'l-plain', line));
    }
    li.appendChild(pre);
  }
  return li;
}

function renderLive() {
  const a = liveAgent();
  if (!a) return;
  const live = a.live || {};
  $('live-name').textContent = '@' + a.name;
  $('live-proto').textContent = a.protocol || a.backend;
  const st = $('live-status');
  st.textContent = a.status;
  st.className = 'st st-' + a.class;
  const u = live.usage || {};
  $('live-usage').textContent = (u.input_tokens || 0) + ' in / ' + (u.output_tokens || 0) + ' out tokens' +
    (u.cost_usd !== null && u.cost_usd !== undefined ? ' · $' + Number(u.cost_usd).toFixed(4) : '');
  const plan = clear($('live-plan'));
  for (const e of live.plan || []) {
    const mark = e.status === 'completed' ? '✓ ' : e.status === 'in_progress' ? '▶ ' : '· ';
    plan.appendChild(el('li', 'p-' + String(e.status).replace(/[^a-z_]/g, ''), mark + e.content + (e.priority ? ' (' + e.priority + ')' : '')));
  }
  const calls = clear($('live-calls'));
  for (const c of live.calls || []) calls.appendChild(callNode(c));
  const text = $('live-text');
  const atBottom = text.scrollHeight - text.scrollTop - text.clientHeight < 40;
  text.textContent = live.text || '';
  if (atBottom) text.scrollTop = text.scrollHeight;
}

// Folds one piece of an agent's turn in, as the engine does (AgentLive).
function foldLive(a, part) {
  const live = a.live || (a.live = {});
  if (typeof part.text === 'string') {
    live.text = ((live.text || '') + part.text);
    if (live.text.length > TEXT_KEPT) live.text = live.text.slice(live.text.length - TEXT_KEPT);
  }
  if (part.call) {
    const calls = live.calls || (live.calls = []);
    const i = calls.findIndex((c) => c.id === part.call.id);
    if (i >= 0) calls[i] = part.call;
    else {
      calls.push(part.call);
      if (calls.length > CALLS_KEPT) calls.splice(0, calls.length - CALLS_KEPT);
    }
  }
  if (part.plan) live.plan = part.plan;
  if (part.usage) live.usage = part.usage;
}

// Draws changed agents once per frame (an agent may send thousands of
// updates a second).
function redraw(name) {
  S.dirty.add(name);
  if (S.drawing) return;
  S.drawing = true;
  requestAnimationFrame(() => {
    S.drawing = false;
    const names = [...S.dirty];
    S.dirty.clear();
    if (!S.state) return;
    for (const n of names) {
      const a = S.state.agents.find((x) => x.name === n);
      const old = document.querySelector('#agents li[data-agent="' + CSS.escape(n) + '"]');
      if (a && old) old.replaceWith(agentNode(a));
      if (n === S.liveAgent && S.tab === 'live') renderLive();
    }
  });
}

// Types to the agent: a message to it in the channel (a stopped agent is
// let work again first, so the line wakes it).
async function sendLive(e) {
  if (e) e.preventDefault();
  const a = liveAgent();
  const input = $('live-input');
  const text = input.value;
  if (!a || !text.trim() || !S.current) return;
  $('live-send').disabled = true;
  let ok = true;
  if (a.class === 'stopped' || a.class === 'failed') ok = await act(S.current, {action: 'restart', agent: a.name});
  if (ok) ok = await act(S.current, {action: 'post', text: '@' + a.name + ' ' + text});
  $('live-send').disabled = false;
  if (ok) input.value = '';
}

// Cancels the agent's current turn, not the agent (for an ACP agent:
// session/cancel; it keeps its conversation and works on when typed to).
function cancelLive() {
  const a = liveAgent();
  if (!a || !S.current) return;
  act(S.current, {action: 'cancel', agent: a.name}).then((ok) => { if (ok) toast('Cancelled @' + a.name + "'s turn"); });
}

function renderAgents() {
  const ul = clear($('agents'));
  for (const a of S.state.agents) ul.appendChild(agentNode(a));
}

function renderTasks() {
  const ul = clear($('tasks'));
  if (!S.state.tasks.length) ul.appendChild(el('li', 'empty', 'No tasks.'));
  for (const t of S.state.tasks) {
    const li = el('li', 'card');
    li.appendChild(el('div', 'st', t.status + (t.claimed_by ? ' · ' + t.claimed_by : t.assignee ? ' · for ' + t.assignee : '')));
    li.appendChild(el('div', 'name', t.name));
    if (t.description) li.appendChild(el('div', 'context', t.description));
    ul.appendChild(li);
  }
}

function renderDocs() {
  const ul = clear($('docs'));
  if (!S.state.documents.length) ul.appendChild(el('li', 'empty', 'No documents.'));
  for (const f of S.state.documents) {
    const li = el('li');
    const b = el('button', 'item', f);
    b.type = 'button';
    b.addEventListener('click', async () => {
      try {
        const d = await api('/api/instances/' + encodeURIComponent(S.current) + '/document?file=' + encodeURIComponent(f));
        $('doc').textContent = d.content;
      } catch (e) { toast(String(e.message || e), true); }
    });
    li.appendChild(b);
    ul.appendChild(li);
  }
}

function renderDiffAgents() {
  const sel = clear($('diff-agent'));
  sel.title = 'whose work';
  for (const a of S.state.agents) {
    const o = el('option', null, a.name);
    o.value = a.name;
    sel.appendChild(o);
  }
  if (S.diffAgent) sel.value = S.diffAgent;
}

async function loadDiff(turn) {
  const agent = $('diff-agent').value;
  if (!agent) return;
  S.diffAgent = agent;
  const patch = $('patch');
  const steps = clear($('steps'));
  try {
    const d = await api('/api/instances/' + encodeURIComponent(S.current) + '/diff?agent=' + encodeURIComponent(agent) +
      (turn ? '&turn=' + turn : ''));
    const all = el('button', 'item' + (d.turn ? '' : ' inst on'), 'Everything on ' + d.branch + ' since ' + d.base);
    all.type = 'button';
    all.addEventListener('click', () => loadDiff(null));
    steps.appendChild(el('li')).appendChild(all);
    for (const s of d.steps) {
      const n = s.turn;
      const b = el('button', 'item' + (d.turn === n ? ' inst on' : ''), 'turn ' + n + ' · ' + s.commit);
      b.type = 'button';
      b.addEventListener('click', () => loadDiff(n));
      steps.appendChild(el('li')).appendChild(b);
    }
    clear(patch);
    for (const line of (d.patch || '(no changes)').split('\n')) {
      const cls = line.startsWith('+') && !line.startsWith('+++') ? 'l-added'
        : line.startsWith('-') && !line.startsWith('---') ? 'l-removed'
        : line.startsWith('diff ') || line.startsWith('@@') ? 'l-head' : 'l-plain';
      patch.appendChild(el('span', cls, line));
    }
    if (d.uncommitted && d.uncommitted.length) patch.appendChild(el('span', 'l-head', 'uncommitted: ' + d.uncommitted.join(', ')));
  } catch (e) {
    patch.textContent = String(e.message || e);
  }
}

function showTab(tab) {
  S.tab = tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', b.dataset.tab === tab);
  for (const t of ['channel', 'agents', 'tasks', 'docs', 'diff', 'live']) $('tab-' + t).hidden = t !== tab;
  if (tab === 'diff') loadDiff(null);
  if (tab === 'live') renderLive();
}

// ---- live events ----

function apply(ev) {
  const st = S.state;
  if (!st) return;
  switch (ev.kind) {
    case 'message': {
      if (st.messages.some((m) => m.id === ev.message.id)) return;
      st.messages.push(ev.message);
      st.total_messages += 1;
      if (st.messages.length > 400) st.messages.splice(0, st.messages.length - 400);
      const ch = $('channel');
      const atBottom = ch.scrollHeight - ch.scrollTop - ch.clientHeight < 40;
      ch.appendChild(messageNode(ev.message));
      if (atBottom) ch.scrollTop = ch.scrollHeight;
      break;
    }
    case 'status': case 'metrics': case 'activity': {
      const a = st.agents.find((x) => x.name === ev.agent);
      if (!a) { scheduleRefetch(); return; }
      if (ev.kind === 'status') {
        // A new turn starts a new live view (as the engine's).
        if (ev.status === 'starting') a.live = {};
        a.status = ev.status; a.class = ev.class;
      }
      if (ev.kind === 'metrics') a.metrics = ev.metrics;
      if (ev.kind === 'activity') {
        if (typeof ev.text === 'string') a.activity = ev.text;
        if (ev.live) foldLive(a, ev.live);
      }
      redraw(a.name);
      break;
    }
    case 'cursor':
      st.cursors[ev.agent] = ev.cursor;
      renderChannel();
      break;
    case 'notice':
      toast(ev.text);
      break;
    default:
      scheduleRefetch();
  }
}

function connect() {
  const live = (text, cls) => { $('live').textContent = text; $('live').className = cls; };
  awtuiAuth.stream('/api/events', {
    open: () => live('live', 'live'),
    error: () => live('reconnecting', 'live off'),
    denied: () => { live('signed out', 'live off'); toast(SIGNED_OUT, true); },
    message: (data) => {
      let p;
      try { p = JSON.parse(data); } catch (_) { return; }
      if (p.type === 'hello') {
        // (Re)connected, maybe to a restarted server: a fresh CSRF value and state.
        api('/api/session').then((s) => { S.csrf = s.csrf; }).catch(() => {});
        refreshOverview();
        if (S.current) loadState();
      }
      else if (p.type === 'overview') { S.overview = p.overview; renderOverview(); }
      else if (p.type === 'event' && p.instance === S.current) apply(p.event);
      else if (p.type === 'resync' && (p.instance === null || p.instance === S.current)) { loadState(); refreshOverview(); }
    },
  });
}

async function refreshOverview() {
  try { S.overview = await api('/api/overview'); renderOverview(); }
  catch (e) { toast(String(e.message || e), true); }
}

// ---- composing, with @name completion ----

function agentNames() {
  return S.state ? S.state.agents.map((a) => a.name).concat(['all']) : [];
}

function completions() {
  const box = clear($('completions'));
  const ta = $('compose');
  const before = ta.value.slice(0, ta.selectionStart);
  const m = before.match(/@([A-Za-z0-9_-]*)$/);
  if (!m) return [];
  const found = agentNames().filter((n) => n.startsWith(m[1]) && n !== m[1]);
  for (const n of found) {
    const b = el('button', null, '@' + n);
    b.type = 'button';
    b.addEventListener('click', () => complete(n));
    box.appendChild(b);
  }
  return found;
}

function complete(name) {
  const ta = $('compose');
  const pos = ta.selectionStart;
  const before = ta.value.slice(0, pos).replace(/@([A-Za-z0-9_-]*)$/, '@' + name + ' ');
  ta.value = before + ta.value.slice(pos);
  ta.selectionStart = ta.selectionEnd = before.length;
  ta.focus();
  clear($('completions'));
}

async function send(e) {
  if (e) e.preventDefault();
  const ta = $('compose');
  const text = ta.value;
  if (!text.trim() || !S.current) return;
  $('send').disabled = true;
  const ok = await act(S.current, {action: 'post', text});
  $('send').disabled = false;
  if (ok) { ta.value = ''; clear($('completions')); }
}

// ---- keys ----

function keys(e) {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (e.key === 'Escape') {
    // In a live view, Esc cancels a turn that runs (and only then).
    const a = S.tab === 'live' && $('help').hidden ? liveAgent() : null;
    if (a && ['working', 'approval', 'warning'].includes(a.class)) cancelLive();
    document.activeElement.blur(); $('help').hidden = true; return;
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  const first = document.querySelector('#approvals .approval:not(.done)');
  const insts = (S.overview && S.overview.instances) || [];
  const at = insts.findIndex((i) => i.id === S.current);
  switch (e.key) {
    case 'c': case '/': e.preventDefault(); showTab('channel'); $('compose').focus(); break;
    case 'y': if (first) first.querySelector('.allow').click(); break;
    case 'n': if (first) { e.preventDefault(); first.querySelector('.reason').focus(); } break;
    case 'j': if (insts.length) open(insts[(at + 1) % insts.length].id); break;
    case 'k': if (insts.length) open(insts[(at - 1 + insts.length) % insts.length].id); break;
    case '1': showTab('channel'); break;
    case '2': showTab('agents'); break;
    case '3': showTab('tasks'); break;
    case '4': showTab('docs'); break;
    case '5': showTab('diff'); break;
    case 'a': $('attention-box').scrollIntoView(); break;
    case '?': $('help').hidden = !$('help').hidden; break;
    default: return;
  }
}

const SIGNED_OUT = 'Not signed in: open the address awtui web printed (each signs in one browser; awtui web --link prints a new one).';

async function main() {
  try {
    await awtuiAuth.signIn();
    const s = await api('/api/session');
    S.csrf = s.csrf;
    S.user = s.user;
  } catch (e) {
    toast(SIGNED_OUT, true);
    document.body.appendChild(el('p', 'signed-out', SIGNED_OUT));
    return;
  }
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  $('compose-form').addEventListener('submit', send);
  $('compose').addEventListener('input', completions);
  $('compose').addEventListener('keydown', (e) => {
    if (e.key === 'Tab') { const f = completions(); if (f.length) { e.preventDefault(); complete(f[0]); } }
    else if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); }
  });
  $('older').addEventListener('click', async () => {
    const first = S.state.messages[0];
    if (!first) return;
    const r = await api('/api/instances/' + encodeURIComponent(S.current) + '/messages?before=' + first.id);
    S.state.messages = r.messages.concat(S.state.messages);
    const ch = $('channel');
    const h = ch.scrollHeight;
    renderChannel();
    ch.scrollTop = ch.scrollHeight - h;
  });
  $('resume').addEventListener('click', () => act(S.current, {action: 'resume'}));
  $('live-form').addEventListener('submit', sendLive);
  $('live-cancel').addEventListener('click', cancelLive);
  $('live-close').addEventListener('click', () => showTab('agents'));
  $('diff-agent').addEventListener('change', () => loadDiff(null));
  $('help-on').addEventListener('click', () => { $('help').hidden = !$('help').hidden; });
  // A tap (or click) outside the help closes it: phones have no Esc.
  document.addEventListener('pointerdown', (e) => {
    const help = $('help');
    if (!help.hidden && !help.contains(e.target) && !$('help-on').contains(e.target)) help.hidden = true;
  });
  if ('Notification' in window && Notification.permission === 'default') {
    $('notify-on').hidden = false;
    $('notify-on').addEventListener('click', () => Notification.requestPermission().then(() => { $('notify-on').hidden = true; }));
  }
  document.addEventListener('keydown', keys);
  await refreshOverview();
  connect();
}

document.addEventListener('DOMContentLoaded', main);
