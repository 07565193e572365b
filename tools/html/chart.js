/* chart.js -- the page's "Memory over time" section (doc/audit.md, "The
 * HTML page"): for each process's timeline and device of the merged
 * document's "timelines", an SVG chart of live bytes over time, stacked
 * by owner or by stack (a toggle), the peak marked, a tooltip under the
 * cursor.  Registered in window.cwParts; page.js calls it with its
 * helpers (H).  Every string is set as text, never as markup. */
'use strict';
(window.cwParts = window.cwParts || []).push((function () {
  const NS = 'http://www.w3.org/2000/svg';
  const H = 260, PADL = 78, PADR = 16, PADT = 22, PADB = 34;
  const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2',
    '#edc948', '#b07aa1', '#ff9da7', '#9c755f'];
  const OTHER = '#bab0ac';

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fmt(n) {
    return String(Math.round(Number(n) || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  function human(n) {
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let v = Number(n) || 0, i = -1;
    if (v < 1024) return fmt(v) + ' B';
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    let s = v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0);
    if (s.indexOf('.') >= 0) s = s.replace(/\.?0+$/, '');
    return s + ' ' + units[i];
  }
  function secs(ns) {
    const s = ns / 1e9;
    return (s < 10 ? s.toFixed(3) : s < 1000 ? s.toFixed(1) : s.toFixed(0)) + ' s';
  }
  function base(p) {
    return String(p).replace(/^.*\//, '');
  }
  /* A stack's name: its frame in its owner's module (the owner's call
   * into CUDA), else its first frame; function, else module+offset. */
  function stackName(st) {
    const fr = st.stack || [];
    const f = fr.find((x) => st.owner && x.module === st.owner) || fr[0];
    if (!f) return 'no stack';
    const where = f.file ? ' (' + base(f.file) + (f.line ? ':' + f.line : '') + ')' : '';
    return (f.function || base(f.module || '?') + '+' + f.offset) + where;
  }

  /* The series of a device in mode ('owner' or 'stack'): names, colours,
   * values per point. */
  function seriesOf(T, d, mode) {
    const list = mode === 'stack' ? d.stacks : d.owners;
    return list.map((s, i) => {
      const other = mode === 'stack' ? s.stack == null : s.owner == null;
      let name;
      if (other) name = mode === 'stack' ? 'other stacks' : 'other owners';
      else if (mode === 'stack') name = stackName(T.stacks[s.stack]);
      else name = s.owner === '' ? '(no owner)' : base(s.owner);
      return { name: name, title: mode === 'owner' && !other ? s.owner : name,
        color: other ? OTHER : COLORS[i % COLORS.length], v: s.bytes };
    }).filter((s) => s.v.some((x) => x > 0));
  }

  /* Step areas: a point's values hold until the next point. */
  function areaPath(xs, lo, hi, x0, xEnd, y) {
    let top = 'M' + x0 + ',' + y(0);
    for (let i = 0; i < xs.length; i++)
      top += 'H' + xs[i] + 'V' + y(hi[i]);
    top += 'H' + xEnd + 'V' + y(lo[lo.length - 1]);
    for (let i = xs.length - 1; i >= 0; i--)
      top += 'H' + xs[i] + 'V' + y(i > 0 ? lo[i - 1] : 0);
    return top + 'H' + x0 + 'Z';
  }

  function ticks(max, n) {
    if (max <= 0) return [0];
    const raw = max / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
    const out = [];
    for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
    return out;
  }
  /* Bytes ticks on powers of two: 1, 2, 4 or 8 times a unit. */
  function byteTicks(max) {
    if (max <= 0) return [0];
    let step = 1;
    while (max / step > 5) step *= 2;
    const out = [];
    for (let v = 0; v <= max; v += step) out.push(v);
    return out;
  }

  /* The process of a timeline: "rank 3 (pid 4242)" in a job (with its
   * host when the job spans several), else "pid 4242". */
  let manyHosts = false;
  function who(T) {
    if (!Number.isInteger(T.rank)) return 'pid ' + T.pid;
    return 'rank ' + T.rank + ' (pid ' + T.pid + (manyHosts && T.host ? ' on ' + T.host : '') + ')';
  }

  function chart(T, d, mode, W) {
    const fig = el('figure', 'cw-chart');
    const times = d.time_ns, tot = d.bytes, n = times.length;
    /* Past CUWARDEN_TIMELINE_LIMIT: sampled points, drawn as a dashed
     * line over the file's areas. */
    const sm = d.sampled || { time_ns: [], bytes: [] }, ns = sm.time_ns.length;
    /* A little past the last event: its drop stays visible. */
    const dur = Math.max(T.duration_ns || 0, n ? times[n - 1] : 0, ns ? sm.time_ns[ns - 1] : 0, 1) * 1.02;
    const ser = seriesOf(T, d, mode);
    const ymax = Math.max(d.peak_bytes, 1, ...sm.bytes) * 1.08;
    const x = (t) => +(PADL + (W - PADL - PADR) * t / dur).toFixed(2);
    const y = (b) => +(PADT + (H - PADT - PADB) * (1 - b / ymax)).toFixed(2);
    const where = d.host ? 'host memory' : 'device ' + d.device;
    fig.dataset.pid = T.pid;
    fig.dataset.device = d.device;
    fig.dataset.series = ser.length;
    fig.dataset.mode = mode;
    fig.dataset.rank = Number.isInteger(T.rank) ? String(T.rank) : '';
    fig.append(el('figcaption', null, where + ' of ' + who(T) + ' (' + base(T.exe) +
      '): peak ' + fmt(d.peak_bytes) + ' bytes (' + human(d.peak_bytes) + ') at ' +
      secs(d.peak_time_ns) + (ns ? '; past CUWARDEN_TIMELINE_LIMIT (dashed, sampled as the events came in): at most ' +
        fmt(Math.max(...sm.bytes)) + ' bytes' : '')));
    const s = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H,
      role: 'img', class: 'cw-chart-svg' });
    s.setAttribute('aria-label', 'Live bytes over time on ' + where + ', by ' + mode);
    /* Axes and grid. */
    for (const b of byteTicks(ymax)) {
      s.append(svg('line', { x1: PADL, x2: W - PADR, y1: y(b), y2: y(b), class: 'cw-grid' }));
      const t = svg('text', { x: PADL - 6, y: y(b) + 4, 'text-anchor': 'end', class: 'cw-axis' });
      t.textContent = human(b);
      s.append(t);
    }
    for (const tn of ticks(dur, 6)) {
      const t = svg('text', { x: x(tn), y: H - PADB + 16, 'text-anchor': tn ? 'middle' : 'start',
        class: 'cw-axis' });
      t.textContent = secs(tn);
      s.append(t);
    }
    /* The stacked areas. */
    const xs = times.map(x);
    let lo = new Array(n).fill(0);
    ser.forEach((sr, k) => {
      const hi = lo.map((v, i) => v + (sr.v[i] || 0));
      const p = svg('path', { d: areaPath(xs, lo, hi, x(0), x(dur), y), fill: sr.color,
        class: 'cw-band' });
      p.dataset.series = k;
      const tt = svg('title', {});
      tt.textContent = sr.title;
      p.append(tt);
      s.append(p);
      sr.lo = lo;
      sr.hi = hi;
      lo = hi;
    });
    if (ns) {
      let p = '';
      sm.time_ns.forEach((t, i) => { p += (i ? 'H' + x(t) + 'V' : 'M' + x(t) + ',') + y(sm.bytes[i]); });
      const sl = svg('path', { d: p, class: 'cw-chart-sampled', fill: 'none' });
      sl.dataset.points = ns;
      const tt = svg('title', {});
      tt.textContent = 'past CUWARDEN_TIMELINE_LIMIT: sampled, at most ' + human(Math.max(...sm.bytes));
      sl.append(tt);
      s.append(sl);
    }
    /* The peak. */
    const pk = svg('g', { class: 'cw-chart-peak' });
    pk.dataset.bytes = d.peak_bytes;
    pk.dataset.timeNs = d.peak_time_ns;
    pk.append(svg('line', { x1: x(d.peak_time_ns), x2: x(d.peak_time_ns), y1: PADT,
      y2: H - PADB, class: 'cw-chart-peak-line' }));
    pk.append(svg('circle', { cx: x(d.peak_time_ns), cy: y(d.peak_bytes), r: 4 }));
    const pl = svg('text', { x: Math.min(x(d.peak_time_ns) + 6, W - PADR - 120),
      y: PADT - 6, class: 'cw-chart-peak-label' });
    pl.textContent = 'peak ' + human(d.peak_bytes);
    pk.append(pl);
    s.append(pk);
    const cursor = svg('line', { y1: PADT, y2: H - PADB, class: 'cw-cursor',
      visibility: 'hidden' });
    s.append(cursor);
    fig.append(s);
    /* The legend. */
    const leg = el('ul', 'cw-legend');
    for (const sr of ser) {
      const li = el('li');
      const sw = el('span', 'cw-swatch');
      sw.style.background = sr.color;
      li.title = sr.title;
      li.append(sw, document.createTextNode(sr.name));
      leg.append(li);
    }
    fig.append(leg);
    /* Hover: the point in force at the cursor's time, and the band under
     * it. */
    const tip = el('div', 'cw-tip cw-chart-tip');
    tip.setAttribute('role', 'tooltip');
    tip.hidden = true;
    fig.append(tip);
    s.addEventListener('mousemove', (ev) => {
      const m = s.getScreenCTM(), pt = s.createSVGPoint();
      pt.x = ev.clientX;
      pt.y = ev.clientY;
      const q = m ? pt.matrixTransform(m.inverse()) : pt;
      const px = q.x, py = q.y;
      const t = (px - PADL) / (W - PADL - PADR) * dur;
      /* The point in force where the cursor's pixel starts, or a higher
       * one inside the pixel: a peak is an instant, narrower than a
       * pixel, and must show. */
      const half = 1.5 * dur / (W - PADL - PADR);
      let i = -1;
      for (let lo2 = 0, hi2 = n - 1; lo2 <= hi2;) {
        const mid = (lo2 + hi2) >> 1;
        if (times[mid] <= t - half) { i = mid; lo2 = mid + 1; } else hi2 = mid - 1;
      }
      for (let j = i + 1; j < n && times[j] <= t + half; j++)
        if (i < 0 || tot[j] > tot[i]) i = j;
      if (t < 0 || t > dur) { tip.hidden = true; cursor.setAttribute('visibility', 'hidden'); return; }
      const b = i >= 0 ? tot[i] : 0;
      const at = ymax * (1 - (py - PADT) / (H - PADT - PADB));
      const band = i >= 0 ? ser.find((sr) => at >= sr.lo[i] && at < sr.hi[i]) : null;
      tip.replaceChildren(el('div', null, secs(t)),
        el('div', 'cw-tip-total', fmt(b) + ' bytes (' + human(b) + ') live'));
      if (band)
        tip.append(el('div', null, band.name + ': ' + fmt(band.hi[i] - band.lo[i]) + ' bytes (' +
          human(band.hi[i] - band.lo[i]) + ')'));
      tip.dataset.bytes = b;
      tip.dataset.band = band ? band.name : '';
      tip.hidden = false;
      tip.style.left = (ev.clientX + 14) + 'px'; /* .cw-tip is fixed */
      tip.style.top = (ev.clientY + 14) + 'px';
      cursor.setAttribute('x1', px);
      cursor.setAttribute('x2', px);
      cursor.setAttribute('visibility', 'visible');
    });
    s.addEventListener('mouseleave', () => {
      tip.hidden = true;
      cursor.setAttribute('visibility', 'hidden');
    });
    return fig;
  }

  /* The charts into the section, a toggle on top; the section and its
   * link stay hidden without timelines. */
  return function memoryPart(H) {
    const TL = H.D.timelines || [];
    const box = document.getElementById('cw-memory');
    if (!TL.length) return;
    manyHosts = new Set(TL.map((T) => T.host).filter(Boolean)).size > 1;
    document.getElementById('cw-sec-memory').hidden = false;
    document.getElementById('cw-nav-memory').hidden = false;
    let mode = 'owner';
    const bar = el('div', 'cw-chart-mode');
    const charts = el('div', 'cw-charts');
    function draw() {
      const W = Math.max(480, Math.min(1100, (box.clientWidth || 900) - 8));
      charts.replaceChildren();
      for (const T of TL)
        for (const d of T.devices)
          charts.append(chart(T, d, mode, W));
      const grow = TL.flatMap((T) => (T.growing || []).map((g) => [T, g]));
      if (grow.length) {
        const ul = el('ul', 'cw-growing');
        for (const [T, g] of grow)
          ul.append(el('li', null, 'Growing on ' + (g.host ? 'host memory' : 'device ' + g.device) +
            ' (' + who(T) + '): ' + stackName(T.stacks[g.stack]) + ', ' + human(g.first_bytes) +
            ' → ' + human(g.last_bytes) + ', rose in ' + g.increases + ' of ' +
            (g.samples.length - 1) + ' intervals'));
        charts.append(el('h3', null, 'Growing stacks'), ul);
      }
    }
    for (const [m, label] of [['owner', 'By owner'], ['stack', 'By stack']]) {
      const lab = el('label', 'cw-toggle'), rb = el('input');
      rb.type = 'radio';
      rb.name = 'cw-chart-mode';
      rb.value = m;
      rb.id = 'cw-chart-' + m;
      rb.checked = m === mode;
      rb.addEventListener('change', () => { mode = m; draw(); });
      bar.append(lab);
      lab.append(rb, ' ' + label);
    }
    box.append(bar, charts);
    draw();
  };
})());
