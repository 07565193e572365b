/* html_probe.js -- check_html.sh appends this to a copy of a page, after
 * the page's own script.  It measures what the browser laid out and
 * works the controls as a user would, then writes what it found into
 * <pre id="cw-probe">, one "key=value" a line, for --dump-dom. */
'use strict';
(function () {
  const out = [];
  const put = (k, v) => out.push(k + '=' + v);
  const q = (s) => document.querySelector(s);
  const qa = (s) => Array.from(document.querySelectorAll(s));
  const yes = (b) => (b ? 'yes' : 'no');
  try {
    put('width', innerWidth);

    /* The icicle graph: the text drawn in its cells, and whether the
     * graph scrolls sideways. */
    const spans = qa('.cw-cell span').filter((s) =>
      s.getBoundingClientRect().width > 0 && getComputedStyle(s).visibility !== 'hidden');
    put('icicle_labels', spans.length);
    put('icicle_font_min', Math.min(...spans.map((s) => parseFloat(getComputedStyle(s).fontSize))));
    put('icicle_line_min', Math.min(...spans.map((s) => Math.round(s.getBoundingClientRect().height))));
    const box = q('#cw-icicle'), graph = q('#cw-graph');
    put('icicle_graph_px', Math.round(graph.getBoundingClientRect().width));
    put('icicle_scrolls', yes(box.scrollWidth > box.clientWidth + 1));

    /* The longest owner: cut from the left, its file name whole. */
    const bar = qa('.cw-bar').sort((a, b) => b.dataset.owner.length - a.dataset.owner.length)[0];
    const path = bar.querySelector('.cw-path'), dir = path.querySelector('.cw-dir');
    const base = path.querySelector('.cw-base');
    const pr = path.getBoundingClientRect(), dr = dir.getBoundingClientRect();
    const br = base.getBoundingClientRect();
    put('owner_title', path.title);
    put('owner_base', base.textContent);
    put('owner_cut', yes(dir.scrollWidth > dir.clientWidth));
    put('owner_base_whole', yes(base.scrollWidth <= base.clientWidth + 1 &&
      br.left >= pr.left - 1 && br.right <= pr.right + 1 && br.width > 0));
    const t = dir.querySelector('bdi').firstChild, n = t.length, r = document.createRange();
    r.setStart(t, n - 4); r.setEnd(t, n);
    const tail = r.getBoundingClientRect();
    r.setStart(t, 0); r.setEnd(t, 4);
    const head = r.getBoundingClientRect();
    put('owner_dir_end_shown', yes(tail.left >= dr.left - 1 && tail.right <= dr.right + 1));
    put('owner_dir_start_cut', yes(head.right <= dr.left + 1));

    /* The tooltip follows the cursor. */
    const cell = qa('.cw-cell')[1], cr = cell.getBoundingClientRect();
    const x = Math.round(cr.left + 20), y = Math.round(cr.top + 10);
    cell.dispatchEvent(new MouseEvent('mousemove', { clientX: x, clientY: y, bubbles: true }));
    const tip = q('#cw-tip'), tr = tip.getBoundingClientRect();
    put('tip_shown', yes(!tip.hidden));
    put('tip_text', tip.innerText.replace(/\n/g, ' | '));
    put('tip_near', yes(Math.abs(tr.left - x) < 40 && Math.abs(tr.top - y) < 40));
    cell.dispatchEvent(new MouseEvent('mouseleave'));
    put('tip_hidden_after', yes(tip.hidden));

    /* A click zooms in, a click on the top row zooms out. */
    const name = cell.dataset.name;
    cell.click();
    put('zoom_in', yes(q('#cw-graph').dataset.zoom === name));
    q('#cw-graph .cw-cell').click();
    put('zoom_out', q('#cw-graph').dataset.zoom);
    /* Enter on a cell zooms too, and the focus goes to the top row. */
    const keyed = qa('.cw-cell')[1], keyedName = keyed.dataset.name;
    keyed.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    put('zoom_key', yes(q('#cw-graph').dataset.zoom === keyedName &&
      document.activeElement === q('#cw-graph').firstChild));
    q('#cw-graph .cw-cell').click();

    /* Processes: those without CUDA activity hidden until asked for;
     * sorted by a header's button. */
    const pids = (hidden) => qa('#cw-procs tbody tr').filter((e) => e.hidden === hidden)
      .map((e) => e.dataset.pid).join(',');
    put('procs_hidden', pids(true));
    const cb = q('#cw-show-idle');
    if (cb) cb.click();
    put('procs_hidden_after_toggle', pids(true));
    const sortBtn = (label) => qa('#cw-procs th button').find((b) => b.textContent === label);
    const bytesBtn = sortBtn('leaked bytes');
    bytesBtn.click();
    put('sort_bytes_1', pids(false));
    put('sort_bytes_1_aria', bytesBtn.parentNode.getAttribute('aria-sort'));
    bytesBtn.click();
    put('sort_bytes_2', pids(false));
    put('sort_bytes_2_aria', bytesBtn.parentNode.getAttribute('aria-sort'));
    sortBtn('pid').click();
    put('sort_pid', pids(false));
    put('sort_bytes_aria_after', bytesBtn.parentNode.getAttribute('aria-sort'));
  } catch (e) {
    put('error', e && e.stack ? e.stack.replace(/\n/g, ' | ') : String(e));
  }
  const pre = document.createElement('pre');
  pre.id = 'cw-probe';
  pre.textContent = '\n' + out.join('\n') + '\n';
  document.body.append(pre);
})();
