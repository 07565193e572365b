/* page.js -- draws cuwarden-audit's page from the merged document
 * embedded in it (#cw-data, doc/audit.md) and the page's own facts
 * (#cw-page: the audit's exit status, when the page was written).
 * Every element is built with the DOM and every string set as text,
 * never as markup; nothing is fetched (the page's Content-Security-
 * Policy forbids it). */
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const raw = $('cw-data').textContent;
  const D = JSON.parse(raw);
  const P = JSON.parse($('cw-page').textContent);
  const S = D.summary, C = D.coverage;
  const LIMIT = 500; /* groups drawn per list; the rest is in the JSON */
  const OPEN = 20;   /* stacks shown open in a list */

  /* ---- Text ---------------------------------------------------------- */

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function add(parent, ...kids) {
    for (const k of kids)
      if (k != null) parent.append(k);
    return parent;
  }
  /* Digits grouped by threes, as the text report writes them. */
  function fmt(n) {
    return String(Math.round(Number(n) || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  /* 3,407,872 -> "3.25 MiB": three significant digits at most. */
  function human(n) {
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
    let v = Number(n) || 0, i = -1;
    if (v < 1024) return fmt(v) + (v === 1 ? ' byte' : ' bytes');
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    let s = v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0);
    if (s.indexOf('.') >= 0) s = s.replace(/\.?0+$/, '');
    return s + ' ' + units[i];
  }
  /* A saturated sum (doc/audit.md) is a lower bound. */
  function atLeast(o, key) {
    return o && (o.saturated || []).indexOf(key) >= 0 ? 'at least ' : '';
  }
  /* "4,194,304 bytes (4 MiB)": the exact count, and the unit where it
   * helps. */
  function bytes(n, o, key) {
    return atLeast(o, key) + fmt(n) + (n === 1 ? ' byte' : ' bytes') +
      (n >= 1024 ? ' (' + human(n) + ')' : '');
  }
  function count(n, one, many, o, key) {
    return atLeast(o, key) + fmt(n) + ' ' + (n === 1 ? one : many);
  }
  function pct(part, whole) {
    if (!whole) return '0%';
    const v = 100 * part / whole;
    return v > 0 && v < 0.1 ? '<0.1%' : v.toFixed(1).replace(/\.0$/, '') + '%';
  }
  function base(p) { return p ? String(p).replace(/^.*\//, '') : '?'; }
  /* A path cut from the left when it does not fit: the file name stays
   * whole, the full path is the title (shown on hover). */
  function pathEl(p) {
    const e = el('span', 'cw-path'), i = p.lastIndexOf('/');
    e.title = p;
    if (i >= 0) {
      const d = el('span', 'cw-dir'), b = el('bdi', null, p.slice(0, i + 1));
      b.dir = 'ltr';
      e.append(add(d, b));
    }
    return add(e, el('span', 'cw-base', p.slice(i + 1)));
  }
  function ownerEl(o) {
    return o ? pathEl(o) : document.createTextNode('an unknown owner');
  }
  /* "2026-12-02T17:00:00Z" -> "2026-12-02 17:00:00 UTC". */
  function when(t) {
    const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?Z$/.exec(t || '');
    return m ? m[1] + ' ' + m[2] + ' UTC' : String(t);
  }
  /* 0,1,2,3,5 -> "0-3, 5" */
  function ranges(nums) {
    const v = Array.from(new Set(nums)).sort((a, b) => a - b), out = [];
    for (let i = 0; i < v.length; i++) {
      let j = i;
      while (j + 1 < v.length && v[j + 1] === v[j] + 1) j++;
      out.push(j > i ? v[i] + '\u2013' + v[j] : String(v[i]));
      i = j;
    }
    return out.join(', ');
  }

  /* ---- The banner ---------------------------------------------------- */

  const lost = (D.lost_processes || []).filter((l) => !l.end || l.end.how !== 'running');
  const status = P.exit_status;
  function banner() {
    const b = $('cw-banner'), why = $('cw-why');
    let verdict, word;
    if (status === 125) {
      verdict = 'fail'; word = 'AUDIT FAILED';
      const r = [];
      if (lost.length)
        r.push(count(lost.length, 'process', 'processes') + ' used CUDA and left no report: the audit is incomplete');
      if (C.cuda_active === false)
        r.push('no CUDA activity seen in ' + count(C.processes, 'process', 'processes'));
      why.textContent = (r.length ? r.join('; ') : 'the audit itself failed') + '.';
    } else if (S.errors > 0) {
      verdict = 'fail'; word = 'FAIL';
      why.textContent = count(S.errors, 'error', 'errors', S, 'errors') + ' reported (' +
        count(S.leaked_allocations, 'leak', 'leaks', S, 'leaked_allocations') + ', ' +
        count(S.violations, 'violation', 'violations', S, 'violations') + ').';
    } else {
      verdict = status === 0 ? 'pass' : 'warn'; word = 'PASS';
      why.textContent = 'No leaks or violations reported' +
        (status === 0 ? '.' : '; the exit status is the program\'s own.');
    }
    b.classList.add('cw-' + verdict);
    b.setAttribute('data-verdict', verdict);
    b.setAttribute('data-exit-status', String(status));
    $('cw-verdict').textContent = word + ': exit status ' + status;
    document.title = word + ' (exit status ' + status + ') \u2014 cuwarden-audit';

    const meta = $('cw-meta');
    function item(k, v) {
      if (v == null || v === '') return;
      const d = el('div');
      d.setAttribute('data-meta', k);
      meta.append(add(d, el('dt', null, k), el('dd', null, v)));
    }
    const procs = D.processes || [];
    const times = procs.map((p) => p.time).filter(Boolean).sort();
    const hosts = Array.from(new Set(procs.map((p) => p.host).filter(Boolean)));
    const ranks = procs.map(rankOf).filter((r) => r !== null);
    item('Command', D.command && D.command.length ? D.command.join(' ') : 'saved reports (cuwarden-audit report)');
    item('Run', times.length ? when(times[0]) + (times.length > 1 && times[times.length - 1] !== times[0] ?
      ' \u2013 ' + when(times[times.length - 1]) : '') : null);
    item(hosts.length > 1 ? 'Hosts' : 'Host', hosts.join(', '));
    item(new Set(ranks).size > 1 ? 'Ranks' : 'Rank', ranks.length ? ranges(ranks) : null);
    item('Page written', P.written ? when(P.written) : null);
    item('Tool', D.tool);

    /* The merged document as it is embedded: `cuwarden-audit report`
     * reads it back. */
    const blob = new Blob([raw], { type: 'application/json' });
    const a = el('a', null, 'Download the JSON document');
    a.id = 'cw-download';
    a.href = URL.createObjectURL(blob);
    a.download = 'cuwarden-audit.json';
    a.setAttribute('data-bytes', String(blob.size));
    add($('cw-get'), a, ' (' + human(blob.size) + '; ', el('code', null, 'cuwarden-audit report'), ' reads it)');
  }

  /* ---- Summary ------------------------------------------------------- */

  function summary() {
    const cards = [
      ['leaked_bytes', S, 'bytes leaked', S.leaked_bytes > 0, true],
      ['leaked_allocations', S, 'allocations leaked', S.leaked_allocations > 0],
      ['leak_groups', S, 'leak groups', S.leak_groups > 0],
      ['teardown_allocations', S, 'of them freed only by context teardown', S.teardown_allocations > 0],
      ['address_ranges', S, 'address ranges never freed', false],
      ['violations', S, 'violations', S.violations > 0],
      ['errors', S, 'errors', S.errors > 0],
      ['suppressed_bytes', S, 'bytes suppressed', false, true],
      ['processes', C, 'processes audited', false],
      ['allocations', C, 'allocations seen', false]];
    const box = $('cw-summary');
    for (const [key, o, label, bad, isBytes] of cards) {
      const v = o[key] || 0;
      if ((key === 'teardown_allocations' || key === 'address_ranges') && !v) continue;
      const d = el('div', 'cw-card' + (bad ? ' cw-bad' : key === 'errors' ? ' cw-ok' : ''));
      d.setAttribute('data-key', key);
      d.setAttribute('data-value', String(v));
      add(d, el('span', 'cw-num', atLeast(o, key) + fmt(v)),
        el('span', 'cw-label', label + (isBytes && v >= 1024 ? ' \u00b7 ' + human(v) : '')));
      box.append(d);
    }
    $('cw-status').textContent = 'LEAK SUMMARY: ' + bytes(S.leaked_bytes, S, 'leaked_bytes') +
      ' leaked in ' + count(S.leaked_allocations, 'allocation', 'allocations', S, 'leaked_allocations') +
      ' (' + count(S.leak_groups, 'group', 'groups') + '). ERROR SUMMARY: ' +
      count(S.errors, 'error', 'errors', S, 'errors') + ' (' +
      count(S.leaked_allocations, 'leak', 'leaks', S, 'leaked_allocations') + ', ' +
      count(S.violations, 'violation', 'violations', S, 'violations') + ').';
    let cov = 'Coverage: ' + count(C.processes, 'process', 'processes', C, 'processes') + ' audited, ' +
      count(C.allocations, 'allocation', 'allocations', C, 'allocations') + ' seen, hooks active in ' +
      fmt(C.hooks_active_processes);
    if (C.untracked_frees) cov += ', ' + count(C.untracked_frees, 'untracked free', 'untracked frees', C, 'untracked_frees');
    if (C.cuda_active === false) cov += ': no CUDA activity seen';
    if (S.suppressed_leaks || S.suppressed_violations)
      cov += '. Suppressed: ' + bytes(S.suppressed_bytes, S, 'suppressed_bytes') + ' in ' +
        count(S.suppressed_leaks, 'allocation', 'allocations', S, 'suppressed_leaks') + ', ' +
        count(S.suppressed_violations, 'violation', 'violations', S, 'suppressed_violations');
    $('cw-coverage').textContent = cov + '.';
  }

  /* ---- Leaked bytes by owner ----------------------------------------- */

  const memory = D.leaks.filter((l) => l.category !== 'address_range');
  const total = memory.reduce((s, l) => s + l.bytes, 0);

  function owners() {
    const by = new Map();
    for (const l of memory) {
      const o = l.owner || '(unknown owner)';
      by.set(o, (by.get(o) || 0) + l.bytes);
    }
    const box = $('cw-owners');
    if (!by.size) { box.append(el('p', 'cw-none', 'Nothing leaked.')); return; }
    const max = Math.max(...by.values());
    for (const [o, n] of Array.from(by).sort((a, b) => b[1] - a[1])) {
      const r = el('div', 'cw-bar'), f = el('span', 'cw-bar-fill');
      r.setAttribute('data-owner', o);
      r.setAttribute('data-bytes', String(n));
      f.style.width = 100 * n / max + '%';
      add(r, pathEl(o), add(el('span', 'cw-bar-track'), f),
        el('span', 'cw-bar-value', bytes(n) + ', ' + pct(n, total)));
      box.append(r);
    }
  }

  /* ---- A distributed job: leaked bytes by rank and owner ------------ */

  /* A process's rank (its report's "job"), null without one. */
  function rankOf(p) {
    return p.job && Number.isInteger(p.job.rank) ? p.job.rank : null;
  }
  /* One row per owner, whatever the count of ranks: its ranks, on how
   * many of the job's, each rank's bytes (least to most) and the total. */
  function ranks() {
    const rankBy = new Map();
    for (const p of D.processes || [])
      if (rankOf(p) !== null) rankBy.set((p.host || '') + '\u0000' + p.pid, rankOf(p));
    if (!rankBy.size) return;
    const world = (D.job && D.job.world_size) || rankBy.size;
    const by = new Map();
    for (const l of memory) {
      const o = l.owner || '(unknown owner)';
      if (!by.has(o)) by.set(o, new Map());
      const m = by.get(o);
      (l.pids || []).forEach((pid, i) => {
        const r = rankBy.get(((l.hosts || [])[i] || '') + '\u0000' + pid);
        if (r === undefined) return;
        const share = l.per_process ? l.per_process[i].bytes : l.bytes / l.pids.length;
        m.set(r, (m.get(r) || 0) + share);
      });
    }
    $('cw-sec-ranks').hidden = false;
    const box = $('cw-ranks');
    const missing = (D.job && D.job.missing_ranks) || [];
    if (missing.length)
      box.append(el('p', 'cw-lost', 'Missing ranks: ' + missing.length + ' of ' + world +
        ' left no report: ' + ranges(missing)));
    const rows = Array.from(by).filter(([, m]) => m.size).map(([o, m]) => {
      const rs = Array.from(m.keys()).sort((a, b) => a - b), v = Array.from(m.values());
      return { o, rs, lo: Math.min(...v), hi: Math.max(...v), sum: v.reduce((a, b) => a + b, 0) };
    }).sort((a, b) => b.sum - a.sum);
    if (!rows.length) { box.append(el('p', 'cw-none', 'No rank leaked.')); return; }
    const t = el('table', 'cw-procs'), hr = el('tr'), tb = el('tbody');
    t.id = 'cw-rank-owner';
    for (const h of ['owner', 'ranks', 'on', 'bytes per rank', 'total']) {
      const th = el('th', null, h);
      th.scope = 'col';
      hr.append(th);
    }
    for (const w of rows) {
      const r = el('tr');
      r.setAttribute('data-owner', w.o);
      r.setAttribute('data-ranks', ranges(w.rs));
      add(r, add(el('td'), pathEl(w.o)), el('td', 'cw-cmd', ranges(w.rs)),
        el('td', 'cw-n', w.rs.length + ' of ' + world),
        el('td', 'cw-n', w.lo === w.hi ? bytes(w.lo) + ' each' : bytes(w.lo) + ' to ' + bytes(w.hi)),
        el('td', 'cw-n', bytes(w.sum)));
      tb.append(r);
    }
    box.append(add(el('div', 'cw-table-box'), add(t, add(el('thead'), hr), tb)));
  }

  /* ---- Leaked bytes by stack: the icicle graph ----------------------- */

  function frameName(f) {
    if (f.python) return (f.python.function || '???') + ' (' + base(f.python.file) + ':' + f.python.line + ')';
    return f.function || (base(f.module) + '+' + f.offset);
  }
  /* The static CUDA runtime's insides. */
  function cudart(f) { return /^libcudart_static_/.test(f.function || ''); }

  function node(name, where) {
    return { name, where, value: 0, kids: new Map() };
  }
  /* Each group's bytes go down its own stack, from main (or the
   * outermost frame) to the allocating call: a cell holds exactly the
   * bytes leaked through its call path. */
  const root = node('all leaked bytes', 'every process');
  for (const l of memory) {
    const names = [];
    let top = l.stack.length - 1, n = root;
    for (let m = 0; m < l.stack.length; m++)
      if (l.stack[m].function === 'main') { top = m; break; }
    for (let i = top; i >= 0; i--) {
      const f = l.stack[i], mod = f.python ? (f.python.file || 'python') : (f.module || 'unknown module');
      if (cudart(f)) continue;
      /* Keyed by function and module: two programs' main stay apart. */
      names.push([frameName(f), mod]);
      for (let k = (f.inlined || []).length - 1; k >= 0; k--)
        names.push([(f.inlined[k].function || '(unknown)') + ' [inlined]', mod]);
    }
    names.push([l.kind + ' ' + l.api, 'owner ' + (l.owner || 'unknown')]);
    root.value += l.bytes;
    for (const [name, where] of names) {
      const key = name + '\u0000' + where;
      if (!n.kids.has(key)) n.kids.set(key, node(name, where));
      n = n.kids.get(key);
      n.value += l.bytes;
    }
  }
  function depth(n) {
    let d = 0;
    for (const k of n.kids.values()) d = Math.max(d, depth(k));
    return d + 1;
  }
  function color(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return 'hsl(' + (8 + h % 42) + ',' + (68 + h % 22) + '%,' + (66 + (h >> 8) % 12) + '%)';
  }

  const tip = $('cw-tip');
  function tipText(n, top) {
    let t = n.name + '\n' + n.where + '\n' + bytes(n.value) + ', ' + pct(n.value, root.value) +
      ' of all leaked bytes';
    if (top !== root && n !== top) t += ', ' + pct(n.value, top.value) + ' of ' + top.name;
    return t;
  }
  /* The tooltip at (x, y), kept inside the window. */
  function showTip(text, x, y) {
    tip.textContent = '';
    text.split('\n').forEach((line, i) => tip.append(i ? el('br') : '', line));
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let left = x + 14, topY = y + 18;
    if (left + w > innerWidth - 4) left = Math.max(4, x - w - 14);
    if (topY + h > innerHeight - 4) topY = Math.max(4, y - h - 12);
    tip.style.left = left + 'px';
    tip.style.top = topY + 'px';
  }
  function hideTip() { tip.hidden = true; }

  const ROW = 36;
  function draw(top) {
    const box = $('cw-icicle');
    box.textContent = '';
    hideTip();
    if (!root.value) { box.append(el('p', 'cw-none', 'Nothing leaked.')); return; }
    const g = el('div', 'cw-graph');
    g.id = 'cw-graph';
    g.style.height = depth(top) * ROW + 'px';
    g.setAttribute('data-zoom', top.name);
    function put(n, x, row, w) {
      if (w * 1000 < 0.5) return; /* under half a pixel at the least width */
      const c = el('div', 'cw-cell');
      c.setAttribute('data-name', n.name);
      c.setAttribute('data-bytes', String(n.value));
      c.setAttribute('data-percent', pct(n.value, root.value));
      c.style.left = 100 * x + '%';
      c.style.width = 100 * w + '%';
      c.style.top = row * ROW + 'px';
      c.style.background = n === root ? '#b8c0cc' : color(n.name);
      c.tabIndex = 0;
      c.setAttribute('role', 'button');
      c.setAttribute('aria-label', tipText(n, top).replace(/\n/g, '; '));
      add(c, el('span', 'cw-cell-name', n.name),
        el('span', 'cw-cell-num', human(n.value) + ' \u00b7 ' + pct(n.value, root.value)));
      /* From the keyboard, the focus goes to the new top row. */
      const zoom = (kbd) => {
        draw(n === top ? root : n);
        if (kbd) $('cw-graph').firstChild.focus();
      };
      c.addEventListener('mousemove', (e) => showTip(tipText(n, top), e.clientX, e.clientY));
      c.addEventListener('mouseleave', hideTip);
      c.addEventListener('focus', () => {
        const r = c.getBoundingClientRect();
        showTip(tipText(n, top), Math.max(r.left, 0) + 8, r.bottom - 10);
      });
      c.addEventListener('blur', hideTip);
      c.addEventListener('click', () => zoom(false));
      c.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); zoom(true); }
        else if (e.key === 'Escape') hideTip();
      });
      g.append(c);
      let cx = x;
      for (const k of Array.from(n.kids.values()).sort((a, b) => b.value - a.value)) {
        const cw = w * k.value / n.value;
        put(k, cx, row + 1, cw);
        cx += cw;
      }
    }
    put(top, 0, 0, 1);
    box.append(g);
  }

  /* ---- Findings ------------------------------------------------------ */

  function frameText(f, inl) {
    /* A Python frame: file:line function. */
    if (f.python) return (f.python.file || '?') + ':' + f.python.line + ' ' + (f.python.function || '???') + ' [python]';
    let t = inl ? (inl.function || '???') : (f.function || '???');
    const file = inl ? inl.file : f.file, line = inl ? inl.line : f.line;
    if (file && line > 0) t += ' (' + base(file) + ':' + line + ')';
    else t += ' (in ' + (f.module || 'unknown module') + (f.note ? ', ' + f.note : '') + ')';
    return f.offset + ': ' + t + (inl ? ' [inlined]' : '');
  }
  function stackList(st) {
    const ol = el('ol', 'cw-stack');
    if (!st || !st.length) return add(ol, el('li', 'cw-none', '(no stack recorded)'));
    let j0 = 0;
    while (j0 < st.length - 1 && cudart(st[j0])) j0++;
    if (j0) ol.append(el('li', 'cw-none', fmt(j0) + ' frame(s) inside the static CUDA runtime not shown'));
    for (let j = j0; j < st.length; j++) {
      const f = st[j];
      for (const i of f.inlined || []) ol.append(el('li', 'cw-inl', frameText(f, i)));
      ol.append(el('li', f.file ? '' : 'cw-nodbg', frameText(f)));
      if (f.function === 'main' && j + 1 < st.length) {
        ol.append(el('li', 'cw-none', fmt(st.length - j - 1) + ' frame(s) below main: see the JSON'));
        break;
      }
    }
    return ol;
  }
  /* A stack that folds away (<details>). */
  function stackBox(label, st, open) {
    const d = el('details', 'cw-stack-box'), n = st ? st.length : 0;
    d.open = open;
    return add(d, el('summary', null, label + ' (' + count(n, 'frame', 'frames') + ')'), stackList(st));
  }
  /* The device(s), the API (withApi), the pids.  Host memory and an
   * unknown device say nothing here: the kind in the heading tells. */
  function where(f, rg, withApi) {
    const devs = f.devices || [];
    const w = devs.length > 1 ? 'devices ' + devs.join(',') :
      f.device >= 0 ? 'device ' + f.device : rg ? 'address range' : null;
    const pids = f.pids || [];
    return [w, withApi ? f.api : null, pids.length ? (pids.length > 1 ? 'pids ' : 'pid ') + pids.join(',') : null]
      .filter(Boolean).join(', ');
  }
  const VERB = { leak: ' leaked by ', teardown: ' freed only by context teardown, made by ',
    address_range: ' never freed, reserved by ' };
  function leakEl(l, open, cls) {
    const cat = l.category || 'leak', rg = cat === 'address_range';
    const d = el('article', 'cw-finding cw-leak cw-cat-' + cat + (cls ? ' ' + cls : ''));
    d.setAttribute('data-fingerprint', l.fingerprint);
    d.setAttribute('data-category', cat);
    const what = rg ? ['address range', 'address ranges'] : [l.kind + ' allocation', l.kind + ' allocations'];
    let h = bytes(l.bytes, l, 'bytes') + ' in ' + count(l.count, what[0], what[1], l, 'count');
    if (l.count > 1 && l.min_size === l.max_size) h += ' (' + fmt(l.size) + ' each)';
    else if (l.count > 1) h += ' (' + fmt(l.min_size) + ' to ' + fmt(l.max_size) + ' each)';
    add(d, add(el('h3'), h + (VERB[cat] || VERB.leak), ownerEl(l.owner)),
      el('p', 'cw-sub', where(l, rg, true) + ' \u00b7 fingerprint ' + l.fingerprint),
      stackBox(rg ? 'Reserved at' : 'Allocated at', l.stack, open));
    return d;
  }
  function violationEl(v, open, cls) {
    const d = el('article', 'cw-finding cw-violation' + (cls ? ' ' + cls : ''));
    d.setAttribute('data-fingerprint', v.fingerprint);
    let h = v.type + ': ' + (v.api || '?') + (v.address ? ' of ' + v.address : '');
    if (v.range) h += ' [' + v.range.offset + ', ' + v.range.offset + ' + ' + v.range.length + ')';
    if (v.kind || v.size) h += ' (' + (v.kind ? v.kind + ' ' : '') + 'allocation' +
      (v.size ? ' of ' + fmt(v.size) + ' bytes' : '') + ')';
    if (v.cuda_error) h += ' \u2192 ' + v.cuda_error;
    h += ', ' + count(v.count, 'time', 'times', v, 'count');
    add(d, el('h3', null, h), el('p', 'cw-sub', where(v, false, false) + ' \u00b7 fingerprint ' + v.fingerprint),
      stackBox('Stack', v.stack, open));
    if ((v.alloc_stack || []).length) d.append(stackBox('Allocated at', v.alloc_stack, open));
    if ((v.free_stack || []).length) d.append(stackBox('First freed at', v.free_stack, open));
    return d;
  }
  function list(box, items, make, none, cls) {
    if (!items.length) { box.append(el('p', 'cw-none', none)); return; }
    items.slice(0, LIMIT).forEach((f, i) => box.append(make(f, !cls && i < OPEN, cls)));
    if (items.length > LIMIT)
      box.append(el('p', 'cw-none', fmt(items.length - LIMIT) +
        ' more groups: see the JSON document (the download above, or --json).'));
  }
  function heading(id, text, n) {
    $(id).textContent = text + ' (' + count(n, 'group', 'groups') + ')';
  }

  function findings() {
    heading('cw-h-leaks', 'Leaks', D.leaks.length);
    list($('cw-leaks'), D.leaks, leakEl, 'No leaks reported.');
    heading('cw-h-violations', 'Violations', D.violations.length);
    list($('cw-violations'), D.violations, violationEl, 'No violations reported.');

    /* Suppressed by a rule, and those the baseline holds: listed with
     * their stacks folded. */
    const sup = D.suppressed || [], box = $('cw-suppressed');
    const make = (f, open, cls) => {
      const d = f.class === 'violation' ? violationEl(f, open, cls) : leakEl(f, open, cls);
      d.setAttribute('data-suppressed-by', f.suppressed_by);
      d.insertBefore(el('p', 'cw-sub', f.suppressed_by === 'baseline' ?
        'In the baseline ' + (D.baseline || '') : 'Suppressed by ' + f.suppressed_by), d.children[1]);
      return d;
    };
    const byRule = sup.filter((f) => f.suppressed_by !== 'baseline');
    const inBase = sup.filter((f) => f.suppressed_by === 'baseline');
    box.append(el('h3', null, 'Suppressed by a rule (' + count(byRule.length, 'group', 'groups') + ')'));
    const used = D.suppressions_used || [];
    if (used.length) {
      const t = el('table', 'cw-rules');
      add(t, el('caption', null, 'The rules that matched'));
      const hr = el('tr');
      for (const h of ['rule', 'from', 'matched', 'bytes']) {
        const th = el('th', null, h);
        th.scope = 'col';
        hr.append(th);
      }
      add(t, add(el('thead'), hr));
      const tb = el('tbody');
      for (const u of used) {
        const r = el('tr');
        add(r, el('td', null, u.rule), el('td', null, u.origin),
          el('td', 'cw-n', atLeast(u, 'count') + fmt(u.count)), el('td', 'cw-n', bytes(u.bytes, u, 'bytes')));
        tb.append(r);
      }
      box.append(add(t, tb));
    }
    list(box, byRule, make, 'Nothing suppressed.', 'cw-quiet');
    box.append(el('h3', null, 'In the baseline (' + count(inBase.length, 'group', 'groups') + ')'));
    list(box, inBase, make, D.baseline ? 'Nothing in the baseline was seen again.' :
      'No baseline given (--baseline).', 'cw-quiet');
  }

  /* ---- Processes ----------------------------------------------------- */

  function exitText(ex) {
    if (ex.status != null && ex.status >= 0) return (ex.how || 'exit') + ' ' + ex.status;
    return (ex.how && ex.how !== 'exit' ? ex.how + ', ' : '') + 'exit status unknown';
  }
  function processes() {
    const procs = D.processes || [];
    const lostBox = $('cw-lost');
    for (const l of D.lost_processes || []) {
      const e = l.end || {};
      lostBox.append(el('p', 'cw-lost', 'Lost: process ' + l.pid + ' (' + (l.command || []).join(' ') +
        ') used CUDA under the shim and left no report: ' + (e.how === 'signal' ? 'killed by signal ' + e.status :
          e.how === 'exit' ? 'exited with ' + e.status : e.how === 'running' ?
            'still running when the audit ended' : 'end unknown')));
    }
    for (const p of procs)
      if (p.incomplete)
        lostBox.append(el('p', 'cw-lost', 'Incomplete: the report of pid ' + p.pid + ' left ' +
          count(p.incomplete.parts_left_out, 'part', 'parts') + ' out (' + p.incomplete.reason + ')'));

    const hasHost = procs.some((p) => p.host), hasRank = procs.some((p) => rankOf(p) !== null);
    /* [header, value for sorting, text, numeric] */
    const cols = [
      ['pid', (p) => p.pid, null, true],
      ['parent', (p) => p.ppid, null, true],
      hasHost ? ['host', (p) => p.host || '', null, false] : null,
      hasRank ? ['rank', (p) => (rankOf(p) !== null ? rankOf(p) : -1), (p) => (rankOf(p) !== null ? String(rankOf(p)) : ''), true] : null,
      ['command', (p) => (p.command || []).join(' ') || p.exe || '', null, false],
      ['exit', (p) => exitText(p.exit || {}), null, false],
      ['CUDA activity', (p) => (p.mode === 'library' ? 'libcuwarden' : (p.coverage || {}).hooks_active ? 'hooks active' :
        p.cuda_active === false ? 'none' : 'findings'), null, false],
      ['allocations', (p) => (p.coverage || {}).allocations || 0, (p) => fmt((p.coverage || {}).allocations || 0), true],
      ['leaked bytes', (p) => (p.summary || {}).leaked_bytes || 0, (p) => fmt((p.summary || {}).leaked_bytes || 0), true],
      ['violations', (p) => (p.summary || {}).violations || 0, (p) => fmt((p.summary || {}).violations || 0), true],
    ].filter(Boolean);

    const box = $('cw-processes');
    const idle = procs.filter((p) => p.cuda_active === false);
    const t = el('table', 'cw-procs');
    t.id = 'cw-procs';
    const cap = el('caption');
    t.append(cap);
    const hr = el('tr'), tb = el('tbody');
    cols.forEach((c, i) => {
      const th = el('th'), b = el('button', 'cw-sort', c[0]);
      th.scope = 'col';
      th.setAttribute('aria-sort', 'none');
      b.type = 'button';
      b.setAttribute('data-col', String(i));
      b.addEventListener('click', () => sortBy(i));
      hr.append(add(th, b));
    });
    add(t, add(el('thead'), hr), tb);
    const rows = procs.map((p) => {
      const r = el('tr');
      r.setAttribute('data-pid', String(p.pid));
      r.setAttribute('data-cuda', p.cuda_active === false ? 'no' : 'yes');
      for (const c of cols) {
        const v = c[1](p);
        r.append(el('td', c[3] ? 'cw-n' : c[0] === 'command' ? 'cw-cmd' : null, c[2] ? c[2](p) : String(v)));
      }
      return { r, p };
    });
    let showIdle = false, sorted = -1, desc = false;
    function fill() {
      tb.textContent = '';
      for (const { r, p } of rows) {
        r.hidden = !showIdle && p.cuda_active === false;
        tb.append(r);
      }
      cap.textContent = count(procs.length, 'process', 'processes') + (idle.length ? '; ' +
        count(idle.length, 'process', 'processes') + ' without CUDA activity ' + (showIdle ? 'shown' : 'hidden') : '') +
        '. Click a column\'s header to sort.';
    }
    function sortBy(i) {
      desc = sorted === i ? !desc : false;
      sorted = i;
      const key = cols[i][1], num = cols[i][3];
      rows.sort((a, b) => {
        const x = key(a.p), y = key(b.p);
        const c = num ? x - y : String(x).localeCompare(String(y));
        return desc ? -c : c;
      });
      hr.querySelectorAll('th').forEach((th, j) =>
        th.setAttribute('aria-sort', j === i ? (desc ? 'descending' : 'ascending') : 'none'));
      t.setAttribute('data-sorted', cols[i][0] + (desc ? ' descending' : ' ascending'));
      fill();
    }
    if (idle.length) {
      const lab = el('label', 'cw-toggle'), cb = el('input');
      cb.type = 'checkbox';
      cb.id = 'cw-show-idle';
      cb.addEventListener('change', () => { showIdle = cb.checked; fill(); });
      box.append(add(lab, cb, ' Show the ' + count(idle.length, 'process', 'processes') +
        ' without CUDA activity'));
    }
    fill();
    box.append(add(el('div', 'cw-table-box'), t));
  }

  /* ---- Parts in files of their own --------------------------------- */

  /* Each script before this one (oom.js, peak.js) pushed a function onto
   * window.cwParts; each is called with the helpers it draws with. */
  function parts() {
    const H = { D, el, add, fmt, human, bytes, count, pct, base, when, pathEl, ownerEl,
      stackBox, frameName, cudart, color };
    for (const part of window.cwParts || []) part(H);
  }

  banner();
  summary();
  owners();
  ranks();
  draw(root);
  findings();
  processes();
  parts();
  document.body.setAttribute('data-rendered', 'yes');
})();
