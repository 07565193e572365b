/*
 * render_html.c -- one self-contained HTML page: the merged document is
 * embedded as JSON (every '<' written as \u003c, so nothing in it can end
 * the script element) and drawn by the inline script: summary cards,
 * leaked bytes by owner (bars), leaked bytes by stack (an icicle graph in
 * inline SVG, outermost frame on top, click to zoom), the leak and
 * violation groups with their stacks, the processes.  No external script,
 * style, font or image; a Content-Security-Policy forbids any network
 * fetch, so the page works offline and is safe to attach to CI runs.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

static const char page_head[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
"style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
"<title>cuwarden-audit report</title>\n<style>\n"
"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;"
"color:#1d2330;background:#f6f7f9}\n"
"header{background:#1d2330;color:#fff;padding:14px 24px}\n"
"header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#c9cfdb;"
"font-family:ui-monospace,monospace;font-size:13px;word-break:break-all}\n"
"main{padding:8px 24px 40px;max-width:1400px}\n"
"h2{font-size:16px;margin:24px 0 8px}\n"
".cw-cards{display:flex;flex-wrap:wrap;gap:10px}\n"
".cw-card{background:#fff;border:1px solid #dde1e8;border-radius:6px;"
"padding:10px 14px;min-width:150px}\n"
".cw-card .cw-num{display:block;font-size:22px;font-weight:600}\n"
".cw-card .cw-label{color:#5b6475;font-size:12px}\n"
".cw-card.cw-bad .cw-num{color:#b3261e}.cw-card.cw-ok .cw-num{color:#1e7b34}\n"
".cw-status{margin:12px 0 0;font-weight:600}\n"
".cw-bar{display:flex;align-items:center;margin:3px 0}\n"
".cw-bar .cw-bar-name{width:380px;overflow:hidden;text-overflow:ellipsis;"
"white-space:nowrap;font-family:ui-monospace,monospace;font-size:12px}\n"
".cw-bar .cw-bar-fill{height:16px;background:#d9534f;border-radius:2px;"
"margin-right:8px;min-width:2px}\n"
"#cw-icicle svg{background:#fff;border:1px solid #dde1e8;width:100%}\n"
".cw-cell{stroke:#fff;stroke-width:.5;cursor:pointer}\n"
".cw-cell-label{font:11px ui-monospace,monospace;pointer-events:none;"
"fill:#1d2330}\n"
"#cw-tip{font-family:ui-monospace,monospace;font-size:12px;min-height:18px;"
"color:#394150}\n"
".cw-finding{background:#fff;border:1px solid #dde1e8;border-left:4px "
"solid #d9534f;border-radius:4px;margin:8px 0;padding:8px 12px}\n"
".cw-finding.cw-violation{border-left-color:#8e44ad}\n"
".cw-finding h3{margin:0 0 6px;font-size:14px}\n"
".cw-stack{margin:2px 0 6px;padding-left:22px;font-family:ui-monospace,"
"monospace;font-size:12px}\n"
".cw-stack .cw-inl{color:#7a4f9a}.cw-stack .cw-nodbg{color:#6b7280}\n"
".cw-sub{font-size:12px;color:#5b6475;margin:4px 0 0}\n"
"table{border-collapse:collapse;background:#fff}td,th{border:1px solid "
"#dde1e8;padding:4px 8px;font-size:12px;text-align:left}\n"
".cw-none{color:#5b6475;font-style:italic}\n"
"</style>\n</head>\n<body>\n"
"<header><h1>cuwarden-audit report</h1><p id=\"cw-command\"></p></header>\n"
"<main>\n"
"<section><h2>Summary</h2><div id=\"cw-summary\" class=\"cw-cards\"></div>"
"<p id=\"cw-status\" class=\"cw-status\"></p><p id=\"cw-coverage\" "
"class=\"cw-sub\"></p></section>\n"
"<section><h2>Leaked bytes by owner</h2><div id=\"cw-owners\"></div>"
"</section>\n"
"<section><h2>Leaked bytes by stack</h2><p class=\"cw-sub\">Icicle graph: "
"the program's outermost frames on top, the allocating call at the bottom; "
"width is leaked bytes.  Click a cell to zoom, the top row to zoom out."
"</p><div id=\"cw-icicle\"></div><div id=\"cw-tip\"></div></section>\n"
"<section><h2>Leaks</h2><div id=\"cw-leaks\"></div></section>\n"
"<section><h2>Violations</h2><div id=\"cw-violations\"></div></section>\n"
"<section><h2>Processes</h2><div id=\"cw-processes\"></div></section>\n"
"</main>\n<script type=\"application/json\" id=\"cw-data\">";

static const char page_tail[] =
"</script>\n<script>\n"
"'use strict';\n"
"(function () {\n"
"var D = JSON.parse(document.getElementById('cw-data').textContent);\n"
"var S = D.summary, C = D.coverage;\n"
"function fmt(n) { return Number(n).toLocaleString('en-US'); }\n"
"function el(tag, cls, text) { var e = document.createElement(tag);\n"
"  if (cls) e.className = cls; if (text != null) e.textContent = text;\n"
"  return e; }\n"
"function base(p) { return p ? String(p).replace(/^.*\\//, '') : '?'; }\n"
"function frameName(f) { return f.function || (base(f.module) + '+' + "
"f.offset); }\n"
"function frameText(f, inl) {\n"
"  var t = inl ? (inl.function || '?\?\?') : (f.function || '?\?\?');\n"
"  var file = inl ? inl.file : f.file, line = inl ? inl.line : f.line;\n"
"  if (file && line > 0) t += ' (' + base(file) + ':' + line + ')';\n"
"  else t += ' (in ' + (f.module || 'unknown module') + (f.note ? ', ' + "
"f.note : '') + ')';\n"
"  return f.offset + ': ' + t + (inl ? ' [inlined]' : ''); }\n"
"document.getElementById('cw-command').textContent =\n"
"  (D.command && D.command.length ? D.command.join(' ') : 'saved reports') +"
"\n  ' \\u2014 ' + D.tool;\n"
"var cards = [\n"
"  ['leaked_bytes', S.leaked_bytes, 'bytes leaked', S.leaked_bytes > 0],\n"
"  ['leaked_allocations', S.leaked_allocations, 'allocations leaked', "
"S.leaked_allocations > 0],\n"
"  ['leak_groups', S.leak_groups, 'leak groups', S.leak_groups > 0],\n"
"  ['violations', S.violations, 'violations', S.violations > 0],\n"
"  ['errors', S.errors, 'errors', S.errors > 0],\n"
"  ['suppressed_bytes', S.suppressed_bytes, 'bytes suppressed', false],\n"
"  ['processes', C.processes, 'processes audited', false],\n"
"  ['allocations', C.allocations, 'allocations seen', false]];\n"
"var sum = document.getElementById('cw-summary');\n"
"cards.forEach(function (c) {\n"
"  var d = el('div', 'cw-card ' + (c[3] ? 'cw-bad' : (c[0] === 'errors' ? "
"'cw-ok' : '')));\n"
"  d.setAttribute('data-key', c[0]); d.setAttribute('data-value', "
"String(c[1]));\n"
"  d.appendChild(el('span', 'cw-num', fmt(c[1])));\n"
"  d.appendChild(el('span', 'cw-label', c[2])); sum.appendChild(d); });\n"
"document.getElementById('cw-status').textContent = S.errors > 0 ?\n"
"  'LEAK SUMMARY: ' + S.leaked_bytes + ' bytes leaked in ' + "
"S.leaked_allocations + ' allocations (' + S.leak_groups + ' groups); ' +"
"\n  'ERROR SUMMARY: ' + S.errors + ' errors (' + S.leaked_allocations + "
"' leaks, ' + S.violations + ' violations)' : 'No leaks or violations "
"reported.';\n"
"document.getElementById('cw-coverage').textContent = 'Coverage: ' + "
"C.processes + ' process(es) audited, ' + C.allocations + ' allocations "
"seen, hooks active in ' + C.hooks_active_processes +\n"
"  (C.untracked_frees ? ', ' + C.untracked_frees + ' untracked frees' : '') +"
"\n  (C.hooks_active ? '' : ': no CUDA activity seen') +\n"
"  (S.suppressed_leaks || S.suppressed_violations ? '. Suppressed: ' + "
"S.suppressed_bytes + ' bytes in ' + S.suppressed_leaks + ' allocations, ' "
"+ S.suppressed_violations + ' violations' : '') + '.';\n"
/* owners */
"var owners = {}, total = 0;\n"
"D.leaks.forEach(function (l) { var o = l.owner || '(unknown owner)';\n"
"  owners[o] = (owners[o] || 0) + l.bytes; total += l.bytes; });\n"
"var ob = document.getElementById('cw-owners');\n"
"var onames = Object.keys(owners).sort(function (a, b) { return owners[b] "
"- owners[a]; });\n"
"if (!onames.length) ob.appendChild(el('p', 'cw-none', 'Nothing leaked.'));"
"\n"
"onames.forEach(function (o) { var r = el('div', 'cw-bar');\n"
"  r.setAttribute('data-owner', o);\n"
"  var n = el('span', 'cw-bar-name', o); n.title = o; r.appendChild(n);\n"
"  var f = el('span', 'cw-bar-fill'); f.style.width = Math.max(0.3, "
"60 * owners[o] / total) + '%'; r.appendChild(f);\n"
"  r.appendChild(el('span', null, fmt(owners[o]) + ' bytes')); "
"ob.appendChild(r); });\n"
/* icicle */
"function node(name) { return { name: name, value: 0, kids: {}, order: [] };"
" }\n"
"var root = node('all leaked bytes');\n"
"D.leaks.forEach(function (l) { var n = root; n.value += l.bytes;\n"
"  var names = [], top = l.stack.length - 1;\n"
"  for (var m = 0; m < l.stack.length; m++) if (l.stack[m].function === "
"'main') { top = m; break; }\n"
"  for (var i = top; i >= 0; i--) { var f = l.stack[i];\n"
"    names.push(frameName(f));\n"
"    if (f.inlined) for (var k = f.inlined.length - 1; k >= 0; k--)\n"
"      names.push((f.inlined[k].function || '(unknown)') + ' [inlined]'); }\n"
"  names.push(l.kind + ' ' + l.api);\n"
"  names.forEach(function (nm) { if (!n.kids[nm]) { n.kids[nm] = node(nm); "
"n.order.push(nm); }\n"
"    n = n.kids[nm]; n.value += l.bytes; }); });\n"
"function depth(n) { var d = 0; n.order.forEach(function (k) { "
"d = Math.max(d, depth(n.kids[k])); }); return d + 1; }\n"
"var SVGNS = 'http://www.w3.org/2000/svg', W = 1200, H = 20;\n"
"function color(name) { var h = 0; for (var i = 0; i < name.length; i++) "
"h = (h * 31 + name.charCodeAt(i)) >>> 0;\n"
"  return 'hsl(' + (10 + h % 40) + ',' + (70 + h % 20) + '%,' + (55 + (h >> 8)"
" % 15) + '%)'; }\n"
"var tip = document.getElementById('cw-tip');\n"
"function draw(top) { var box = document.getElementById('cw-icicle');\n"
"  box.textContent = '';\n"
"  if (!root.value) { box.appendChild(el('p', 'cw-none', 'Nothing leaked.'));"
" return; }\n"
"  var rows = depth(top), svg = document.createElementNS(SVGNS, 'svg');\n"
"  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + rows * H);\n"
"  svg.setAttribute('id', 'cw-icicle-svg');\n"
"  function put(n, x, y, w) { if (w < 0.5) return; /* too thin to see */\n"
"    var g = document.createElementNS(SVGNS, 'g');\n"
"    var r = document.createElementNS(SVGNS, 'rect');\n"
"    r.setAttribute('class', 'cw-cell'); r.setAttribute('x', x); "
"r.setAttribute('y', y);\n"
"    r.setAttribute('width', Math.max(w, 0.5)); r.setAttribute('height', H - 1"
");\n"
"    r.setAttribute('fill', n === root ? '#9aa3b2' : color(n.name));\n"
"    r.setAttribute('data-name', n.name); r.setAttribute('data-bytes', "
"n.value);\n"
"    var t = document.createElementNS(SVGNS, 'title');\n"
"    t.textContent = n.name + ': ' + fmt(n.value) + ' bytes'; "
"r.appendChild(t);\n"
"    r.addEventListener('mouseover', function () { tip.textContent = "
"t.textContent; });\n"
"    r.addEventListener('click', function () { draw(n === top ? root : n); "
"});\n"
"    g.appendChild(r);\n"
"    if (w > 40) { var s = document.createElementNS(SVGNS, 'text');\n"
"      s.setAttribute('class', 'cw-cell-label'); s.setAttribute('x', x + 3);"
" s.setAttribute('y', y + 14);\n"
"      var lab = n.name, max = Math.floor((w - 6) / 6.6);\n"
"      s.textContent = lab.length > max ? lab.slice(0, Math.max(0, max - 1)) "
"+ '\\u2026' : lab; g.appendChild(s); }\n"
"    svg.appendChild(g);\n"
"    var cx = x; n.order.forEach(function (k) { var c = n.kids[k];\n"
"      var cw = w * c.value / n.value; put(c, cx, y + H, cw); cx += cw; }); }\n"
"  put(top, 0, 0, W); box.appendChild(svg); }\n"
"draw(root);\n"
/* findings */
"function stackList(st) { var ol = el('ol', 'cw-stack');\n"
"  if (!st || !st.length) { ol.appendChild(el('li', 'cw-none', "
"'(no stack recorded)')); return ol; }\n"
"  st.forEach(function (f) { (f.inlined || []).forEach(function (i) {\n"
"      ol.appendChild(el('li', 'cw-inl', frameText(f, i))); });\n"
"    ol.appendChild(el('li', f.file ? '' : 'cw-nodbg', frameText(f))); });\n"
"  return ol; }\n"
"var lb = document.getElementById('cw-leaks');\n"
"if (!D.leaks.length) lb.appendChild(el('p', 'cw-none', 'No leaks "
"reported.'));\n"
"var LIMIT = 500;\n"
"function more(box, list) { if (list.length > LIMIT) box.appendChild(el('p', "
"'cw-none', (list.length - LIMIT) + ' more groups: see the JSON "
"document (--json).')); }\n"
"D.leaks.slice(0, LIMIT).forEach(function (l) { var d = el('div', "
"'cw-finding cw-leak');\n"
"  d.setAttribute('data-fingerprint', l.fingerprint);\n"
"  d.appendChild(el('h3', null, fmt(l.bytes) + ' bytes in ' + l.count + ' ' +"
" l.kind + ' allocation' + (l.count === 1 ? '' : 's') +\n"
"    (l.count > 1 && l.size ? ' (' + fmt(l.size) + ' each)' : '') + ' leaked"
" by ' + (l.owner || 'an unknown owner')));\n"
"  d.appendChild(el('p', 'cw-sub', l.api + ', ' + (l.device < 0 && l.devices.length < 2 ? 'host' : 'device ' + l.devices.join(','))"
" + ', pid ' + l.pids.join(',') + ', fingerprint ' + l.fingerprint));\n"
"  d.appendChild(stackList(l.stack)); lb.appendChild(d); });\n"
"more(lb, D.leaks);\n"
"var vb = document.getElementById('cw-violations');\n"
"if (!D.violations.length) vb.appendChild(el('p', 'cw-none', 'No "
"violations reported.'));\n"
"D.violations.slice(0, LIMIT).forEach(function (v) { var d = el('div', 'cw-finding "
"cw-violation');\n"
"  d.setAttribute('data-fingerprint', v.fingerprint);\n"
"  d.appendChild(el('h3', null, v.type + ': ' + v.api + ' of ' + v.address +"
" (v.cuda_error ? ' \\u2192 ' + v.cuda_error : '') + ', ' + v.count + "
"' time' + (v.count === 1 ? '' : 's')));\n"
"  d.appendChild(el('p', 'cw-sub', (v.kind ? v.kind + ' allocation' : "
"'unknown allocation') + (v.size ? ' of ' + fmt(v.size) + ' bytes' : '') + "
"', pid ' + v.pids.join(',')));\n"
"  d.appendChild(stackList(v.stack));\n"
"  if (v.alloc_stack.length) { d.appendChild(el('p', 'cw-sub', "
"'Allocated at:')); d.appendChild(stackList(v.alloc_stack)); }\n"
"  if (v.free_stack.length) { d.appendChild(el('p', 'cw-sub', "
"'First freed at:')); d.appendChild(stackList(v.free_stack)); }\n"
"  vb.appendChild(d); });\n"
"more(vb, D.violations);\n"
"var pt = el('table'), hr = el('tr');\n"
"['pid', 'ppid', 'command', 'exit', 'hooks active', 'allocations', "
"'leaked bytes', 'violations'].forEach(function (h) { hr.appendChild(el('th',"
" null, h)); });\n"
"pt.appendChild(hr);\n"
"D.processes.forEach(function (p) { var r = el('tr'), cv = p.coverage || {},"
" sm = p.summary || {}, ex = p.exit || {};\n"
"  [p.pid, p.ppid, (p.command || []).join(' '), (ex.how || '?') + ' ' + "
"(ex.status != null ? ex.status : ''),\n"
"   cv.hooks_active ? 'yes' : 'no', cv.allocations, sm.leaked_bytes, "
"sm.violations].forEach(function (c) {\n"
"    r.appendChild(el('td', null, c == null ? '' : String(c))); });\n"
"  pt.appendChild(r); });\n"
"document.getElementById('cw-processes').appendChild(pt);\n"
"document.body.setAttribute('data-rendered', 'yes');\n"
"})();\n</script>\n</body>\n</html>\n";

bool
render_html(const au_model_t *m, const au_render_opts_t *o, const char *path)
{
	json_t *doc = render_json_doc(m, o);
	char *s = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	FILE *f;
	const char *p;
	bool bad = false;

	json_decref(doc);
	if (s == NULL) {
		au_error("--html: cannot encode the report");
		return true;
	}
	f = fopen(path, "w");
	if (f == NULL) {
		au_error("cannot write %s: %s", path, strerror(errno));
		free(s);
		return true;
	}
	fputs(page_head, f);
	for (p = s; *p; p++) {
		if (*p == '<')
			fputs("\\u003c", f);
		else
			fputc(*p, f);
	}
	fputs(page_tail, f);
	free(s);
	if (ferror(f))
		bad = true;
	if (fclose(f) != 0)
		bad = true;
	if (bad)
		au_error("cannot write %s: %s", path, strerror(errno));
	return bad;
}
