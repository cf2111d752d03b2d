"""Renders bench/run's results (KEY=VALUE lines) as one Markdown table: each figure beside
the ceiling measured in the same run, its ratio to that ceiling, the goal and whether it
was met. Throughput ratios are value / ceiling (higher is better); latency and memory are
shown as multiples of the ceiling's (lower is better)."""
import sys


def read_results(path):
    results = {}
    for line in open(path):
        key, _, value = line.rstrip("\n").partition("=")
        results[key] = value
    return results


def number(results, key):
    try:
        return float(results[key])
    except (KeyError, ValueError):
        return None


def fold_repeats(results, prefix, figures=("rate", "p50", "p99", "rss", "cpu_us"), key="rate"):
    """PREFIX_1_rate, PREFIX_2_rate, … (bench/run --repeat) -> PREFIX_rate etc.: the median of
    each figure over the runs; returns the runs' `key` figures in order."""
    runs = []
    while f"{prefix}_{len(runs) + 1}_rate" in results:
        runs.append(len(runs) + 1)
    for figure in figures:
        values = sorted(v for v in (number(results, f"{prefix}_{i}_{figure}") for i in runs) if v is not None)
        if values:
            middle = len(values) // 2
            results[f"{prefix}_{figure}"] = str(values[middle] if len(values) % 2 else
                                                (values[middle - 1] + values[middle]) / 2)
    unexpected = sum(int(number(results, f"{prefix}_{i}_unexpected") or 0) for i in runs)
    if runs:
        results[f"{prefix}_unexpected"] = str(unexpected)
    return [number(results, f"{prefix}_{i}_{key}") for i in runs]


def rate(value, unit):
    return "—" if value is None else f"{value:,.0f} {unit}"


def main():
    r = read_results(sys.argv[1])
    noop_runs = fold_repeats(r, "noop_1k")
    ingest_runs = fold_repeats(r, "ingest_1k")
    e2e_runs = fold_repeats(r, "e2e", ("rate", "samples_rate", "cpu_us"), key="samples_rate")
    upsert_runs = fold_repeats(r, "upsert", ("rate",))
    n = lambda key: number(r, key)
    rows = []

    def throughput(figure, value, unit, ceiling, ceiling_label, goal=None):
        ratio = value / ceiling if value is not None and ceiling else None
        met = "—" if goal is None or ratio is None else ("yes" if ratio >= goal else "**no**")
        rows.append((figure, rate(value, unit), f"{rate(ceiling, unit)} ({ceiling_label})" if ceiling else "—",
                     "—" if ratio is None else f"{ratio:.0%}", "—" if goal is None else f"≥ {goal:.0%}", met))

    def cost(figure, value, ceiling, unit, ceiling_label):
        shown = lambda v: "—" if v is None else f"{v:.2f} {unit}" if unit == "ms" else f"{v:.1f} {unit}"
        ratio = f"×{value / ceiling:.1f}" if value is not None and ceiling else "—"
        rows.append((figure, shown(value), f"{shown(ceiling)} ({ceiling_label})" if ceiling else "—", ratio, "—", "—"))

    for size, key, goal in (("1 KiB", "1k", 0.30), ("20 KiB", "20k", None)):
        noop = f"no-op server, {size}"
        throughput(f"Ingest {size}: signed durable acks", n(f"ingest_{key}_rate"), "/s", n(f"noop_{key}_rate"), noop, goal)
        cost(f"Ingest {size}: p50 latency", n(f"ingest_{key}_p50"), n(f"noop_{key}_p50"), "ms", noop)
        cost(f"Ingest {size}: p99 latency", n(f"ingest_{key}_p99"), n(f"noop_{key}_p99"), "ms", noop)
        cost(f"Ingest {size}: server peak RSS", n(f"ingest_{key}_rss"), n(f"noop_{key}_rss"), "MiB", noop)
        cost(f"Ingest {size}: server CPU per delivery (the figure to compare builds by)", n(f"ingest_{key}_cpu_us"),
             n(f"noop_{key}_cpu_us"), "µs", noop)
    throughput("`/healthz` GETs (within 2× of the ceiling)", n("healthz_rate"), "/s", n("noop_get_rate"),
               "no-op server, GET", 0.5)
    cost("`/healthz` p99 latency", n("healthz_p99"), n("noop_get_p99"), "ms", "no-op server, GET")

    upsert = n("upsert_rate")
    samples_per_batch = 180
    throughput("End to end 20 KiB (acked and applied): deliveries", n("e2e_rate"), "/s", n("noop_20k_rate"),
               "no-op server, 20 KiB")
    throughput("End to end 20 KiB (acked and applied): samples", n("e2e_samples_rate"), "/s", upsert,
               "SQLite upsert", 0.60)
    cost("End to end 20 KiB: server CPU per delivery, acked and applied", n("e2e_cpu_us"), None, "µs", "")
    processing = n("processing_samples") / n("processing_seconds") if n("processing_seconds") else None
    throughput("Processing (serve applying an inbox backlog): samples", processing, "/s", upsert, "SQLite upsert")
    rebuild = n("rebuild_samples") / n("rebuild_seconds") if n("rebuild_seconds") else None
    throughput("`healthhook rebuild`: samples", rebuild, "/s", upsert, "SQLite upsert")
    throughput("Offline replay, 1 KiB summaries: deliveries", n("replay_sum_rate"), "/s", None, "")
    throughput("Offline replay, 20 KiB heartrate: samples", n("replay_hr_samples_rate"), "/s", upsert, "SQLite upsert")
    throughput("Offline replay, 20 KiB heartrate: deliveries", n("replay_hr_rate"), "/s",
               upsert / samples_per_batch if upsert else None, "SQLite upsert ÷ 180")

    alone = n("hostile_alone_rate")
    throughput("Hostile clients: 1 KiB acks beside the attack (bench/hostile/run)", n("hostile_attack_rate"), "/s",
               alone, "the same client alone", 0.50)
    p99 = n("hostile_attack_p99")
    rows.append(("Hostile clients: p99 latency beside the attack", "—" if p99 is None else f"{p99:.2f} ms",
                 "—" if n("hostile_alone_p99") is None else f"{n('hostile_alone_p99'):.2f} ms (alone)", "—",
                 "≤ 50 ms", "—" if p99 is None else ("yes" if p99 <= 50 else "**no**")))
    rss, rss_alone = n("hostile_attack_rss"), n("hostile_alone_rss")
    grown = rss - rss_alone if rss is not None and rss_alone is not None else None
    rows.append(("Hostile clients: server peak RSS beside the attack", "—" if rss is None else f"{rss:.1f} MiB",
                 "—" if rss_alone is None else f"{rss_alone:.1f} MiB (alone)",
                 "—" if grown is None else f"+{grown:.1f} MiB", "≤ +80 MiB",
                 "—" if grown is None else ("yes" if grown <= 80 else "**no**")))
    lines = n("hostile_log_lines_per_s")
    rows.append(("Hostile clients: server log lines per second during the attack",
                 "—" if lines is None else f"{lines:.2f}", "—", "—", "≤ 1",
                 "—" if lines is None else ("yes" if lines <= 1 else "**no**")))
    cpu_pct = n("hostile_attack_cpu_pct")
    rows.append(("Hostile clients: server CPU during the attack", "—" if cpu_pct is None else f"{cpu_pct:.0f} % of a core",
                 "—", "—", "—", "—"))

    cpu = r.get("cpu", "?").replace("_", " ")
    print(f"Machine: {r.get('nproc', '?')} cores ({cpu}); load average (1/5/15 min) "
          f"{r.get('load_before', '?').replace('/', ' ')} before, {r.get('load_after', '?').replace('/', ' ')} after; "
          f"run took {r.get('seconds', '?')} s.")
    if n("wakeup_idle_us") is not None and n("fdatasync_16k_ms") is not None:
        print(f"Hand-overs and syncs here (bench/ceilings/machine_probe; an ack pays both, the no-op "
              f"ceiling neither): waking a thread on a core idle for 1 ms {n('wakeup_idle_us'):.0f} µs "
              f"(after 20 µs idle {n('wakeup_busy_us'):.0f} µs); fdatasync of a 16 KiB write in the "
              f"work folder {n('fdatasync_16k_ms'):.2f} ms (p90 {n('fdatasync_16k_p90_ms'):.2f} ms).")
    print(f"Settings: {r.get('settings', '?').replace('/', ', ')}.")
    for label, values, ceilings in (("1 KiB acks / no-op ceiling", ingest_runs, noop_runs),
                                    ("End-to-end samples / SQLite upsert", e2e_runs, upsert_runs)):
        if len(values) > 1:
            pairs = [f"{v or 0:,.0f} / {c:,.0f} = {(v or 0) / c:.0%}" if c else "—" for v, c in zip(values, ceilings)]
            print(f"{label}, {len(pairs)} pairs taken in turn (the table shows medians): " + "; ".join(pairs) + ".")
    bad = {k: v for k, v in r.items()
           if k.endswith("_unexpected") and v not in ("", "0") and not k[:-11].split("_")[-1].isdigit()}
    if bad:
        print("Unexpected answers or connection errors: " + ", ".join(f"{k[:-11]} {v}" for k, v in bad.items()) + ".")
    print()
    print("| Figure | Value | Ceiling (same run) | Ratio | Goal | Met? |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
