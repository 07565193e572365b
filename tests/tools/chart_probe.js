/* chart_probe.js -- check_timeline_series.sh appends this to a copy of a
 * page, after the page's own script: it reads the memory-over-time
 * charts (chart.js) and works them as a user would (hover at the peak,
 * the by-stack toggle), then writes what it found into <pre
 * id="cw-probe">, one "key=value" a line, for --dump-dom. */
'use strict';
(function () {
  const out = [];
  const put = (k, v) => out.push(k + '=' + v);
  const qa = (s, r) => Array.from((r || document).querySelectorAll(s));
  try {
    const figs = () => qa('figure.cw-chart');
    put('charts', figs().length);
    put('devices', figs().map((f) => f.dataset.pid + ':' + f.dataset.device).join(','));
    put('series', figs().map((f) => f.dataset.series).join(','));
    put('bands', figs().map((f) => qa('path.cw-band', f).length).join(','));
    put('peaks', figs().map((f) => f.querySelector('.cw-chart-peak').dataset.bytes).join(','));
    /* Hover at the first chart's peak: the tooltip, its bytes. */
    const f = figs()[0], s = f.querySelector('svg');
    const c = f.querySelector('.cw-chart-peak circle').getBoundingClientRect();
    const x = c.left + c.width / 2, y = c.top + c.height / 2 + 6;
    s.dispatchEvent(new MouseEvent('mousemove', { clientX: x, clientY: y, bubbles: true }));
    const tip = f.querySelector('.cw-chart-tip');
    put('tip_shown', tip.hidden ? 'no' : 'yes');
    put('tip_bytes', tip.dataset.bytes);
    put('tip_band', tip.dataset.band);
    put('tip_text', tip.innerText.replace(/\n/g, ' | '));
    s.dispatchEvent(new MouseEvent('mouseleave'));
    put('tip_hidden_after', tip.hidden ? 'yes' : 'no');
    /* By stack. */
    document.getElementById('cw-chart-stack').click();
    put('mode_after', figs()[0].dataset.mode);
    put('series_by_stack', figs().map((f) => f.dataset.series).join(','));
    put('legend_by_stack', qa('.cw-legend li', figs()[0]).map((l) => l.textContent).join(';'));
    put('growing', qa('.cw-growing li').map((l) => l.textContent).join(';'));
  } catch (e) {
    put('error', e && e.stack ? e.stack.replace(/\n/g, ' | ') : String(e));
  }
  const pre = document.createElement('pre');
  pre.id = 'cw-probe';
  pre.textContent = '\n' + out.join('\n') + '\n';
  document.body.append(pre);
})();
