/* html_mem_probe.js -- check_oom_outputs.sh appends this to a copy of a
 * page with an OOM report and a peak, after the page's scripts.  It reads
 * what the browser drew of the "Out of memory" and "Peak memory"
 * sections and measures their layout, then writes what it found into
 * <pre id="cw-probe">, one "key=value" a line, for --dump-dom. */
'use strict';
(function () {
  const out = [];
  const put = (k, v) => out.push(k + '=' + v);
  const q = (s) => document.querySelector(s);
  const qa = (s) => Array.from(document.querySelectorAll(s));
  const yes = (b) => (b ? 'yes' : 'no');
  const shown = (e) => !!e && !e.hidden && e.getBoundingClientRect().height > 0;
  try {
    /* Out of memory: shown, first of the sections, above the summary. */
    const oom = q('#cw-sec-oom'), sum = q('#cw-sec-summary');
    put('oom_shown', yes(shown(oom)));
    put('oom_first', yes(q('main section:not([hidden])') === oom &&
      oom.getBoundingClientRect().bottom <= sum.getBoundingClientRect().top));
    put('oom_nav', yes(shown(q('#cw-nav-oom'))));
    put('oom_heading', q('#cw-h-oom').textContent);
    const art = q('.cw-oom');
    put('oom_title', art.querySelector('h3').textContent);
    for (const f of qa('.cw-oom-facts [data-fact]'))
      put('oom_fact_' + f.dataset.fact, f.querySelector('dd').textContent);
    const req = art.querySelector('details.cw-stack-box');
    put('oom_request_open', yes(req.open));
    put('oom_request_frames', Array.from(req.querySelectorAll('li')).map((l) =>
      l.textContent.replace(/^0x[0-9a-f]+: /, '').replace(/ .*/, '')).join(','));
    const live = qa('.cw-oom-live tbody tr');
    put('oom_live_bytes', live.map((r) => r.dataset.bytes).join(','));
    put('oom_live_row0', Array.from(live[0].children).slice(0, 6).map((c) => c.textContent).join(' | '));
    put('oom_live_owner_title', live[0].querySelector('.cw-path') ? live[0].querySelector('.cw-path').title : '');
    put('oom_live_stacks', live.map((r) => {
      const li = Array.from(r.querySelectorAll('.cw-stack li')).map((l) => l.textContent);
      return (li.find((t) => /site_[ab]/.test(t)) || '?').replace(/^0x[0-9a-f]+: /, '').replace(/ .*/, '');
    }).join(','));
    put('oom_recent', qa('.cw-oom-recent tbody tr').map((r) => r.dataset.event).join(','));
    put('oom_recent_last', Array.from(qa('.cw-oom-recent tbody tr').pop().children).slice(0, 5)
      .map((c) => c.textContent).join(' | '));
    /* The tables fit the page or scroll in their own box. */
    const mainW = q('main').getBoundingClientRect().width;
    put('oom_fits', yes(qa('#cw-sec-oom .cw-table-box').every((b) =>
      b.getBoundingClientRect().width <= mainW + 1)));

    /* Peak memory: one device, its table and icicle graph. */
    const pk = q('#cw-sec-peaks');
    put('peak_shown', yes(shown(pk)));
    put('peak_nav', yes(shown(q('#cw-nav-peaks'))));
    const dev = qa('.cw-peak');
    put('peak_devices', dev.map((d) => d.dataset.device + ':' + d.dataset.bytes).join(','));
    put('peak_title', dev[0].querySelector('h3').textContent.replace(/ at [0-9.]+ s/, ' at T s'));
    put('peak_sub', dev[0].querySelector('.cw-sub').textContent);
    const rows = Array.from(dev[0].querySelectorAll('.cw-peak-table tbody tr'));
    put('peak_rows', rows.map((r) => r.dataset.bytes + '@' + r.querySelector('.cw-site').textContent).join(','));
    put('peak_row0', Array.from(rows[0].children).slice(0, 4).map((c) => c.textContent).join(' | '));
    const cells = Array.from(dev[0].querySelectorAll('.cw-pcell'));
    put('peak_root', cells[0].dataset.name + '@' + cells[0].dataset.bytes + '@' + cells[0].dataset.percent);
    const byName = (n) => cells.find((c) => c.dataset.name === n);
    for (const n of ['main', 'site_a', 'site_b', 'device memory'])
      put('peak_cell_' + n.replace(' ', '_'), byName(n) ? byName(n).dataset.bytes + '@' + byName(n).dataset.percent : 'none');
    /* Cells laid out: site_b's width is 8/11 of the root's, below main. */
    const R = cells[0].getBoundingClientRect(), B = byName('site_b').getBoundingClientRect();
    const M = byName('main').getBoundingClientRect();
    put('peak_width_ratio', (B.width / R.width).toFixed(2));
    put('peak_below_main', yes(B.top >= M.bottom - 1 && B.left >= M.left - 1 && B.right <= M.right + 1));
    const spans = cells.flatMap((c) => Array.from(c.querySelectorAll('span'))).filter((s) =>
      s.getBoundingClientRect().width > 0 && getComputedStyle(s).visibility !== 'hidden');
    put('peak_font_min', Math.min(...spans.map((s) => parseFloat(getComputedStyle(s).fontSize))));
    put('peak_title_attr', byName('site_b').title);
  } catch (e) {
    put('error', e && e.stack ? e.stack.replace(/\n/g, ' | ') : String(e));
  }
  const pre = document.createElement('pre');
  pre.id = 'cw-probe';
  pre.textContent = '\n' + out.join('\n') + '\n';
  document.body.append(pre);
})();
