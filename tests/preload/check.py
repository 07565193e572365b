#!/usr/bin/env python3
"""Asserts facts about a cuwarden report, field by field.

usage: check.py REPORT [-v NAME=VALUE | -V FILE]... EXPR...

Each EXPR is a Python expression that must be true.  Names available:
  r          the report (dict)
  cov, summ  r["coverage"], r["summary"]
  V          variables from -v/-V (KEY=VALUE lines; integers converted,
             "0x..." kept as strings, lowercased)
  leaks(**f) leak entries whose fields equal f (owner_endswith=..,
             owner_basename=.. also accepted)
  leak(**f)  the one leak entry matching f (fails if not exactly one)
  viols(**f) violations matching f;  viol(**f) exactly one
  frame0(e)  module path of the innermost frame of a stack (list)
  hexs(n)    an integer as the report writes addresses ("0x...")
  pyf(e)     the Python frames of a stack (list), innermost first, each
             [file, function, line]
Exit 0 when all hold, 1 otherwise (the failing expressions and the report
are printed), 99 on a harness error (unreadable report).
"""
import json
import os
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 99
    path = argv[1]
    V = {}
    exprs = []
    i = 2
    while i < len(argv):
        a = argv[i]
        if a in ("-v", "-V") and i + 1 < len(argv):
            items = [argv[i + 1]]
            if a == "-V":
                with open(argv[i + 1]) as f:
                    items = [ln.strip() for ln in f]
            for it in items:
                if "=" not in it:
                    continue
                k, v = it.split("=", 1)
                v = v.strip()
                if v.startswith("0x"):
                    V[k.strip()] = v.lower()
                else:
                    try:
                        V[k.strip()] = int(v)
                    except ValueError:
                        V[k.strip()] = v
            i += 2
            continue
        exprs.append(a)
        i += 1
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        print("check.py: cannot read report %s: %s" % (path, e))
        return 99

    def match(e, f):
        for k, v in f.items():
            if k == "owner_endswith":
                if not str(e.get("owner", "")).endswith(v):
                    return False
            elif k == "owner_basename":
                if os.path.basename(str(e.get("owner", ""))) != v:
                    return False
            elif e.get(k) != v:
                return False
        return True

    def leaks(**f):
        return [e for e in r.get("leaks", []) if match(e, f)]

    def one(lst, what, f):
        if len(lst) != 1:
            raise AssertionError("%d %s match %r" % (len(lst), what, f))
        return lst[0]

    def leak(**f):
        return one(leaks(**f), "leaks", f)

    def viols(**f):
        return [e for e in r.get("violations", []) if match(e, f)]

    def viol(**f):
        return one(viols(**f), "violations", f)

    mods = r.get("modules", [])

    def frame0(stack):
        if not stack:
            return None
        m = stack[0].get("module", -1)
        return mods[m]["path"] if 0 <= m < len(mods) else None

    def hexs(n):
        return "0x%x" % n

    def pyf(stack):
        return [[f["python"]["file"], f["python"]["function"],
                 f["python"]["line"]] for f in stack if "python" in f]

    env = dict(r=r, cov=r.get("coverage", {}), summ=r.get("summary", {}),
               V=V, leaks=leaks, leak=leak, viols=viols, viol=viol,
               frame0=frame0, hexs=hexs, pyf=pyf, len=len, sum=sum, any=any,
               all=all, os=os, json=json)
    bad = 0
    for x in exprs:
        try:
            ok = eval(x, env)
        except Exception as e:  # noqa: BLE001 - report any failure
            ok = False
            print("FAIL: %s  (%s: %s)" % (x, type(e).__name__, e))
            bad += 1
            continue
        if not ok:
            print("FAIL: %s" % x)
            bad += 1
    if bad:
        print("---- report %s" % path)
        json.dump({k: r[k] for k in r if k != "modules"}, sys.stdout,
                  indent=1)
        print()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
