"""Renders bench/soak's report (loadgen's `report` lines plus the idle/settings/machine
lines bench/soak adds) as a Markdown table over time and a verdict:
  - memory: RSS growth after the warm-up within the bound (and the slope over that span);
  - file descriptors: the same count while loaded, and the same idle count before and after;
  - answers: nothing but 2xx, except the 401s of deliveries signed wrongly on purpose;
  - the load covered the whole run: one report line per interval of it;
  - throughput: acked/s in every interval after the first at least the offered rate of
    correctly signed requests less rate_tolerance (default 5 %: the share signed wrongly
    varies by chance, and answers due at an interval's end may land in the next one);
  - latency: p99 (from each request's due time) in every interval after the warm-up at
    most p99_bound_ms (default 50).
Exit status 0 when every check passes, 1 otherwise."""
import sys


def fields(line):
    parts = line.split()
    return parts[0], dict(p.split("=", 1) for p in parts[1:] if "=" in p)


def slope_per_minute(points):
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    return 60 * sum((t - mx) * (v - my) for t, v in points) / var if var else 0.0


def main():
    reports, extra = [], {}
    for line in open(sys.argv[1]):
        if not line.strip():
            continue
        kind, values = fields(line)
        if kind == "report":
            reports.append({k: float(v) for k, v in values.items()})
        elif kind in ("idle_before", "idle_after", "settings", "machine", "database", "serve_exit"):
            extra[kind] = values
        elif kind.startswith("acked="):
            extra["totals"] = dict(p.split("=", 1) for p in line.split() if "=" in p)
    s, m = extra.get("settings", {}), extra.get("machine", {})
    rate = float(s.get("rate", 0))
    offered_ok = rate * (1 - float(s.get("bad_signature_ratio", 0)))
    warmup_s = float(s.get("warmup_minutes", 1)) * 60
    bound = float(s.get("rss_bound_mib", 16))

    print(f"Machine: {m.get('nproc', '?')} cores ({m.get('cpu', '?').replace('_', ' ')}); load average (1/5/15 min) "
          f"{m.get('load_before', '?').replace('/', ' ')} before, {m.get('load_after', '?').replace('/', ' ')} after.")
    print("Load: " + ", ".join(f"{k} {v}" for k, v in s.items()) + ".")
    db = extra.get("database", {})
    print(f"Database at the end: {db.get('size_mib', '?')} MiB, {db.get('deliveries', '?')} deliveries.")
    print()
    print("| t (s) | acked/s | p50 (ms) | p99 (ms) | max (ms) | 401 (intended) | other non-2xx / errors | RSS (MiB) | open fds | processor lag |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in reports:
        print(f"| {r['t_s']:.0f} | {r['acked_per_s']:,.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['max_ms']:.1f} | "
              f"{r['intended_401']:.0f} | {r['unexpected']:.0f} / {r['errors']:.0f} | {r.get('rss_mib', -1):.1f} | "
              f"{r.get('fds', -1):.0f} | {r.get('lag_deliveries', -1):.0f} ({r.get('lag_s', -1):.2f} s) |")
    print()

    checks = []
    after = [r for r in reports if r["t_s"] > warmup_s]
    at_warmup = [r for r in reports if r["t_s"] <= warmup_s]
    if after and at_warmup:
        base = at_warmup[-1]["rss_mib"]
        top = max(r["rss_mib"] for r in after)
        slope = slope_per_minute([(r["t_s"], r["rss_mib"]) for r in [at_warmup[-1]] + after])
        checks.append((top - base <= bound,
                       f"RSS after the warm-up ({warmup_s:.0f} s): {base:.1f} MiB at its end, at most {top:.1f} MiB "
                       f"later (+{top - base:.1f} MiB, bound {bound:.0f} MiB; slope {slope:+.2f} MiB/min)"))
        # The report at the very end of the load is taken while connections close.
        loaded = [r["fds"] for r in after if r["t_s"] < float(s.get("minutes", 0)) * 60] or [r["fds"] for r in after]
        checks.append((max(loaded) - min(loaded) <= 2,
                       f"open fds under load after the warm-up: {min(loaded):.0f}–{max(loaded):.0f} (allowed spread 2)"))
    else:
        checks.append((False, "run too short for a warm-up and a measured span"))
    idle_before, idle_after = extra.get("idle_before", {}), extra.get("idle_after", {})
    if idle_before and idle_after:
        checks.append((idle_before["fds"] == idle_after["fds"],
                       f"idle open fds: {idle_before['fds']} before the load, {idle_after['fds']} after it "
                       f"(RSS idle {idle_before['rss_mib']} → {idle_after['rss_mib']} MiB)"))
        checks.append((idle_after.get("caught_up") == "yes", f"processor caught up after the load: {idle_after.get('caught_up')}"))
    unexpected = sum(r["unexpected"] for r in reports)
    errors = sum(r["errors"] for r in reports)
    intended = sum(r["intended_401"] for r in reports)
    checks.append((unexpected == 0 and errors == 0,
                   f"answers: {unexpected:.0f} unexpected (non-2xx other than intended 401s), {errors:.0f} connection "
                   f"errors; {intended:.0f} intended 401s"))
    interval = float(s.get("interval", 10))
    expected_intervals = int(float(s.get("minutes", 0)) * 60 // interval) if interval > 0 else 0
    checks.append((len(reports) >= expected_intervals,
                   f"load for the whole run: {len(reports)} report intervals of {expected_intervals} expected"))
    steady = reports[1:]
    tolerance = float(s.get("rate_tolerance", 0.05))
    if steady and offered_ok:
        low = min(r["acked_per_s"] for r in steady)
        high = max(r["acked_per_s"] for r in steady)
        checks.append((low >= (1 - tolerance) * offered_ok,
                       f"throughput: {low:,.0f}–{high:,.0f} acked/s per interval for {offered_ok:,.0f}/s offered "
                       f"(signed correctly; at least {(1 - tolerance) * offered_ok:,.0f} needed, tolerance "
                       f"{100 * tolerance:g} %)"))
    else:
        checks.append((False, "throughput: no interval after the first"))
    p99_bound = float(s.get("p99_bound_ms", 50))
    if after:
        worst = max(after, key=lambda r: r["p99_ms"])
        checks.append((worst["p99_ms"] <= p99_bound,
                       f"p99 per interval after the warm-up: {min(r['p99_ms'] for r in after):.2f}–{worst['p99_ms']:.2f} ms "
                       f"(worst at t={worst['t_s']:.0f} s; bound {p99_bound:g} ms)"))
    serve_exit = extra.get("serve_exit", {})
    if serve_exit:
        checks.append((serve_exit.get("status") == "0", f"serve stopped on SIGTERM with exit status {serve_exit.get('status')}"))

    ok = all(passed for passed, _ in checks)
    print(f"**Verdict: {'pass' if ok else 'FAIL'}**")
    print()
    for passed, text in checks:
        print(f"- {'ok' if passed else '**failed**'}: {text}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
