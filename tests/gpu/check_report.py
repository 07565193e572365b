#!/usr/bin/env python3
"""check_report.py -- assert what cuwarden reports hold.

Reads every report of one run (the shim's per-process documents,
format "cuwarden-report", or the audit tool's merged one, format
"cuwarden-audit"), sums them, and checks expectations given on the command
line.  Prints one line per failed expectation and a last line
"check_report: ok ..." or "check_report: FAILED ...".  Exit 0 when every
expectation holds, 1 when one does not, 99 when the reports cannot be read.

Usage: check_report.py [options] REPORT_OR_DIR...

  --exact-leaks KIND=COUNT:BYTES[,KIND=COUNT:BYTES...]
        the leaks of these kinds total exactly COUNT allocations and BYTES
        bytes; every kind not listed must have no leak at all.  "none" for
        no leak of any kind.
  --has-leak KIND:SIZE:COUNT
        the leaks of KIND with SIZE bytes per allocation count exactly
        COUNT allocations (others may exist).  Repeatable.
  --violations TYPE=N[,TYPE=N...]
        exactly these violations; any other type counts as a failure.
        "none" for no violation at all.
  --no-bad-frees
        no invalid_free, double_free, interior_free or mismatched_free.
  --min-allocations N
        coverage.allocations >= N and hooks_active is true.
  --max-untracked N
        coverage.untracked_frees <= N (frees of memory the shim never saw
        allocated: 0 for a program whose every allocation it hooks).
  --mode MODE
        every report says "mode": MODE.
  --sanitizer-log FILE
        compute-sanitizer's "LEAK SUMMARY: B bytes leaked in N allocations"
        (0/0 when it printed no summary) equals the shim's device + pinned
        + managed leaks.  (Measured on an H200, CUDA 13.0: memcheck's leak
        check counts cudaMalloc, cudaMallocHost/cudaHostAlloc and
        cudaMallocManaged memory still allocated at exit, with or without
        cudaDeviceReset.)
  --sanitizer-info FILE
        asserts nothing: prints one line "check_report: info: ..." with
        compute-sanitizer's LEAK SUMMARY, the shim's leaks by kind, and
        whether the summary equals the shim's device + pinned + managed
        leaks or its leaks of every kind.  For memory where what memcheck
        counts is not established (graph memory).
  --quiet
        only the last line.
"""
import argparse
import glob
import json
import os
import re
import sys

SANITIZER_KINDS = ("device", "pinned", "managed")
BAD_FREES = ("invalid_free", "double_free", "interior_free", "mismatched_free")


def load(paths):
    docs = []
    for p in paths:
        if os.path.isdir(p):
            files = sorted(glob.glob(os.path.join(p, "*.json")))
        else:
            files = [p]
        for f in files:
            try:
                with open(f, encoding="utf-8") as fh:
                    doc = json.load(fh)
            except (OSError, ValueError) as e:
                print("check_report: cannot read %s: %s" % (f, e))
                sys.exit(99)
            if doc.get("format") not in ("cuwarden-report", "cuwarden-audit"):
                print("check_report: %s: not a cuwarden report (format %r)"
                      % (f, doc.get("format")))
                sys.exit(99)
            doc["_path"] = f
            docs.append(doc)
    return docs


def parse_pairs(spec, what):
    out = {}
    if spec in (None, "", "none"):
        return out
    for item in spec.split(","):
        if "=" not in item:
            raise SystemExit("check_report: bad %s item %r" % (what, item))
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def sanitizer_summary(path):
    """(bytes, allocations) from compute-sanitizer's output."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    m = None
    for m in re.finditer(r"LEAK SUMMARY:\s*(\d+)\s+bytes leaked in\s+(\d+)\s+allocations", text):
        pass
    if m:
        return int(m.group(1)), int(m.group(2))
    if re.search(r"ERROR SUMMARY", text):
        return 0, 0   # no leak summary line: nothing leaked
    return None


def main():
    ap = argparse.ArgumentParser(add_help=True)
    ap.add_argument("--exact-leaks")
    ap.add_argument("--has-leak", action="append", default=[])
    ap.add_argument("--violations")
    ap.add_argument("--no-bad-frees", action="store_true")
    ap.add_argument("--min-allocations", type=int)
    ap.add_argument("--max-untracked", type=int)
    ap.add_argument("--mode")
    ap.add_argument("--sanitizer-log")
    ap.add_argument("--sanitizer-info")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("reports", nargs="+")
    a = ap.parse_args()

    docs = load(a.reports)
    fails = []
    if not docs:
        print("check_report: FAILED: no report found in %s" % " ".join(a.reports))
        return 1

    by_kind = {}        # kind -> [count, bytes]
    by_kind_size = {}   # (kind, size) -> count
    viol = {}
    allocations = 0
    untracked = 0
    hooks_active = False
    for d in docs:
        for l in d.get("leaks", []):
            k = l.get("kind", "?")
            c = int(l.get("count", 1))
            b = int(l.get("bytes", c * int(l.get("size", 0))))
            e = by_kind.setdefault(k, [0, 0])
            e[0] += c
            e[1] += b
            ks = (k, int(l.get("size", 0)))
            by_kind_size[ks] = by_kind_size.get(ks, 0) + c
        for v in d.get("violations", []):
            t = v.get("type", "?")
            viol[t] = viol.get(t, 0) + 1
        cov = d.get("coverage", {})
        allocations += int(cov.get("allocations", 0))
        untracked += int(cov.get("untracked_frees", 0))
        hooks_active = hooks_active or bool(cov.get("hooks_active", False))
        if a.mode and d.get("format") == "cuwarden-report" and d.get("mode") != a.mode:
            fails.append("%s: mode %r, expected %r" % (d["_path"], d.get("mode"), a.mode))
        # The summary must agree with the entries (violations list may be capped).
        s = d.get("summary", {})
        # It counts categories leak and teardown, never address ranges
        # (doc/report-schema.md; an entry without a category: kind va is one).
        counted = [l for l in d.get("leaks", [])
                   if l.get("category", "address_range" if l.get("kind") == "va"
                            else "leak") != "address_range"]
        lb = sum(int(l.get("bytes", 0)) for l in counted)
        lc = sum(int(l.get("count", 0)) for l in counted)
        if d.get("format") == "cuwarden-report" and "leaked_bytes" in s and \
                (int(s["leaked_bytes"]) != lb or int(s.get("leaked_allocations", lc)) != lc):
            fails.append("%s: summary (%s bytes, %s allocations) disagrees with its leaks "
                         "(%d bytes, %d allocations)" % (d["_path"], s.get("leaked_bytes"),
                                                         s.get("leaked_allocations"), lb, lc))

    if a.exact_leaks is not None:
        want = {}
        for k, v in parse_pairs(a.exact_leaks, "--exact-leaks").items():
            c, b = v.split(":")
            want[k] = (int(c), int(b))
        for k in sorted(set(want) | set(by_kind)):
            got = tuple(by_kind.get(k, (0, 0)))
            exp = want.get(k, (0, 0))
            if got != exp:
                fails.append("leaks of kind %s: %d allocations, %d bytes; expected %d, %d"
                             % (k, got[0], got[1], exp[0], exp[1]))

    for spec in a.has_leak:
        k, size, count = spec.split(":")
        got = by_kind_size.get((k, int(size)), 0)
        if got != int(count):
            near = sorted((s, c) for (kk, s), c in by_kind_size.items() if kk == k)
            fails.append("leaks of kind %s, %s bytes each: %d, expected %s (kind %s has: %s)"
                         % (k, size, got, count, k,
                            ", ".join("%dx%d" % (c, s) for s, c in near[:12]) or "none"))

    if a.violations is not None:
        want = {k: int(v) for k, v in parse_pairs(a.violations, "--violations").items()}
        for t in sorted(set(want) | set(viol)):
            if viol.get(t, 0) != want.get(t, 0):
                fails.append("violations %s: %d, expected %d" % (t, viol.get(t, 0), want.get(t, 0)))

    if a.no_bad_frees:
        for t in BAD_FREES:
            if viol.get(t, 0):
                fails.append("violations %s: %d, expected none" % (t, viol[t]))

    if a.min_allocations is not None:
        if not hooks_active:
            fails.append("coverage.hooks_active is false: the shim saw no CUDA call")
        if allocations < a.min_allocations:
            fails.append("coverage.allocations %d < %d" % (allocations, a.min_allocations))

    if a.max_untracked is not None and untracked > a.max_untracked:
        fails.append("coverage.untracked_frees %d > %d" % (untracked, a.max_untracked))

    def leaks_of(kinds):
        """[count, bytes] of the shim's leaks of these kinds."""
        t = [0, 0]
        for k in kinds:
            t = [x + y for x, y in zip(t, by_kind.get(k, (0, 0)))]
        return t

    if a.sanitizer_log:
        s = sanitizer_summary(a.sanitizer_log)
        dp = leaks_of(SANITIZER_KINDS)
        if s is None:
            fails.append("compute-sanitizer printed no summary (%s)" % a.sanitizer_log)
        elif s != (dp[1], dp[0]):
            fails.append("compute-sanitizer LEAK SUMMARY %d bytes in %d allocations; "
                         "shim device+pinned+managed %d bytes in %d (all kinds %s)"
                         % (s[0], s[1], dp[1], dp[0],
                            {k: tuple(v) for k, v in by_kind.items()}))
        elif not a.quiet:
            print("check_report: compute-sanitizer agrees: %d bytes in %d allocations"
                  % s)

    if a.sanitizer_info:
        s = sanitizer_summary(a.sanitizer_info)
        dp = leaks_of(SANITIZER_KINDS)
        every = leaks_of(by_kind)
        kinds = ", ".join("%s %d bytes in %d allocations" % (k, v[1], v[0])
                          for k, v in sorted(by_kind.items())) or "no leak"
        if s is None:
            sums, verdict = "printed no summary", "nothing to compare"
        else:
            sums = "LEAK SUMMARY: %d bytes in %d allocations" % s
            if s == (dp[1], dp[0]):
                verdict = "the summary equals the shim's device+pinned+managed"
            elif s == (every[1], every[0]):
                verdict = "the summary equals the shim's leaks of every kind"
            else:
                verdict = "the summary equals neither its device+pinned+managed nor all its leaks"
        print("check_report: info: compute-sanitizer %s; shim: %s; %s"
              % (sums, kinds, verdict))

    desc = "%d report(s); leaks %s; violations %s; allocations %d; untracked frees %d" % (
        len(docs), {k: tuple(v) for k, v in sorted(by_kind.items())} or "none",
        viol or "none", allocations, untracked)
    if fails:
        if not a.quiet:
            for f in fails:
                print("check_report: " + f)
        print("check_report: FAILED: " + desc)
        return 1
    print("check_report: ok: " + desc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
