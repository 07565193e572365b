/* oom.js -- the page's "Out of memory" section (doc/audit.md, "The
 * HTML page"), first when a process ran out of device memory: from the
 * merged document's "oom" (the shim's OOM reports) and #cw-stacks (their
 * stacks symbolized).  Registered in window.cwParts; page.js calls it
 * with its helpers (H) once the rest is drawn.  Strings are set as text,
 * never as markup. */
'use strict';
(window.cwParts = window.cwParts || []).push(function oomPart(H) {
  const { D, el, add, fmt, bytes, count, pct, stackBox, ownerEl } = H;
  const ooms = D.oom || [];
  if (!ooms.length) return;
  const STK = JSON.parse(document.getElementById('cw-stacks').textContent || '{}');

  /* A frame as the shim wrote it (a module index, an offset), in the
   * findings' shape: for a stack the tool did not symbolize. */
  function rawStack(doc, st) {
    return (st || []).map((f) => {
      const m = (doc.modules || [])[f.module];
      return { module: m ? m.path : null, offset: f.offset };
    });
  }
  function cell(tag, cls, text) {
    const c = el(tag, cls, text);
    if (tag === 'th') c.scope = 'col';
    return c;
  }
  function table(cls, caption, heads) {
    const t = el('table', 'cw-mem-table ' + cls), hr = el('tr');
    add(t, el('caption', null, caption));
    for (const h of heads) hr.append(cell('th', null, h));
    add(t, add(el('thead'), hr));
    return t;
  }

  function oomEl(doc, sym) {
    const q = doc.request || {}, mem = doc.device_memory || {}, live = doc.live || {};
    const d = el('article', 'cw-finding cw-oom');
    d.setAttribute('data-pid', String(doc.pid));
    d.setAttribute('data-request-bytes', String(q.size));
    let h = 'pid ' + doc.pid + ': ' + (q.api || '?') + ' of ' + bytes(q.size) +
      (q.kind ? ' of ' + q.kind + ' memory' : '');
    if (q.device >= 0) h += ' on device ' + q.device;
    h += ' failed (' + (q.cuda_error || '?') + ')';
    d.append(el('h3', null, h));
    if (doc.command && doc.command.length)
      d.append(el('p', 'cw-sub', doc.command.join(' ') + (doc.time ? ' \u00b7 ' + H.when(doc.time) : '')));

    /* The device as the driver saw it, the pools' cache, the live set. */
    const facts = el('dl', 'cw-oom-facts');
    function fact(key, label, value) {
      const f = el('div');
      f.setAttribute('data-fact', key);
      facts.append(add(f, el('dt', null, label), el('dd', null, value)));
    }
    if (Number.isInteger(mem.free))
      fact('device_free', 'Device free', bytes(mem.free) + ' of ' + bytes(mem.total) +
        ' (' + pct(mem.free, mem.total) + ')');
    else
      fact('device_free', 'Device free', 'unknown (' + (mem.error || '?') + ')');
    if (Number.isInteger(doc.pool_cached_bytes))
      fact('pool_cached', 'Cached by the pools', bytes(doc.pool_cached_bytes) +
        ' (free to the program, not to the driver)');
    fact('live', 'Live', (live.bytes_saturated ? 'at least ' : '') + bytes(live.bytes) + ' in ' +
      count(live.allocations, 'allocation', 'allocations') + ', ' +
      count(live.groups, 'group', 'groups') + ' by owner and stack' +
      (live.complete === false ? ' (incomplete: not all could be copied)' : ''));
    d.append(facts);
    d.append(stackBox('Requested at', sym ? sym.request : rawStack(doc, q.stack), true));

    /* The live set by owner and stack, largest first (the shim's order). */
    const top = live.top || [];
    if (top.length) {
      const t = table('cw-oom-live', 'The live set: ' + count(top.length, 'group', 'groups') +
        (live.groups > top.length ? ' of ' + fmt(live.groups) + ' (the largest)' : '') +
        ', largest first', ['bytes', 'share', 'allocations', 'kind', 'api', 'device', 'owner', 'stack']);
      const tb = el('tbody');
      top.forEach((g, i) => {
        const r = el('tr');
        r.setAttribute('data-bytes', String(g.bytes));
        const st = sym && sym.live[i] ? sym.live[i] : rawStack(doc, g.stack);
        add(r, el('td', 'cw-n', bytes(g.bytes)), el('td', 'cw-n', pct(g.bytes, live.bytes)),
          el('td', 'cw-n', fmt(g.count)), el('td', null, g.kind), el('td', null, g.api),
          el('td', 'cw-n', g.device >= 0 ? String(g.device) : 'host'),
          add(el('td'), ownerEl(g.owner)), add(el('td', 'cw-stack-cell'), stackBox('Allocated at', st, false)));
        tb.append(r);
      });
      d.append(add(el('div', 'cw-table-box'), add(t, tb)));
    }

    /* The last allocations and frees before the request. */
    const recent = doc.recent || [];
    if (recent.length) {
      const t = table('cw-oom-recent', 'The last ' + count(recent.length, 'allocation or free',
        'allocations and frees') + ', oldest first', ['#', 'event', 'api', 'kind', 'bytes', 'device', 'address']);
      const tb = el('tbody');
      for (const e of recent) {
        const r = el('tr', 'cw-ev-' + e.event);
        r.setAttribute('data-event', e.event);
        add(r, el('td', 'cw-n', String(e.seq)), el('td', null, e.event), el('td', null, e.api),
          el('td', null, e.kind), el('td', 'cw-n', fmt(e.size)),
          el('td', 'cw-n', e.device >= 0 ? String(e.device) : 'host'), el('td', 'cw-addr', e.address));
        tb.append(r);
      }
      d.append(add(el('div', 'cw-table-box'), add(t, tb)));
    }
    return d;
  }

  const box = document.getElementById('cw-oom');
  ooms.forEach((doc, i) => box.append(oomEl(doc, (STK.oom || [])[i])));
  document.getElementById('cw-h-oom').textContent = 'Out of memory (' +
    count(ooms.length, 'process', 'processes') + ')';
  document.getElementById('cw-sec-oom').hidden = false;
  document.getElementById('cw-nav-oom').hidden = false;
});
