/*
 * symbolize.c -- turns the raw (module path, build-id, offset) frames of
 * the reports into function, file:line and inlined calls, after the run,
 * with elfutils libdwfl: one offline Dwfl per module file, cached for the
 * tool's life.
 *
 * Invariants: a module is only used when the file at its recorded path
 * has the recorded build-id (else the frame says "build-id mismatch" and
 * keeps module + offset); the offset is the module-relative address the
 * shim recorded (runtime address minus the module's load bias, i.e. the
 * ELF virtual address), so the dwfl address is offset + the module's
 * bias; frames are return addresses, looked up at offset - 1 so the line
 * is the call's, and shown with their recorded offset.  A frame without
 * debug info keeps its ELF symbol when there is one.  Debug info in
 * separate files is found the standard way (.gnu_debuglink,
 * /usr/lib/debug/.build-id/...).
 *
 * Speed: libdwfl's own symbol lookup is a linear scan, so each module's
 * function symbols are sorted once and searched by bisection; and every
 * (module, offset) is resolved once, whatever the number of stacks that
 * share it (a per-module hash of results).
 */
#include "config.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "input.h"
#include "model.h"
#include "path.h"
#include "symbolize.h"
#include "xalloc.h"

typedef struct syment_s {
	GElf_Addr addr; /* dwfl address */
	GElf_Xword size;
	const char *name; /* in the ELF file's string table */
	int rank;         /* GLOBAL 0, WEAK 1, LOCAL 2 */
} syment_t;

typedef struct symmod_s {
	char *path;
	char *build_id;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias; /* dwfl address = ELF vaddr + bias */
	const char *note;
	syment_t *syms;  /* sorted by addr; NULL until first use */
	size_t nsyms;
	bool syms_read;
	au_frame_t **cache; /* offset -> resolved frame, open addressing */
	size_t ncache, capcache;
	struct symmod_s *next;
} symmod_t;

static symmod_t *modules;
static char *debuginfo_path;
static bool demangle_on = true; /* --demangle, for this run */

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static void
hex(const unsigned char *p, int n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static symmod_t *
module_open(const char *path, const char *build_id)
{
	symmod_t *sm;
	const unsigned char *bits;
	GElf_Addr vaddr;
	struct stat st;
	char err[PATH_MAX + 128];
	int n, fd, dfd;

	for (sm = modules; sm != NULL; sm = sm->next)
		if (strcmp(sm->path, path) == 0 &&
		    strcmp(sm->build_id, build_id) == 0)
			return sm;
	sm = xcalloc(1, sizeof(*sm));
	sm->path = xstrdup(path);
	sm->build_id = xstrdup(build_id);
	sm->next = modules;
	modules = sm;
	/* The path comes from a report: it may name a FIFO (an open would
	 * block for ever), a device or a directory.  input_open checks it
	 * is a regular file of a sane size, and libdwfl gets that very file
	 * (a descriptor, never the path again). */
	fd = input_open(path, AU_MAX_MODULE_BYTES, NULL, &st, err,
	    sizeof(err));
	if (fd < 0) {
		sm->note = errno == EINVAL ? "not a regular file" :
		    errno == EFBIG ? "module file too large" :
		    "module file not found";
		return sm;
	}
	sm->dwfl = dwfl_begin(&offline_callbacks);
	if (sm->dwfl == NULL) {
		sm->note = "cannot start libdwfl";
		close(fd);
		return sm;
	}
	/* libdwfl takes the descriptor it is given on success; on failure
	 * it may or may not have closed it: it gets a copy, closed here
	 * only if it is still open on our file. */
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	dwfl_report_begin(sm->dwfl);
	sm->mod = dfd < 0 ? NULL : dwfl_report_offline(sm->dwfl,
	    base_name(path), path, dfd);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (sm->mod == NULL && dfd >= 0 && fcntl(dfd, F_GETFD) >= 0) {
		struct stat ds;

		if (fstat(dfd, &ds) == 0 && ds.st_dev == st.st_dev &&
		    ds.st_ino == st.st_ino)
			close(dfd);
	}
	close(fd);
	if (sm->mod == NULL) {
		sm->note = "not an ELF file";
		return sm;
	}
	n = dwfl_module_build_id(sm->mod, &bits, &vaddr);
	if (build_id[0] != '\0') {
		char have[2 * 64 + 1];

		if (n <= 0 || n > 64) {
			sm->note = "build-id mismatch";
			sm->mod = NULL;
			return sm;
		}
		hex(bits, n, have);
		if (strcmp(have, build_id) != 0) {
			sm->note = "build-id mismatch";
			sm->mod = NULL;
			return sm;
		}
	}
	if (dwfl_module_getelf(sm->mod, &sm->bias) == NULL) {
		sm->note = "cannot read the ELF file";
		sm->mod = NULL;
	}
	return sm;
}

/* C++ names, demangled with the C++ runtime's __cxa_demangle when it is
 * installed (dlopen: the tool does not link libstdc++), unless
 * --demangle=no. */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static char *
demangle(const char *name)
{
	static demangle_fn fn;
	static bool tried;
	char *out;
	int st = -1;

	if (name == NULL || !demangle_on || strncmp(name, "_Z", 2) != 0)
		return name ? xstrdup(name) : NULL;
	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		tried = true;
		if (h != NULL)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
	}
	if (fn == NULL)
		return xstrdup(name);
	out = fn(name, NULL, NULL, &st);
	if (out == NULL || st != 0) {
		free(out);
		return xstrdup(name);
	}
	return out;
}

static char *
die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *s;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) == NULL &&
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) ==
	    NULL && dwarf_attr_integrate(die, DW_AT_name, &attr) == NULL)
		return NULL;
	s = dwarf_formstring(&attr);
	return s ? demangle(s) : NULL;
}

/* file as an absolute path: a relative name (as the compiler was given
 * it) is joined to the compilation unit's directory, so that locations
 * can be made relative to the source tree later, whatever the build
 * directory was.  Returns a new string, or NULL for NULL. */
static char *
src_path(Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute a;
	const char *dir;

	if (file == NULL)
		return NULL;
	char *joined, *real;

	if (file[0] == '/' || cu == NULL ||
	    (dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a))) ==
	    NULL || dir[0] != '/')
		joined = xstrdup(file);
	else
		joined = xasprintf("%s/%s", dir, file);
	/* "build/../src/x.c" -> "/abs/src/x.c" when the file is there. */
	real = realpath(joined, NULL);
	if (real == NULL)
		return joined;
	free(joined);
	return real;
}

static void
add_inline(au_frame_t *f, Dwarf_Die *cu, char *function, const char *file,
    int line)
{
	au_inline_t *in;

	f->inlined = xrealloc(f->inlined,
	    (f->ninlined + 1) * sizeof(*f->inlined));
	in = &f->inlined[f->ninlined++];
	in->function = function;
	in->file = src_path(cu, file);
	in->line = line;
}

/* Walks the scopes at pc: each DW_TAG_inlined_subroutine is a call that
 * the compiler inlined; its call site is where the next outer function
 * stands.  On return *file and *line are the outermost (real) function's. */
static void
inline_chain(symmod_t *sm, Dwarf_Addr pc, au_frame_t *f, const char **file,
    int *line, char **outer_name)
{
	Dwarf_Addr dbias;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int n, i;

	cu = dwfl_module_addrdie(sm->mod, pc, &dbias);
	if (cu == NULL)
		return;
	n = dwarf_getscopes(cu, pc - dbias, &scopes);
	if (n <= 0)
		return;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	for (i = 0; i < n; i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s);

		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute attr;
			Dwarf_Word idx = 0, cl = 0;

			add_inline(f, cu, die_name(s), *file, *line);
			*file = NULL;
			*line = 0;
			if (files != NULL && dwarf_formudata(dwarf_attr(s,
			    DW_AT_call_file, &attr), &idx) == 0)
				*file = dwarf_filesrc(files, idx, NULL, NULL);
			if (dwarf_formudata(dwarf_attr(s, DW_AT_call_line,
			    &attr), &cl) == 0)
				*line = (int)cl;
		} else if (tag == DW_TAG_subprogram) {
			*outer_name = die_name(s);
			break;
		}
	}
	free(scopes);
}

/* ------------------------------------------------------------ symbols */

static int
cmp_sym(const void *a, const void *b)
{
	const syment_t *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank - y->rank;
}

static void
read_symbols(symmod_t *sm)
{
	int i, n;
	size_t k = 0;

	sm->syms_read = true;
	n = dwfl_module_getsymtab(sm->mod);
	if (n <= 0)
		return;
	sm->syms = xcalloc((size_t)n, sizeof(*sm->syms));
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(sm->mod, i, &sym, &addr, &shndx,
		    NULL, NULL);
		if (name == NULL || name[0] == '\0' || sym.st_shndx ==
		    SHN_UNDEF || shndx == (GElf_Word)-1)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		sm->syms[k].addr = addr;
		sm->syms[k].size = sym.st_size;
		sm->syms[k].name = name;
		switch (GELF_ST_BIND(sym.st_info)) {
		case STB_GLOBAL:
			sm->syms[k].rank = 0;
			break;
		case STB_WEAK:
			sm->syms[k].rank = 1;
			break;
		default:
			sm->syms[k].rank = 2;
			break;
		}
		k++;
	}
	qsort(sm->syms, k, sizeof(*sm->syms), cmp_sym);
	sm->nsyms = k;
}

/* The function symbol holding pc, or NULL; *start is its address. */
static const char *
find_symbol(symmod_t *sm, GElf_Addr pc, GElf_Addr *start)
{
	size_t lo = 0, hi, i;

	if (!sm->syms_read)
		read_symbols(sm);
	hi = sm->nsyms;
	if (hi == 0 || pc < sm->syms[0].addr)
		return NULL;
	while (hi - lo > 1) { /* last entry with addr <= pc */
		size_t mid = lo + (hi - lo) / 2;

		if (sm->syms[mid].addr <= pc)
			lo = mid;
		else
			hi = mid;
	}
	i = lo;
	/* Among symbols at the same address, the best ranked is first. */
	while (i > 0 && sm->syms[i - 1].addr == sm->syms[i].addr)
		i--;
	if (sm->syms[i].size > 0 ? pc >= sm->syms[i].addr + sm->syms[i].size
	    : (lo + 1 < sm->nsyms && pc >= sm->syms[lo + 1].addr))
		return NULL;
	*start = sm->syms[i].addr;
	return sm->syms[i].name;
}

/* ------------------------------------------------------------ cache */

static au_frame_t **
cache_slot(symmod_t *sm, uint64_t offset)
{
	size_t i;

	if (2 * (sm->ncache + 1) > sm->capcache) {
		au_frame_t **old = sm->cache;
		size_t oldcap = sm->capcache, j;

		sm->capcache = oldcap ? 2 * oldcap : 1024;
		sm->cache = xcalloc(sm->capcache, sizeof(*sm->cache));
		for (j = 0; j < oldcap; j++) {
			if (old[j] == NULL)
				continue;
			i = (size_t)(old[j]->offset * 0x9e3779b97f4a7c15ULL) &
			    (sm->capcache - 1);
			while (sm->cache[i] != NULL)
				i = (i + 1) & (sm->capcache - 1);
			sm->cache[i] = old[j];
		}
		free(old);
	}
	i = (size_t)(offset * 0x9e3779b97f4a7c15ULL) & (sm->capcache - 1);
	while (sm->cache[i] != NULL && sm->cache[i]->offset != offset)
		i = (i + 1) & (sm->capcache - 1);
	return &sm->cache[i];
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* Copies the symbolized part of src into dst. */
static void
frame_copy(au_frame_t *dst, const au_frame_t *src)
{
	size_t i;

	dst->function = dup_or_null(src->function);
	dst->file = dup_or_null(src->file);
	dst->line = src->line;
	dst->note = src->note;
	dst->ninlined = src->ninlined;
	dst->inlined = NULL;
	if (src->ninlined > 0) {
		dst->inlined = xcalloc(src->ninlined, sizeof(*dst->inlined));
		for (i = 0; i < src->ninlined; i++) {
			dst->inlined[i].function =
			    dup_or_null(src->inlined[i].function);
			dst->inlined[i].file =
			    dup_or_null(src->inlined[i].file);
			dst->inlined[i].line = src->inlined[i].line;
		}
	}
}

/* ------------------------------------------------------------ frames */

/* Resolves pc of sm into f (function, file, line, inlined, note). */
static void
resolve(symmod_t *sm, au_frame_t *f)
{
	Dwarf_Addr pc;
	Dwfl_Line *ln;
	GElf_Addr symstart = 0;
	const char *name, *file = NULL;
	char *outer = NULL;
	int line = 0;

	pc = f->offset + sm->bias;
	if (f->offset > 0)
		pc--;
	name = find_symbol(sm, pc, &symstart);
	ln = dwfl_module_getsrc(sm->mod, pc);
	if (ln != NULL) {
		Dwarf_Addr laddr = 0;

		file = dwfl_lineinfo(ln, &laddr, &line, NULL, NULL, NULL);
		/* A line row before the start of the symbol holding pc is
		 * another function's (e.g. _start, which has no debug info,
		 * next to a CU that does): not ours. */
		if (name != NULL && laddr < symstart) {
			ln = NULL;
			file = NULL;
			line = 0;
		}
	}
	if (ln != NULL)
		inline_chain(sm, pc, f, &file, &line, &outer);
	if (name != NULL) {
		size_t len = strcspn(name, "@"); /* foo@@GLIBC_2.34 */
		char *plain = strndup(name, len);

		f->function = demangle(plain ? plain : name);
		free(plain);
		free(outer);
	} else {
		f->function = outer;
	}
	if (file != NULL && line > 0) {
		Dwarf_Addr dbias;

		f->file = src_path(dwfl_module_addrdie(sm->mod, pc, &dbias),
		    file);
		f->line = line;
	} else if (ln == NULL) {
		f->note = "no debug info";
	}
}

static void
symbolize_frame(au_frame_t *f)
{
	symmod_t *sm;
	au_frame_t **slot;

	if (f->symbolized) /* done, or a Python frame (ingest_stack.c) */
		return;
	f->symbolized = true;
	if (f->module == NULL) {
		f->note = "unknown module";
		return;
	}
	if (f->module[0] == '\0') {
		f->note = "module path unknown";
		return;
	}
	sm = module_open(f->module, f->build_id ? f->build_id : "");
	if (sm->mod == NULL) {
		f->note = sm->note;
		return;
	}
	slot = cache_slot(sm, f->offset);
	if (*slot == NULL) {
		au_frame_t *c = xcalloc(1, sizeof(*c));

		c->offset = f->offset;
		resolve(sm, c);
		*slot = c;
		sm->ncache++;
	}
	frame_copy(f, *slot);
}

static void
symbolize_stack(au_stack_t *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		symbolize_frame(&s->frames[i]);
}

void
symbolize_model(au_model_t *m, bool demangle)
{
	size_t i;

	demangle_on = demangle;
	for (i = 0; i < m->nleaks; i++)
		symbolize_stack(&m->leaks[i]->stack);
	for (i = 0; i < m->nviols; i++) {
		symbolize_stack(&m->viols[i]->stack);
		symbolize_stack(&m->viols[i]->alloc_stack);
		symbolize_stack(&m->viols[i]->free_stack);
	}
	for (i = 0; i < m->nooms; i++) {
		symbolize_stack(&m->ooms[i].request);
		for (size_t k = 0; k < m->ooms[i].ngroups; k++)
			symbolize_stack(&m->ooms[i].groups[k]);
	}
	for (i = 0; i < m->npeaks; i++)
		for (size_t k = 0; k < m->peaks[i].nstacks; k++)
			symbolize_stack(&m->peaks[i].stacks[k]);
	for (i = 0; i < m->ntlines; i++)
		for (size_t k = 0; k < m->tlines[i].nstacks; k++)
			symbolize_stack(&m->tlines[i].stacks[k]);
}

void
symbolize_done(void)
{
	while (modules != NULL) {
		symmod_t *sm = modules;

		modules = sm->next;
		for (size_t i = 0; i < sm->capcache; i++) {
			au_stack_t one;

			if (sm->cache[i] == NULL)
				continue;
			one.frames = sm->cache[i];
			one.n = 1;
			stack_free(&one); /* frees the frame too */
		}
		free(sm->cache);
		free(sm->syms);
		if (sm->dwfl != NULL)
			dwfl_end(sm->dwfl);
		free(sm->path);
		free(sm->build_id);
		free(sm);
	}
}
