#include "preamble.h"

/*
 * report_text.c -- the report as text, valgrind/compute-sanitizer-like
 * (report_int.h): the leak groups and violations with their stacks, the
 * modules those stacks name, then the summary lines.
 *
 * Invariants: every name it prints (a module path, an owner, an entry
 * point, an argument) is escaped: a newline or an escape sequence in one
 * never starts a line or reaches a terminal.
 */

#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "driver.h"
#include "jobinfo.h"
#include "ledger.h"
#include "log.h"
#include "nowait.h"
#include "report_int.h"
#include "stackdepot.h"
#include "stats.h"
#include "teardown.h"
#include "violation.h"

/* A name in the text report, of n bytes: control characters (C0, DEL
 * and the C1 range U+0080-U+009F), backslashes and bytes that are no
 * valid UTF-8 written as escapes (\n, \t, \r, \\, \xNN), so that a name
 * can neither start a line that looks like the report's own nor send a
 * terminal an escape sequence. */
static void
w_tstrn(wr_t *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t k = c < 0x80 ? 1 : report_utf8_len(s + i, n - i);

		if (c == '\\') {
			report_puts(w, "\\\\");
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': report_puts(w, "\\n"); break;
			case '\t': report_puts(w, "\\t"); break;
			case '\r': report_puts(w, "\\r"); break;
			default: report_printf(w, "\\x%02x", c); break;
			}
		} else if (k == 0 || (k == 2 && c == 0xc2 && s[i + 1] < 0xa0)) {
			/* Not UTF-8, or a C1 control (CSI is U+009B):
			 * each byte as itself in hex. */
			size_t m = k == 0 ? 1 : k;

			for (size_t j = 0; j < m; j++)
				report_printf(w, "\\x%02x", s[i + j]);
			i += m;
			continue;
		} else {
			report_putn(w, str + i, k);
			i += k;
			continue;
		}
		i++;
	}
}

void
report_text_str(wr_t *w, const char *s)
{
	w_tstrn(w, s != NULL ? s : "?", strlen(s != NULL ? s : "?"));
}

/* "rank R of N, " (or "rank R, ") when a launcher gave a rank. */
static void
text_job(wr_t *w)
{
	const jobinfo_t *j = jobinfo_get();

	if (j->rank < 0)
		return;
	report_printf(w, "rank %ld", j->rank);
	if (j->world_size >= 0)
		report_printf(w, " of %ld", j->world_size);
	report_puts(w, ", ");
}

static void
text_arg(const char *a, size_t n, size_t i, void *arg)
{
	wr_t *w = arg;

	if (i > 0)
		report_puts(w, " ");
	w_tstrn(w, a, n);
}

void
report_text_stack(wr_t *w, stack_id_t id, const char *indent, modset_t *seen)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	size_t n = stack_get(id, fr, STACK_MAX_DEPTH);

	for (size_t i = 0; i < n; i++)
		if (fr[i].module < REPORT_TEXT_MODULES)
			seen->bits[fr[i].module / 64] |=
			    1ULL << (fr[i].module % 64);

	if (n == 0) {
		report_printf(w, "%s(no stack)\n", indent);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		stack_module_t m;
		const char *name = "?";

		if (fr[i].module != UINT32_MAX &&
		    !stack_module_get(fr[i].module, &m)) {
			const char *slash = strrchr(m.path, '/');

			name = slash != NULL ? slash + 1 : m.path;
			if (*name == '\0')
				name = "?";
		}
		if (fr[i].module == UINT32_MAX) {
			report_printf(w, "%s#%-2zu 0x%lx\n", indent, i,
			    (unsigned long)fr[i].offset);
		} else {
			report_printf(w, "%s#%-2zu ", indent, i);
			report_text_str(w, name);
			report_printf(w, "+0x%lx\n",
			    (unsigned long)fr[i].offset);
		}
	}
}

void
report_text_modules(wr_t *w, const modset_t *seen)
{
	bool any = false;

	/* Where the frames' modules are, for addr2line -e <path>
	 * <offset - 1> (offsets are return addresses). */
	for (uint32_t m = 0; m < REPORT_TEXT_MODULES; m++) {
		stack_module_t mod;

		if (!(seen->bits[m / 64] & (1ULL << (m % 64))) ||
		    stack_module_get(m, &mod))
			continue;
		if (!any)
			report_puts(w, "modules:\n");
		any = true;
		report_puts(w, "    ");
		report_text_str(w, mod.path);
		if (mod.build_id[0] != '\0')
			report_printf(w, " (build-id %s)", mod.build_id);
		report_puts(w, "\n");
	}
	if (any)
		report_puts(w, "\n");
}

void
report_write_text(wr_t *w, const report_meta_t *meta, const proc_t *p,
    const leaks_t *L, const vcollect_t *V)
{
	const leak_t *lv = (const leak_t *)(const void *)L->ls.p;
	const group_t *gv = (const group_t *)(const void *)L->gs.p;
	const violation_t *vv = (const violation_t *)(const void *)V->s.p;
	uint64_t nviol = violation_count();
	/* Leaks: the live ones and those only teardown freed. */
	uint64_t nleaks = L->count[REPORT_CAT_LEAK] +
	    L->count[REPORT_CAT_TEARDOWN];
	uint64_t bytes;
	bool bytes_sat = L->saturated[REPORT_CAT_LEAK] ||
	    L->saturated[REPORT_CAT_TEARDOWN] ||
	    __builtin_add_overflow(L->bytes[REPORT_CAT_LEAK],
	    L->bytes[REPORT_CAT_TEARDOWN], &bytes);

	stats_coverage_t cov;
	modset_t seen;

	if (bytes_sat)
		bytes = UINT64_MAX;
	memset(&seen, 0, sizeof(seen));

	report_printf(w, "cuwarden " PACKAGE_VERSION " report: pid %d "
	    "(parent %d), ", (int)getpid(), (int)getppid());
	text_job(w);
	report_printf(w, "mode %s, ",
	    meta->mode != NULL ? meta->mode : "library");
	report_printf(w, "%s",
	    meta->exit_how != NULL ? meta->exit_how : "request");
	if (report_is_snapshot(meta))
		report_printf(w, " %d of the running process (its live "
		    "allocations, not leaks at exit)", meta->exit_status);
	else if (meta->exit_status >= 0)
		report_printf(w, " status %d", meta->exit_status);
	report_puts(w, "\ncommand: ");
	report_proc_args(p, text_arg, w);
	report_coverage_read(&cov);
	report_printf(w, "\ncoverage: hooks %s, %'llu allocations and %'llu "
	    "frees seen, %'llu untracked frees\n\n",
	    cov.hooks_active ? "active" : "inactive",
	    (unsigned long long)cov.allocations,
	    (unsigned long long)cov.frees,
	    (unsigned long long)cov.untracked_frees);

	for (size_t g = 0; g < L->ngroups; g++) {
		const leak_t *l = &lv[gv[g].first];
		const char *own = report_owner_str(l->owner);

		if (l->cat == REPORT_CAT_RANGE)
			report_printf(w, "%'llu bytes%s in %'llu address "
			    "range%s of %'llu bytes never freed",
			    (unsigned long long)gv[g].bytes,
			    gv[g].saturated ? " (the sum overflowed)" : "",
			    (unsigned long long)gv[g].count,
			    gv[g].count == 1 ? "" : "s",
			    (unsigned long long)l->size);
		else
			report_printf(w, "%'llu bytes%s in %'llu %s "
			    "allocation%s of %'llu bytes %s",
			    (unsigned long long)gv[g].bytes,
			    gv[g].saturated ? " (the sum overflowed)" : "",
			    (unsigned long long)gv[g].count,
			    report_kname(l->kind), gv[g].count == 1 ? "" : "s",
			    (unsigned long long)l->size,
			    l->cat == REPORT_CAT_TEARDOWN ?
			    "freed only by context teardown" : "leaked");
		if (l->device >= 0)
			report_printf(w, " on device %d", l->device);
		report_puts(w, " (");
		report_text_str(w, l->api);
		if (*own != '\0') {
			report_puts(w, ", owner ");
			report_text_str(w, own);
		}
		report_printf(w, ", first at 0x%lx)\n", (unsigned long)l->base);
		report_text_stack(w, l->stack, "    ", &seen);
		report_puts(w, "\n");
	}
	for (size_t i = 0; i < V->n; i++) {
		const violation_t *v = &vv[i];
		const char *en =
		    driver_error_name_builtin((CUresult)v->cuda_error);

		report_printf(w, "%s: ", violation_name(v->type));
		report_text_str(w, v->api);
		report_printf(w, "(0x%lx)", (unsigned long)v->address);
		if (v->kind >= 0 && v->kind < KIND_COUNT)
			report_printf(w, " on %s memory of %'llu bytes",
			    report_kname(v->kind),
			    (unsigned long long)v->size);
		else if (violation_family(v) >= 0)
			report_printf(w, ", a free of %s memory",
			    report_kname(violation_family(v)));
		if (v->device >= 0)
			report_printf(w, ", device %d", v->device);
		if (v->owner != 0) {
			report_puts(w, ", owner ");
			report_text_str(w, report_owner_str(v->owner));
		}
		/* The library's form; ungrouped, so that the commas of
		 * the interval stay the only ones. */
		if (v->type == V_OUT_OF_BOUNDS)
			report_printf(w, ", range [%zu, %zu + %zu)", v->off,
			    v->off, v->len);
		if (v->cuda_error != 0) {
			if (en != NULL)
				report_printf(w, ", driver returned %s", en);
			else
				report_printf(w, ", driver returned %d",
				    v->cuda_error);
		}
		report_puts(w, "\n");
		report_text_stack(w, v->stack, "    ", &seen);
		if (v->alloc_stack != 0) {
			report_puts(w, "  allocated at:\n");
			report_text_stack(w, v->alloc_stack, "    ", &seen);
		}
		if (v->free_stack != 0) {
			report_puts(w, "  freed at:\n");
			report_text_stack(w, v->free_stack, "    ", &seen);
		}
		report_puts(w, "\n");
	}
	report_text_modules(w, &seen);
	if (nviol > V->n)
		report_printf(w, "(%'llu more violations not kept)\n\n",
		    (unsigned long long)(nviol - V->n));
	if (ledger_failures() > 0)
		report_printf(w, "FAILED FREES: %'llu (%'llu addresses kept, "
		    "%'llu not kept)\n", (unsigned long long)ledger_failures(),
		    (unsigned long long)ledger_size(),
		    (unsigned long long)ledger_overflow());
	if (stack_dropped() > 0)
		report_printf(w, "STACKS NOT KEPT: %llu new stacks (the stack "
		    "depot is full; their records show no stack)\n",
		    (unsigned long long)stack_dropped());
	if (log_lost_count() > 0)
		report_printf(w, "LOG LINES LOST: %llu (the log could not take "
		    "them at once; cuwarden never waits for it)\n",
		    log_lost_count());
	if (bytes_sat)
		report_printf(w, "LEAKED BYTES: the sum overflowed: at least "
		    "%'llu bytes\n", (unsigned long long)bytes);
	if (nowait_active() && nowait_skipped() != 0)
		report_printf(w, "INCOMPLETE: %llu part%s left out: the "
		    "program exited from a signal handler that interrupted a "
		    "CUDA call holding the shim's locks\n",
		    (unsigned long long)nowait_skipped(),
		    nowait_skipped() == 1 ? "" : "s");
	if (L->count[REPORT_CAT_TEARDOWN] > 0 || teardown_dropped() > 0)
		report_printf(w, "FREED ONLY BY CONTEXT TEARDOWN: %'llu bytes "
		    "in %'llu allocations (counted as leaks; %'llu more not "
		    "kept)\n",
		    (unsigned long long)L->bytes[REPORT_CAT_TEARDOWN],
		    (unsigned long long)L->count[REPORT_CAT_TEARDOWN],
		    (unsigned long long)teardown_dropped());
	if (L->count[REPORT_CAT_RANGE] > 0)
		report_printf(w, "ADDRESS RANGES NEVER FREED: %'llu bytes of "
		    "address space in %'llu ranges (not memory: not counted "
		    "as leaks)\n",
		    (unsigned long long)L->bytes[REPORT_CAT_RANGE],
		    (unsigned long long)L->count[REPORT_CAT_RANGE]);
	report_printf(w, "LEAK SUMMARY: %'llu bytes leaked in %'llu "
	    "allocations\n", (unsigned long long)bytes,
	    (unsigned long long)nleaks);
	report_printf(w, "ERROR SUMMARY: %'llu errors (%'llu leaked "
	    "allocations, %'llu violations)\n", (unsigned long long)(nleaks + nviol),
	    (unsigned long long)nleaks, (unsigned long long)nviol);
}
