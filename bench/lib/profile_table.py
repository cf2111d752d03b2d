#!/usr/bin/env python3
"""Groups `perf report --no-children --sort dso,sym --stdio -g none` (stdin) into Markdown
tables for bench/profile: CPU by library, by folder of our code, and the top symbols.

A line of the report: "    12.34%  healthhook  [.] hh::http::Session::run()". Inside the
healthhook binary, a symbol's namespace names its folder; Boost, std and simdjson templates
instantiated in our code count as such, not as ours."""
import argparse
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$")

# Namespace prefix -> folder, most specific first.
FOLDERS = [
    ("hh::store::pgread", "store/postgres"), ("hh::pg", "store/postgres"), ("hh::sqlite", "store/sqlite"),
    ("hh::store", "store"), ("hh::http_client", "common/http_client"), ("hh::http", "receiver/http"),
    ("hh::signature", "receiver/signature"), ("hh::events", "events"), ("hh::processor", "processor"),
    ("hh::fetcher", "fetcher"), ("hh::api", "api"), ("hh::forward", "forward"), ("hh::metrics", "metrics"),
    ("hh::console", "console"), ("hh::replay", "replay"), ("hh::config", "config"), ("hh::app", "app"),
    ("hh::cli", "cli"), ("hh::", "common"),
]
ALLOCATION = re.compile(r"^(_int_malloc|_int_free|malloc|free|cfree|calloc|realloc|unlink_chunk|malloc_consolidate|"
                        r"tcache_\w+|_int_realloc|__libc_malloc|__libc_free|__libc_calloc|operator new|operator delete)")


def library(dso, symbol):
    if dso.startswith("[kernel") or dso == "[unknown]" and symbol.startswith("0xffff"):
        return "kernel"
    if dso.startswith("libc.so") or dso.startswith("libc-"):
        return "libc: malloc/free" if ALLOCATION.match(symbol) else "libc: other"
    if dso.startswith("libstdc++"):
        return "libstdc++: operator new/delete" if ALLOCATION.match(symbol) else "libstdc++"
    if dso.startswith("libsqlite3"):
        return "SQLite"
    if dso.startswith("libcrypto") or dso.startswith("libssl"):
        return "OpenSSL"
    if dso.startswith("libsimdjson"):
        return "simdjson"
    if dso == "healthhook":
        if symbol.startswith("hh::") or symbol.startswith("(anonymous namespace)") or "hh::" in symbol[:60]:
            return "healthhook: our code"
        if symbol.startswith("boost::"):
            return "healthhook: Boost (Asio, Beast) templates"
        if symbol.startswith("simdjson::"):
            return "healthhook: simdjson templates"
        if symbol.startswith("std::") or symbol.startswith("__gnu_cxx"):
            return "healthhook: std templates"
        return "healthhook: other"
    return dso


def folder(symbol):
    for prefix, name in FOLDERS:
        if prefix in symbol[:80]:
            return name
    return "(no namespace)"


def table(title, rows, total):
    out = [f"| {title} | CPU % |", "|---|---:|"]
    for name, share in sorted(rows.items(), key=lambda item: -item[1]):
        out.append(f"| {name} | {100 * share / total:.1f} |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    by_library, by_folder, symbols = defaultdict(float), defaultdict(float), []
    total = 0.0
    for line in sys.stdin:
        match = LINE.match(line)
        if not match:
            continue
        share, dso, _, symbol = float(match[1]), match[2], match[3], match[4].strip()
        total += share
        group = library(dso, symbol)
        by_library[group] += share
        if group == "healthhook: our code":
            by_folder[folder(symbol)] += share
        symbols.append((share, dso, symbol))
    if total == 0:
        print("(no samples: was perf allowed to attach? see kernel.perf_event_paranoid)")
        return
    print(table("Library", by_library, total))
    print()
    ours = sum(by_folder.values())
    print(f"Our code by folder ({100 * ours / total:.1f} % of all samples):")
    print()
    print(table("Folder", by_folder, total))
    print()
    print(f"Top {args.top} symbols:")
    print()
    print("| CPU % | Library | Symbol |")
    print("|---:|---|---|")
    for share, dso, symbol in sorted(symbols, key=lambda s: -s[0])[: args.top]:
        short = symbol if len(symbol) <= 110 else symbol[:107] + "..."
        short = short.replace("|", "\\|")
        print(f"| {100 * share / total:.1f} | {dso} | `{short}` |")


if __name__ == "__main__":
    main()
