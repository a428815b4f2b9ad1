#!/usr/bin/env python3
"""The PromQL of deploy/prometheus/alerts.yml and deploy/grafana/moderation.json, for tests/deploy/run.
Standard library only.

    expressions.py dashboard DASHBOARD.json RULES_OUT.yml
        checks the dashboard's structure (valid JSON, schemaVersion >= 36, a templated Prometheus
        `datasource` variable every panel and query uses, an `instance` variable every expression
        filters on, unique panel ids, panels that do not overlap) and writes its expressions, with
        Grafana's variables replaced, as recording rules to RULES_OUT.yml for `promtool check rules`.

    expressions.py names RULES.yml DASHBOARD.json --scrape LABEL=FILE [--scrape LABEL=FILE ...]
        every metric name the rules' and the dashboard's expressions use must have a series in one
        of the scrapes (Prometheus text format); a histogram's _bucket, _sum and _count count as the
        histogram. Names a scrape lacks are listed with where they are used; exit 1 if any.
"""
import argparse
import json
import re
import sys

KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
    "offset", "atan2", "inf", "nan",
}
GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
IDENTIFIER = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def metric_names(expr):
    """The metric names an expression selects: identifiers that are not functions, aggregations,
    keywords, label names (inside {…} or a grouping clause), strings, durations or variables."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = GROUPING.sub(" ", text)
    text = re.sub(r"\$\{[^}]*\}|\$[a-zA-Z_][a-zA-Z0-9_]*", " ", text)
    text = re.sub(r"(?<![a-zA-Z_:])[0-9][0-9a-zA-Z_.]*", " ", text)
    names = set()
    for match in IDENTIFIER.finditer(text):
        word = match.group(0)
        following = text[match.end():].lstrip()
        if following.startswith("(") or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def rule_expressions(path):
    """(rule name, expr) for each rule of a Prometheus rules file, read without a YAML library:
    `expr:` as a plain or quoted scalar on its line, or a block scalar (| or >) below it."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    name = None
    i = 0
    while i < len(lines):
        line = lines[i]
        named = re.match(r"\s*-?\s*(alert|record):\s*(\S+)", line)
        if named:
            name = named.group(2)
        m = re.match(r"(\s*)(?:-\s+)?expr:\s*(.*?)\s*$", line)
        if m:
            indent, value = len(m.group(1)), m.group(2)
            if value[:1] in ("|", ">"):
                body = []
                i += 1
                while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                    body.append(lines[i])
                    i += 1
                found.append((name, "\n".join(body).strip()))
                continue
            if value[:1] in ("'", '"'):
                value = value[1:-1]
                value = value.replace("''", "'") if m.group(2)[0] == "'" else value.replace('\\\\', '\\')
            found.append((name, value))
        i += 1
    if not found:
        sys.exit(f"{path}: no expr: found")
    return found


def all_panels(panels):
    for panel in panels:
        yield panel
        yield from all_panels(panel.get("panels", []))


def dashboard_expressions(dashboard):
    """(where, expr) for each panel target and each query variable of a dashboard."""
    found = []
    for panel in all_panels(dashboard.get("panels", [])):
        for target in panel.get("targets", []):
            if "expr" in target:
                found.append((f'panel {panel.get("id")} "{panel.get("title")}" {target.get("refId")}', target["expr"]))
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        m = re.fullmatch(r"\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*", query or "")
        m = m or re.fullmatch(r"\s*query_result\((.*)\)\s*", query or "")
        found.append((f'variable {variable.get("name")}', m.group(1) if m else query))
    return found


def check_dashboard(path, rules_out):
    failures = []
    try:
        dashboard = json.load(open(path, encoding="utf-8"))
    except ValueError as error:
        sys.exit(f"FAIL - {path} is not valid JSON: {error}")

    def check(ok, what):
        print(("ok - " if ok else "FAIL - ") + what)
        if not ok:
            failures.append(what)

    check(isinstance(dashboard.get("schemaVersion"), int) and dashboard["schemaVersion"] >= 36,
          f'schemaVersion {dashboard.get("schemaVersion")} is 36 or later')
    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    check(ds.get("type") == "datasource" and ds.get("query") == "prometheus",
          "a templated datasource variable `datasource` of Prometheus data sources")
    instance = variables.get("instance", {})
    check(instance.get("type") == "query", "a query variable `instance`")
    expected_ds = {"type": "prometheus", "uid": "${datasource}"}
    panels = [p for p in all_panels(dashboard.get("panels", [])) if p.get("type") != "row"]
    ids = [p.get("id") for p in all_panels(dashboard.get("panels", []))]
    check(len(ids) == len(set(ids)) and None not in ids, f"{len(ids)} panels, each with an id of its own")
    bad_ds = [p.get("title") for p in panels
              if p.get("datasource") != expected_ds or any(t.get("datasource") != expected_ds for t in p.get("targets", []))]
    bad_ds += ["variable instance"] if instance.get("datasource") != expected_ds else []
    check(not bad_ds, "every panel, query and variable uses ${datasource}" + (f": not {bad_ds}" if bad_ds else ""))
    empty = [p.get("title") for p in panels if not any(t.get("expr") for t in p.get("targets", []))]
    check(not empty, "every panel has an expression" + (f": not {empty}" if empty else ""))
    unfiltered = [f'{p.get("title")} {t.get("refId")}' for p in panels for t in p.get("targets", [])
                  if 'instance=~"$instance"' not in t.get("expr", "")]
    check(not unfiltered, 'every expression selects instance=~"$instance"' + (f": not {unfiltered}" if unfiltered else ""))
    cells = {}
    overlaps = set()
    for p in all_panels(dashboard.get("panels", [])):
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] + g["w"] > 24:
            overlaps.add(f'{p.get("title")} (gridPos {g})')
            continue
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    overlaps.add(f'{p.get("title")} and {cells[(x, y)]}')
                cells[(x, y)] = p.get("title")
    check(not overlaps, "panels lie within 24 columns and do not overlap" + (f": {sorted(overlaps)}" if overlaps else ""))

    substitutions = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$instance": ".*",
                     "${instance}": ".*"}
    expressions = dashboard_expressions(dashboard)
    leftovers = []
    with open(rules_out, "w", encoding="utf-8") as out:
        out.write("groups:\n  - name: dashboard\n    rules:\n")
        for n, (where, expr) in enumerate(expressions):
            for variable, value in substitutions.items():
                expr = expr.replace(variable, value)
            leftovers += [f"{where}: {v}" for v in re.findall(r"\$\{?[a-zA-Z_]\w*", expr)]
            out.write(f"      - record: dashboard:expression_{n}\n        expr: |\n")
            out.write("".join(f"          {line}\n" for line in expr.split("\n")))
    check(not leftovers, f"{len(expressions)} expressions use no Grafana variable but $instance and $__rate_interval"
          + (f": {leftovers}" if leftovers else ""))
    return 1 if failures else 0


def read_scrape(path):
    """(families: name -> type, names with at least one sample) of a Prometheus text-format scrape."""
    families, samples = {}, set()
    for line in open(path, encoding="utf-8"):
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                families[parts[2]] = parts[3]
        elif line.strip() and not line.startswith("#"):
            m = IDENTIFIER.match(line)
            if m:
                samples.add(m.group(0))
    return families, samples


def check_names(rules_path, dashboard_path, scrape_args):
    scrapes = []
    for arg in scrape_args:
        label, _, path = arg.partition("=")
        scrapes.append((label, *read_scrape(path)))
    used = {}
    for name, expr in rule_expressions(rules_path):
        for metric in metric_names(expr):
            used.setdefault(metric, []).append(f"{rules_path}: {name}")
    for where, expr in dashboard_expressions(json.load(open(dashboard_path, encoding="utf-8"))):
        for metric in metric_names(expr):
            used.setdefault(metric, []).append(f"{dashboard_path}: {where}")

    def family_of(metric):
        for suffix, kinds in (("_bucket", ("histogram",)), ("_sum", ("histogram", "summary")),
                              ("_count", ("histogram", "summary"))):
            base = metric[: -len(suffix)]
            if metric.endswith(suffix) and (any(f.get(base) in kinds for _, f, _ in scrapes) or suffix == "_bucket"):
                return base
        return metric

    families = {}
    for metric, places in used.items():
        families.setdefault(family_of(metric), set()).update(places)
    missing = []
    only = []
    for family in sorted(families):
        present = [label for label, declared, samples in scrapes
                   if family in samples or (family in declared and
                                            any(s in samples for s in (family + "_bucket", family + "_count")))]
        if not present:
            declared = [label for label, d, _ in scrapes if family in d]
            missing.append((family, declared))
        elif len(present) < len(scrapes):
            only.append((family, present))
    labels = ", ".join(label for label, _, _ in scrapes)
    print(f"{len(families)} metrics used by {rules_path} and {dashboard_path}; scrapes: {labels}")
    for family, present in only:
        print(f"  {family}: only in the {', '.join(present)} scrape")
    for family, declared in missing:
        why = f"declared by {', '.join(declared)} but without a series" if declared else "not in any scrape"
        print(f"FAIL - {family}: {why}; used by:")
        for place in sorted(families[family]):
            print(f"         {place}")
    if missing:
        print(f"FAIL - {len(missing)} of {len(families)} metrics missing from the servers' /metrics: "
              + ", ".join(f for f, _ in missing))
        return 1
    print(f"ok - all {len(families)} metrics used by the rules and the dashboard are in the servers' /metrics")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dashboard")
    d.add_argument("dashboard")
    d.add_argument("rules_out")
    n = sub.add_parser("names")
    n.add_argument("rules")
    n.add_argument("dashboard")
    n.add_argument("--scrape", action="append", required=True, metavar="LABEL=FILE")
    args = parser.parse_args()
    if args.command == "dashboard":
        return check_dashboard(args.dashboard, args.rules_out)
    return check_names(args.rules, args.dashboard, args.scrape)


if __name__ == "__main__":
    sys.exit(main())
