#!/usr/bin/env python3
"""Checks SARIF files against the SARIF 2.1.0 rules GitHub code scanning
applies on upload (docs.github.com, "SARIF support for code scanning"):
required properties and their types, the level enum, ruleIndex/ruleId
consistency, locations with artifactLocation.uri, region.startLine >= 1,
uriBaseId defined in originalUriBaseIds, partialFingerprints as strings,
stack and code-flow frames, and GitHub's size limits.

Usage: check_sarif.py FILE... ; exit 0 valid, 1 invalid.
"""
import json
import re
import sys
from urllib.parse import urlparse

LEVELS = {"none", "note", "warning", "error"}
errors = []


def err(where, msg):
    errors.append("%s: %s" % (where, msg))


def is_str(v):
    return isinstance(v, str) and v != ""


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def absolute_uri(v):
    return is_str(v) and bool(urlparse(v).scheme)


def check_message(where, m):
    if not isinstance(m, dict) or not (is_str(m.get("text")) or is_str(m.get("id"))):
        err(where, "message needs a non-empty text")


def check_physical(where, pl, base_ids):
    if not isinstance(pl, dict):
        return err(where, "physicalLocation must be an object")
    al = pl.get("artifactLocation")
    if not isinstance(al, dict) or not is_str(al.get("uri")):
        return err(where, "physicalLocation.artifactLocation.uri is required")
    uri = al["uri"]
    if re.search(r"\s", uri):
        err(where, "uri %r contains white space" % uri)
    if "uriBaseId" in al:
        if al["uriBaseId"] not in base_ids:
            err(where, "uriBaseId %r not in run.originalUriBaseIds" % al["uriBaseId"])
        if urlparse(uri).scheme or uri.startswith("/"):
            err(where, "uri %r must be relative when uriBaseId is set" % uri)
    elif not urlparse(uri).scheme:
        # GitHub resolves relative URIs against the checkout; fine, but
        # then it must not be absolute-path-like.
        if uri.startswith("/"):
            err(where, "absolute path %r must be a file: URI" % uri)
    if "region" in pl:
        r = pl["region"]
        if not isinstance(r, dict):
            return err(where, "region must be an object")
        if not is_int(r.get("startLine")) or r["startLine"] < 1:
            err(where, "region.startLine must be an integer >= 1")
        for k in ("endLine", "startColumn", "endColumn"):
            if k in r and (not is_int(r[k]) or r[k] < 1):
                err(where, "region.%s must be an integer >= 1" % k)


def check_location(where, loc, base_ids, need_physical):
    if not isinstance(loc, dict):
        return err(where, "location must be an object")
    if "physicalLocation" in loc:
        check_physical(where, loc["physicalLocation"], base_ids)
    elif need_physical:
        err(where, "physicalLocation is required")
    if "message" in loc:
        check_message(where, loc["message"])
    for i, ll in enumerate(loc.get("logicalLocations", [])):
        if not isinstance(ll, dict) or not (is_str(ll.get("name")) or
                                            is_str(ll.get("fullyQualifiedName"))):
            err("%s.logicalLocations[%d]" % (where, i), "needs a name")


def check_run(where, run):
    if not isinstance(run, dict):
        return err(where, "run must be an object")
    drv = run.get("tool", {}).get("driver")
    if not isinstance(drv, dict) or not is_str(drv.get("name")):
        return err(where, "tool.driver.name is required")
    for k in ("version", "semanticVersion"):
        if k in drv and not is_str(drv[k]):
            err(where, "tool.driver.%s must be a string" % k)
    if "informationUri" in drv and not absolute_uri(drv["informationUri"]):
        err(where, "tool.driver.informationUri must be an absolute URI")
    rules = drv.get("rules", [])
    if not isinstance(rules, list):
        return err(where, "tool.driver.rules must be an array")
    if len(rules) > 25000:
        err(where, "more than 25,000 rules")
    ids = []
    for i, r in enumerate(rules):
        w = "%s.tool.driver.rules[%d]" % (where, i)
        if not isinstance(r, dict) or not is_str(r.get("id")):
            err(w, "id is required")
            ids.append(None)
            continue
        ids.append(r["id"])
        for k in ("shortDescription", "fullDescription"):
            if k in r:
                check_message("%s.%s" % (w, k), r[k])
        if "helpUri" in r and not absolute_uri(r["helpUri"]):
            err(w, "helpUri must be an absolute URI")
        lvl = r.get("defaultConfiguration", {}).get("level")
        if lvl is not None and lvl not in LEVELS:
            err(w, "defaultConfiguration.level %r not in %s" % (lvl, sorted(LEVELS)))
        tags = r.get("properties", {}).get("tags", [])
        if len(tags) > 20:
            err(w, "more than 20 tags")
    if len(set(i for i in ids if i)) != len([i for i in ids if i]):
        err(where, "rule ids are not unique")
    base_ids = run.get("originalUriBaseIds", {})
    for k, v in base_ids.items():
        u = v.get("uri", "") if isinstance(v, dict) else ""
        if not u.endswith("/"):
            err(where, "originalUriBaseIds[%s].uri must end with '/'" % k)
    results = run.get("results")
    if not isinstance(results, list):
        return err(where, "results must be an array")
    if len(results) > 25000:
        err(where, "more than 25,000 results")
    for i, res in enumerate(results):
        w = "%s.results[%d]" % (where, i)
        if not isinstance(res, dict):
            err(w, "must be an object")
            continue
        check_message(w, res.get("message"))
        rid, ridx = res.get("ruleId"), res.get("ruleIndex")
        if not is_str(rid) and ridx is None:
            err(w, "ruleId or ruleIndex is required")
        if ridx is not None:
            if not is_int(ridx) or not 0 <= ridx < len(rules):
                err(w, "ruleIndex %r out of range" % (ridx,))
            elif rid is not None and ids[ridx] != rid:
                err(w, "ruleIndex %d names %r, ruleId is %r" % (ridx, ids[ridx], rid))
        elif rid not in ids:
            err(w, "ruleId %r is not a rule of the driver" % rid)
        if "level" in res and res["level"] not in LEVELS:
            err(w, "level %r not in %s" % (res["level"], sorted(LEVELS)))
        locs = res.get("locations")
        if not isinstance(locs, list) or not locs:
            err(w, "GitHub needs at least one location")
            locs = []
        if len(locs) > 1000:
            err(w, "more than 1,000 locations")
        for j, loc in enumerate(locs):
            check_location("%s.locations[%d]" % (w, j), loc, base_ids, True)
        pf = res.get("partialFingerprints", {})
        if not isinstance(pf, dict) or not all(is_str(k) and is_str(v) for k, v in pf.items()):
            err(w, "partialFingerprints must map strings to strings")
        for j, st in enumerate(res.get("stacks", [])):
            ws = "%s.stacks[%d]" % (w, j)
            if not isinstance(st.get("frames"), list):
                err(ws, "frames is required")
                continue
            for k, fr in enumerate(st["frames"]):
                if "location" in fr:
                    check_location("%s.frames[%d]" % (ws, k), fr["location"], base_ids, False)
        for j, cf in enumerate(res.get("codeFlows", [])):
            tfs = cf.get("threadFlows")
            if not isinstance(tfs, list) or not tfs:
                err("%s.codeFlows[%d]" % (w, j), "threadFlows is required")
                continue
            for k, tf in enumerate(tfs):
                tl = tf.get("locations")
                if not isinstance(tl, list) or not tl:
                    err("%s.codeFlows[%d].threadFlows[%d]" % (w, j, k), "locations is required")
                    continue
                if len(tl) > 10000:
                    err(w, "more than 10,000 thread flow locations")
                for m, t in enumerate(tl):
                    check_location("%s.codeFlows[%d].threadFlows[%d].locations[%d]" % (w, j, k, m),
                                   t.get("location"), base_ids, False)
        if "baselineState" in res and res["baselineState"] not in (
                "new", "unchanged", "updated", "absent"):
            err(w, "bad baselineState")


def check(path):
    doc = json.load(open(path))
    if doc.get("version") != "2.1.0":
        err(path, "version must be \"2.1.0\"")
    if not absolute_uri(doc.get("$schema")) or "2.1.0" not in doc.get("$schema", ""):
        err(path, "$schema must be the SARIF 2.1.0 schema URI")
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        err(path, "runs must be a non-empty array")
        return
    if len(runs) > 20:
        err(path, "more than 20 runs")
    for i, run in enumerate(runs):
        check_run("%s: runs[%d]" % (path, i), run)


for p in sys.argv[1:]:
    check(p)
for e in errors[:50]:
    print(e)
sys.exit(1 if errors else 0)
