/*
 * cli_help.c -- the usage texts (cli_int.h): --help, the options most
 * runs need, grouped; --help-all, every option of cli.c's table (a test,
 * check_help.sh, holds the two in step) and the built-in suppressions;
 * report --help, snapshot --help, diff --help.
 */
#include "config.h"

#include <stdio.h>

#include "audit.h"
#include "cli_int.h"
#include "suppress.h"

static const char usage_head[] =
"Usage: " AU_PROG " [options] [--] program [args...]\n"
"       " AU_PROG " [output and filtering options] report FILE|DIR...\n"
"       " AU_PROG " [output options] snapshot PID [--wait SECONDS]\n"
"       " AU_PROG " [filtering options] diff A B [--json FILE]\n"
"\n"
"Runs program (and every process it starts) under the cuwarden shim and\n"
"reports every GPU allocation never freed and every broken contract.\n"
"A VALUE is given as --opt=VALUE or --opt VALUE; an optional [=VALUE]\n"
"only with '='.\n";

static const char usage_tail[] =
"\n"
"Exit status: the program's own when nothing is reported; the error\n"
"exit code when something is; 125 when the audit failed or the command\n"
"line is wrong; 126/127 when the program cannot run / is not found.\n"
"See cuwarden-audit(1).\n";

static const char short_text[] =
"\n"
"Common options (--help-all lists them all):\n"
"  --log-file=FILE        the text report, and the shim's messages, to FILE\n"
"                         (%p: the tool's pid, %q{VAR}: $VAR)\n"
"  --json=FILE            merged JSON document\n"
"  --sarif=FILE           SARIF 2.1.0 for code scanning\n"
"  --html=FILE            one self-contained HTML page\n"
"  --junit=FILE           JUnit XML: a test case per process\n"
"                         (FILE - is standard output, for these five)\n"
"  -q, --quiet            errors only;  -v, --verbose: more detail\n"
"  --num-callers=N        frames printed per stack (0 = all)\n"
"  --show-leak-kinds=LIST leak,teardown,address_range,suppressed, all, none\n"
"  --suppressions=FILE    rules hiding known findings\n"
"  --baseline=FILE        report only findings not in FILE (a --json)\n"
"  --error-exitcode=N     exit status when something is reported (23)\n"
"  --mode=audit|pool      track only, or also serve from cuwarden's pools\n"
"  --see-through          frameworks' caches off: every tensor seen\n"
"  --help-all             every option, and the built-in suppressions\n"
"  report --help          the report command's own usage\n"
"  snapshot --help, diff --help   theirs\n"
"  --version\n";

static const char all_text[] =
"\n"
"Output:\n"
"  --log-file=FILE          text report to FILE (default: stderr); the\n"
"                           shim's messages go there too.  In FILE, %p is\n"
"                           the tool's pid, %q{VAR} the variable VAR, %% a %\n"
"  --json=FILE              merged JSON document (cuwarden-audit v1)\n"
"  --sarif=FILE             SARIF 2.1.0 for code scanning\n"
"  --html=FILE              one self-contained HTML page\n"
"  --junit=FILE             JUnit XML: a test case per process, a failure\n"
"                           per finding group\n"
"  --trace=FILE             with --timeline: memory over time as a Chrome\n"
"                           trace (Perfetto, chrome://tracing)\n"
"                           (these six: FILE - is standard output)\n"
"  -q, --quiet              only errors: the finding groups that count and\n"
"                           why the audit fails; nothing when clean\n"
"  -v, --verbose            more detail: every process and owner, coverage\n"
"                           counts; raises the shim's log level (repeat)\n"
"  --verbose=N              the shim's log level 0..3; 1..3 also -v\n"
"  --num-callers=N          frames printed per stack in text (0 = all)\n"
"  --print-limit=N          finding groups printed in text (0 = all,\n"
"                           default 1000); a line says what was not shown\n"
"  --error-limit=yes|no     yes: --print-limit=1000; no: every group\n"
"  --show-leak-kinds=LIST   leak groups printed: all, none, or some of\n"
"                           leak (or definite), teardown, address_range,\n"
"                           suppressed (default: the first three); those\n"
"                           not printed still count\n"
"  --demangle=yes|no        C++ names demangled (default yes)\n"
"  --color=auto|always|never  colour on finding headers and summary lines\n"
"                           (auto: on a terminal, unless NO_COLOR is set;\n"
"                           never in a --log-file FILE)\n"
"  --plain-summary[=yes|no] LEAK and ERROR SUMMARY numbers ungrouped, as\n"
"                           compute-sanitizer writes them (for scripts)\n"
"  --require-cuda[=yes|no]  fail (125) when no process used CUDA\n"
"  --allow-missing-reports[=yes|no]\n"
"                           a process that used CUDA and left no report\n"
"                           (killed by SIGKILL) is listed, not a failure\n"
"  --allow-missing-ranks[=yes|no]\n"
"                           a rank of a distributed job without a report\n"
"                           (world size 8, 7 reports) is listed, not a\n"
"                           failure\n"
"  --error-exitcode=N       exit status when something is reported\n"
"                           (default 23; 0 = never fail)\n"
"Filtering:\n"
"  --suppressions=FILE      rules (leak:PAT, owner:PAT, violation:TYPE:PAT,\n"
"                           and { ... } call chains: see cuwarden-audit(1))\n"
"  --no-builtin-suppressions  report CUDA libraries' own allocations too\n"
"  --print-builtin-suppressions  list the built-in rules and exit\n"
"  --gen-suppressions[=FILE]  a call-chain rule for every finding group,\n"
"                           after the report (or to FILE)\n"
"  --baseline=FILE          report only findings not in FILE (a --json)\n"
"  --baseline-match=exact|function\n"
"                           a finding is in the baseline when its whole\n"
"                           stack is: every frame's function, file and\n"
"                           line (exact, the default), or the same with\n"
"                           lines aside (function: tolerates line shifts)\n"
"  --accept-teardown[=yes|no]  memory freed only by context teardown is\n"
"                           not a leak (listed as accepted, not counted)\n"
"Running:\n"
"  --preload=PATH           the shim to use (default: this installation's)\n"
"  --keep-reports=DIR       keep the per-process reports in DIR\n"
"  --no-wait-descendants    do not wait for processes the program left\n"
"  --see-through[=yes|no]   the frameworks' caching allocators off (PyTorch,\n"
"                           JAX, CuPy, Numba) and pool mode on: every\n"
"                           tensor is an allocation of its own\n"
"Shim options (CUWARDEN_* variables of the program):\n"
"  --mode=audit|pool        track only, or also serve from cuwarden's pools\n"
"  --stack-depth=N          frames captured per stack (0..64, default 24)\n"
"  --on-violation=report|abort\n"
"  --owner-skip=PATTERNS    ':'-separated modules skipped naming owners\n"
"  --pool-limit=SIZE        pool mode: bytes per device (K/M/G suffixes)\n"
"  --no-pool                pool mode off: straight to the driver\n"
"  --large-block=SIZE       blocks with their own segment (default 2M)\n"
"  --check-bounds[=yes|no]  check cuMemcpy*/cuMemset* ranges\n"
"  --timeline[=yes|no]     record every allocation and free; show each\n"
"                           device's PEAK and what made it up\n"
"  --tombstones=N           freed allocations remembered\n"
"  --show-stats[=yes|no]    the shim prints its statistics at exit\n"
"  --shim-log-file=FILE     the shim's own messages to FILE, not the\n"
"                           --log-file (the shim expands %p: each pid)\n"
"Other:\n"
"  -h, --help               the common options\n"
"  --help-all               this list and the built-in suppressions\n"
"  report --help            the report command's own usage\n"
"  snapshot --help          a running process's live allocations\n"
"  diff --help              what grew between two reports\n"
"  -V, --version\n";

static const char report_text[] =
"Usage: " AU_PROG " [output and filtering options] report FILE|DIR...\n"
"\n"
"Reads saved per-process reports (every file of each DIR, names starting\n"
"with '.' aside) and documents written by --json, merges them (the same\n"
"report given twice counts once) and reports them as a run would; nothing\n"
"is run.  Options go before the word report.\n"
"\n"
"Options: the Output and Filtering options of '" AU_PROG " --help-all';\n"
"the Running and Shim options apply only when running a program.\n"
"\n"
"Examples:\n"
"  " AU_PROG " --keep-reports out ./launcher; " AU_PROG " report out\n"
"  " AU_PROG " --html page.html report audit.json\n"
"\n"
"Exit status: 0 when nothing is reported; the error exit code (23) when\n"
"something is; 125 when a report cannot be read, none is found or the\n"
"command line is wrong.  See cuwarden-audit(1).\n";

static const char snapshot_text[] =
"Usage: " AU_PROG " [output options] snapshot PID [--wait SECONDS]\n"
"\n"
"Asks a running process under the shim for a snapshot: its live\n"
"allocations, as a report.  The process must have been started with\n"
"CUWARDEN_CONTROL (a FIFO the shim makes) or CUWARDEN_SNAPSHOT_SIGNAL\n"
"(e.g. USR2), and CUWARDEN_REPORT set; the tool reads them from\n"
"/proc/PID/environ, writes \"snapshot\" to the FIFO when there is one,\n"
"else sends the signal, waits for the new\n"
"file <CUWARDEN_REPORT>.snap.N (at most --wait seconds, default 10),\n"
"prints its path on standard output and renders it as 'report FILE'\n"
"does (the text on standard error, or --log-file; --json too).\n"
"\n"
"Example:\n"
"  CUWARDEN_CONTROL=/tmp/cw.%p.ctl CUWARDEN_REPORT=/tmp/cw.%p.json \\\n"
"    LD_PRELOAD=.../libcuwarden_preload.so ./train &\n"
"  " AU_PROG " snapshot $!\n"
"\n"
"Exit status: 0 when the snapshot was taken (live allocations are no\n"
"error: --error-exitcode=N makes them one); 125 when it was not (no such\n"
"process, not yours, no shim, snapshots off, no file in time).\n"
"See cuwarden-audit(1).\n";

static const char diff_text[] =
"Usage: " AU_PROG " [filtering options] diff A B [--json FILE]\n"
"                      [--error-exitcode N]\n"
"\n"
"Compares two reports of one run (snapshots, per-process reports or\n"
"--json documents): the live memory of each is grouped by its whole\n"
"allocation stack (symbolized: kind, API and every frame's function),\n"
"and the groups that grew from A to B are listed, largest growth first,\n"
"with their stacks; then the groups that shrank or went, in one line,\n"
"and the totals.  --json FILE writes the same as a document\n"
"(cuwarden-diff, doc/report-schema.md).  Suppressions apply to both.\n"
"\n"
"Exit status: 0; with --error-exitcode=N, N when a group grew; 125 when\n"
"a report cannot be read or the command line is wrong.\n"
"See cuwarden-audit(1).\n";

void
cli_help_snapshot(FILE *out)
{
	fputs(snapshot_text, out);
}

void
cli_help_diff(FILE *out)
{
	fputs(diff_text, out);
}

void
cli_help_short(FILE *out)
{
	fputs(usage_head, out);
	fputs(short_text, out);
	fputs(usage_tail, out);
}

void
cli_help_all(FILE *out)
{
	fputs(usage_head, out);
	fputs(all_text, out);
	fputs(usage_tail, out);
	fputs("\nBuilt-in suppressions (--no-builtin-suppressions turns them "
	    "off):\n", out);
	supp_print_builtin(out);
}

void
cli_help_report(FILE *out)
{
	fputs(report_text, out);
}
