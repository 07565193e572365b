/* peak.js -- the page's "Peak memory" section (doc/audit.md, "The HTML
 * page"): for each device of each process with a timeline, what was
 * live at the peak, from the merged document's "peaks" and #cw-stacks
 * (their stacks symbolized), as a table by stack, largest first, and as
 * an icicle graph of nested cells.  Registered in window.cwParts; page.js
 * calls it with its helpers (H).  Strings are set as text. */
'use strict';
(window.cwParts = window.cwParts || []).push(function peakPart(H) {
  const { D, el, add, fmt, human, bytes, count, pct, stackBox, frameName, cudart, color } = H;
  const peaks = D.peaks || [];
  const devs = peaks.reduce((n, p) => n + (p.devices || []).length +
    ((p.after_limit && p.after_limit.devices) || []).length, 0);
  if (!devs) return;
  const STK = JSON.parse(document.getElementById('cw-stacks').textContent || '{}');
  const ROW = 30;

  function rawStack(p, st) {
    return (st || []).map((f) => {
      const m = (p.modules || [])[f.module];
      return { module: m ? m.path : null, offset: f.offset };
    });
  }
  /* The first frame the program wrote, for the table: past the CUDA
   * runtime's frames, the static one's (by their symbols) and the shared
   * one's (libcudart.so*, whose calls to the driver PyTorch, CuPy and
   * most programs allocate through: every row would read libcudart). */
  function site(st) {
    const name = (f) => f.function || H.base(f.module) + '+' + f.offset;
    for (const f of st || [])
      if (!cudart(f) && !/^libcudart\.so/.test(H.base(f.module || ''))) return name(f);
    return st && st.length ? name(st[0]) : '(no stack recorded)';
  }
  function secs(ns) {
    return (Number(ns) / 1e9).toFixed(3) + ' s';
  }

  /* The icicle's tree: each group's bytes down its stack, outermost
   * frame (main, where the stack has it) first, the kind last; what the
   * top groups leave of the peak is one cell of its own. */
  function tree(d, stacks) {
    const node = (name) => ({ name, value: 0, kids: new Map() });
    const root = node(d.host ? 'host memory at the peak' : 'device ' + d.device + ' at the peak');
    root.value = d.bytes;
    let shown = 0;
    (d.top || []).forEach((g, i) => {
      const st = stacks[i] || [], names = [];
      let top = st.length - 1;
      for (let m = 0; m < st.length; m++)
        if (st[m].function === 'main') { top = m; break; }
      for (let k = top; k >= 0; k--) {
        const f = st[k];
        if (cudart(f)) continue;
        names.push(frameName(f) + '\u0000' + (f.module || ''));
        for (let j = (f.inlined || []).length - 1; j >= 0; j--)
          names.push((f.inlined[j].function || '(unknown)') + ' [inlined]\u0000' + (f.module || ''));
      }
      names.push(g.kind + ' memory\u0000');
      let n = root;
      for (const key of names) {
        if (!n.kids.has(key)) n.kids.set(key, node(key.split('\u0000')[0]));
        n = n.kids.get(key);
        n.value += g.bytes;
      }
      shown += g.bytes;
    });
    if (d.bytes > shown) {
      const rest = node('other groups (' + fmt(d.groups - (d.top || []).length) + ')');
      rest.value = d.bytes - shown;
      root.kids.set('\u0001rest', rest);
    }
    return root;
  }
  function depth(n) {
    let m = 0;
    for (const k of n.kids.values()) m = Math.max(m, depth(k));
    return m + 1;
  }
  function icicle(root) {
    const g = el('div', 'cw-pgraph');
    g.style.height = depth(root) * ROW + 'px';
    function put(n, x, row, w) {
      if (w * 1000 < 0.5) return;
      const c = el('div', 'cw-pcell');
      const text = n.name + ': ' + bytes(n.value) + ', ' + pct(n.value, root.value) + ' of the peak';
      c.setAttribute('data-name', n.name);
      c.setAttribute('data-bytes', String(n.value));
      c.setAttribute('data-percent', pct(n.value, root.value));
      c.style.left = 100 * x + '%';
      c.style.width = 100 * w + '%';
      c.style.top = row * ROW + 'px';
      c.style.height = ROW - 2 + 'px';
      c.style.background = n === root ? '#b8c0cc' : color(n.name);
      c.title = text;
      c.tabIndex = 0;
      c.setAttribute('aria-label', text);
      add(c, el('span', 'cw-cell-name', n.name),
        el('span', 'cw-cell-num', human(n.value) + ' \u00b7 ' + pct(n.value, root.value)));
      g.append(c);
      let cx = x;
      for (const k of Array.from(n.kids.values()).sort((a, b) => b.value - a.value)) {
        const cw = n.value ? w * k.value / n.value : 0;
        put(k, cx, row + 1, cw);
        cx += cw;
      }
    }
    put(root, 0, 0, 1);
    return g;
  }

  /* A table of groups by stack: three figures of each (nums), its kind,
   * the first frame and the stack folded; a row's data-bytes its bytes. */
  function groupTable(caption, heads, top, stacks, nums) {
    const t = el('table', 'cw-mem-table cw-peak-table'), hr = el('tr');
    add(t, el('caption', null, caption));
    for (const h of heads.concat(['kind', 'allocated in', 'stack'])) {
      const th = el('th', null, h);
      th.scope = 'col';
      hr.append(th);
    }
    add(t, add(el('thead'), hr));
    const tb = el('tbody');
    (top || []).forEach((g, i) => {
      const r = el('tr');
      r.setAttribute('data-bytes', String(g.bytes));
      for (const v of nums(g)) r.append(el('td', 'cw-n', v));
      add(r, el('td', null, g.kind), el('td', 'cw-site', site(stacks[i])),
        add(el('td', 'cw-stack-cell'), stackBox('Allocated at', stacks[i], false)));
      tb.append(r);
    });
    return add(el('div', 'cw-table-box'), add(t, tb));
  }

  function deviceEl(p, d, stacks) {
    const a = el('article', 'cw-finding cw-peak');
    a.setAttribute('data-pid', String(p.pid));
    a.setAttribute('data-device', String(d.device));
    a.setAttribute('data-bytes', String(d.bytes));
    add(a, el('h3', null, (d.host ? 'Host memory' : 'Device ' + d.device) + ': ' + bytes(d.bytes) +
      ' at ' + secs(d.time_ns) + (peaks.length > 1 ? ' (' + (Number.isInteger(p.rank) ?
        'rank ' + p.rank + ', ' : '') + 'pid ' + p.pid + ')' : '')),
      el('p', 'cw-sub', 'Live then: ' + count(d.allocations, 'allocation', 'allocations') + ' in ' +
        count(d.groups, 'group', 'groups') + ' by stack' + (p.exact === false ? '; not exact: ' +
          count(p.dropped, 'event', 'events') + (p.after_limit ? ' came past CUWARDEN_TIMELINE_LIMIT (below)' :
          ' of the timeline dropped') : '')));
    a.append(groupTable('Bytes live at the peak by stack, largest first' +
      (d.groups > (d.top || []).length ? ' (the ' + fmt((d.top || []).length) + ' largest of ' +
        fmt(d.groups) + ' groups)' : ''), ['bytes', 'share', 'allocations'], d.top, stacks,
      (g) => [bytes(g.bytes), pct(g.bytes, d.bytes), fmt(g.count)]));
    a.append(add(el('div', 'cw-picicle'), icicle(tree(d, stacks))));
    return a;
  }

  /* A device past CUWARDEN_TIMELINE_LIMIT (the peaks' after_limit): its
   * sampled maximum and the stacks that held most since the limit. */
  function pastEl(p, al, d, stacks) {
    const a = el('article', 'cw-finding cw-peak cw-peak-past');
    a.setAttribute('data-pid', String(p.pid));
    a.setAttribute('data-device', String(d.device));
    a.setAttribute('data-bytes', String(d.max_bytes));
    add(a, el('h3', null, (d.host ? 'Host memory' : 'Device ' + d.device) + ' past the limit: at most ' +
      bytes(d.max_bytes) + ', about ' + secs(d.max_time_ns) + ' (sampled)' + (peaks.length > 1 ? ' (pid ' +
        p.pid + ')' : '')),
      el('p', 'cw-sub', count(al.events, 'event', 'events') + ' came past CUWARDEN_TIMELINE_LIMIT (the file\'s last at ' +
        secs(al.since_ns) + '): summed, not written. Live ' + bytes(d.at_limit_bytes) + ' at the limit, ' +
        bytes(d.end_bytes) + ' at the last event.' + (al.lost > 0 ? ' ' + count(al.lost, 'event', 'events') +
          ' more were dropped.' : '')));
    a.append(groupTable('Each stack\'s most live bytes since the limit, largest first',
      ['at most', 'at the limit', 'at the end'], d.top, stacks,
      (g) => [bytes(g.bytes), bytes(g.at_limit_bytes), bytes(g.end_bytes)]));
    return a;
  }

  const box = document.getElementById('cw-peaks');
  peaks.forEach((p, i) => {
    const sym = ((STK.peaks || [])[i] || {}).devices || [];
    const n = (p.devices || []).length;
    (p.devices || []).forEach((d, k) => {
      const stacks = (d.top || []).map((g, j) => (sym[k] && sym[k][j]) || rawStack(p, g.stack));
      box.append(deviceEl(p, d, stacks));
    });
    const al = p.after_limit;
    ((al && al.devices) || []).forEach((d, k) => {
      const stacks = (d.top || []).map((g, j) => (sym[n + k] && sym[n + k][j]) || rawStack(p, g.stack));
      box.append(pastEl(p, al, d, stacks));
    });
  });
  document.getElementById('cw-sec-peaks').hidden = false;
  document.getElementById('cw-nav-peaks').hidden = false;
});
