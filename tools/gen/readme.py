#!/usr/bin/env python3
"""Regenerate the measured blocks of README.md from committed result files.

A generated block sits between two HTML comments:

    <!-- generated: NAME (make readme) -->
    ...
    <!-- end generated -->

and NAME says what goes in it (see BLOCKS below). The text between the
markers is replaced by what the block's source file says: never by running a
benchmark, so the same files always give the same README. Every block but the
inline ones starts with a line naming its source file and the command, date
and commit recorded in that file.

Usage:
    tools/gen/readme.py [--check] [FILE ...]

FILE defaults to README.md and tools/crosscheck/README.md; the source files
are read from the repository this script is in, wherever it runs from. With
--check nothing is written: every block that differs is printed as a diff
naming its file and block, and the exit status is 1. Exit 2 on a bad marker
or a missing source. Standard library only.
"""

import csv
import difflib
import glob
import math
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

BENCH_CSV = "tools/bench/results/latest.csv"
CROSS_TXT = "tools/crosscheck/results/latest.txt"
DEFAULT_FILES = ["README.md", "tools/crosscheck/README.md"]
PUBLIC_HEADERS = ["core/include/ls/*.h", "fixmath_phys/include/ls/*.h", "replay/include/ls/*.h", "net/include/ls/*.h"]

MARKER = re.compile(
    r"<!-- generated: ([a-z0-9-]+) \(make readme\) -->(.*?)<!-- end generated -->", re.S
)


class SourceError(Exception):
    pass


# ---- number formatting ----------------------------------------------------


def sig3(v):
    """Three significant digits, never an exponent: 0.000919, 0.962, 6.77, 23.7, 112."""
    if v == 0:
        return "0"
    decimals = max(0, 2 - math.floor(math.log10(abs(v))))
    return f"{v:.{decimals}f}"


def ratio(a, b):
    return f"{a / b:.2f}×" if a > 0 and b > 0 else "–"


# ---- tools/bench/results/latest.csv (`make bench`) ---------------------------


def bench_rows():
    try:
        with open(BENCH_CSV, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise SourceError(f"{BENCH_CSV}: {e.strerror}") from e


def bench_value(rows, section, case, engine, metric):
    for r in rows:
        if (r["section"], r["case"], r["engine"], r["metric"]) == (section, case, engine, metric):
            return r["value"]
    return None


def bench_source_line(rows):
    m = {r["metric"]: r["value"] for r in rows if r["section"] == "machine"}
    cc = re.sub(r"^.*\) ", "cc ", m.get("cc", "cc ?"))
    return (
        f"*From `{BENCH_CSV}`: `make bench`, {m.get('date_utc', 'date unknown')}, "
        f"commit {m.get('commit', 'unknown')}, {m.get('cpu', '?')} × {m.get('cores', '?')} cores, "
        f"{cc} `{m.get('cflags', '')}`, Bullet {m.get('libbullet-dev', '?')}, "
        f"ODE {m.get('libode-dev', '?')}.*"
    )


def block_bench_physics():
    """Section 1 of make bench: ms/tick and ratios per scene (latest.csv)."""
    rows = bench_rows()
    phys = [r for r in rows if r["section"] == "physics"]
    if not phys:
        raise SourceError(f"{BENCH_CSV}: no physics rows (section 1 of make bench)")
    scenes, engines, val = [], [], {}
    for r in phys:
        if r["case"] not in scenes:
            scenes.append(r["case"])
        if r["engine"] not in engines:
            engines.append(r["engine"])
        val[(r["case"], r["engine"], r["metric"])] = float(r["value"])

    def workers(e):
        w = re.fullmatch(r"ours_(\d+)w", e)
        return int(w.group(1)) if w else 1

    ours = sorted((e for e in engines if e.startswith("ours")), key=workers)
    peers = [e for e in engines if not e.startswith("ours")]
    names = {"bullet": "Bullet", "ode": "ODE"}
    label = {e: f"{workers(e)}w" for e in ours}
    label[ours[0]] = "ours"
    has_joints = any(m == "joints" for (_, _, m) in val)
    runs = sorted({int(v) for (s, e, m), v in val.items() if m == "runs"})

    head = ["scene", "bodies"] + (["joints"] if has_joints else [])
    head += ["ours ms/tick"] + [f"ours {label[e]}" for e in ours[1:]]
    head += [names.get(p, p) for p in peers]
    head += [f"{label[o]}/{names.get(p, p)}" for o in ours for p in peers]
    out = [bench_source_line(rows), ""]
    out.append(f"ms per tick, median of {'/'.join(map(str, runs))} runs per engine and scene:")
    out.append("")
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for i, s in enumerate(scenes):
        ms = {e: val.get((s, e, "ms_per_tick"), 0.0) for e in engines}
        ticks = val.get((s, ours[0], "ticks"), 0)
        cells = [f"{s} ({ticks:.0f} ticks)" if i == 0 else f"{s} ({ticks:.0f})"]
        cells.append(f"{val.get((s, ours[0], 'bodies'), 0):.0f}")
        if has_joints:
            cells.append(f"{val.get((s, ours[0], 'joints'), 0):.0f}")
        cells += [sig3(ms[e]) if ms[e] > 0 else "–" for e in ours + peers]
        cells += [ratio(ms[o], ms[p]) for o in ours for p in peers]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def block_bench_sections():
    """Sections 2-6 of make bench in one paragraph: fx, snapshot, replay, relay, viewer."""
    rows = bench_rows()
    out = []

    def fl(section, case, engine, metric):
        v = bench_value(rows, section, case, engine, metric)
        return float(v) if v is not None else None

    speed = [float(r["value"]) for r in rows if r["metric"] == "speedup_vs_libfixmath"]
    if speed:
        out.append(
            f"Inline fixed-point ops are {min(speed):.1f}–{max(speed):.1f}× faster than "
            "libfixmath's calls (`make bench-fx`)."
        )
    size = fl("snapshot", "pile_1000", "ours", "bytes")
    save = fl("snapshot", "pile_1000", "ours", "save_over_memcpy")
    restore = fl("snapshot", "pile_1000", "ours", "restore_over_memcpy")
    if size and save and restore:
        out.append(
            f"Snapshot save or restore of the settled pile_1000 ({size / 1024:.0f} KiB) costs "
            f"{save:.1f}× / {restore:.1f}× a memcpy of the same bytes (`make bench-snapshot`)."
        )
    jobs = [(n, fl("replay", f"arena_4p_jobs{n}", "ours", "x_real_time")) for n in (1, 2)]
    jobs = [f"{x:.0f}× " + ("real time with 1 job" if n == 1 else f"with {n}") for n, x in jobs if x]
    if jobs:
        out.append(
            f"Replay verify of a 4-player arena match runs at {' and '.join(jobs)} "
            "(`make bench-replay`)."
        )
    relay = []
    for r in rows:
        m = re.fullmatch(r"sessions_(\d+)", r["case"])
        if r["section"] == "relay" and m and r["engine"] == "ours" and r["metric"] == "added_p99":
            relay.append((int(m.group(1)), float(r["value"])))
    if relay:
        relay.sort()
        top_n, top = relay[-1]
        verdict = "met" if top < 1000 else "**not met**"
        out.append(
            "With every datagram authenticated, the relay adds "
            + " / ".join(f"{us / 1000:+.2f}" for _, us in relay)
            + " ms p99 at "
            + " / ".join(str(n) for n, _ in relay)
            + f" sessions × 4 peers over a raw UDP echo (goal < 1 ms at {top_n}: {verdict}; "
            "`make bench-net`)."
        )
    wasm = fl("viewer", "arena_4p_3600", "wasm_chromium", "ratio_to_native")
    if wasm:
        out.append(
            f"The wasm viewer re-simulates at {wasm:.2f}× native speed (`make bench-viewer`)."
        )
    if not out:
        raise SourceError(f"{BENCH_CSV}: no rows of sections 2-6")
    return bench_source_line(rows) + "\n\n" + " ".join(out)


# ---- tools/crosscheck/results/latest.txt (`make crosscheck`) -----------------


def cross_results():
    try:
        with open(CROSS_TXT) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise SourceError(f"{CROSS_TXT}: {e.strerror}") from e
    meta = {}
    for line in lines:
        k, _, v = line.partition(" ")
        if k in ("date_utc", "commit", "host"):
            meta[k] = v
    table = [line for line in lines if line.startswith("|")]
    status = [line for line in lines if line.startswith("crosscheck: ")]
    if len(table) < 3 or not status:
        raise SourceError(f"{CROSS_TXT}: no matrix (a table and a 'crosscheck:' line)")
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in table]
    source = (
        f"*From `{CROSS_TXT}`: `make crosscheck`, {meta.get('date_utc', 'date unknown')}, "
        f"commit {meta.get('commit', 'unknown')}, {meta.get('host', 'host unknown')}.*"
    )
    return source, table, cells[0], cells[2:], status[-1]


def block_crosscheck_matrix():
    """The whole matrix of make crosscheck (tools/crosscheck/results/latest.txt)."""
    source, table, _, _, status = cross_results()
    return "\n".join([source, ""] + table + ["", f"`{status}`"])


def is_scene(job):
    return "+" not in job and job not in ("sleep",) and not job.startswith("replay")


def block_crosscheck_summary():
    """The matrix folded per target: scenes, special jobs, SyncTest, snapshots, fx."""
    source, _, head, rows, status = cross_results()
    col = {name: i for i, name in enumerate(head)}
    jobs = head[3:-2]
    scenes = [j for j in jobs if is_scene(j)]
    synctest = [j for j in jobs if j.endswith("+synctest")]
    others = [j for j in jobs if j not in scenes and j not in synctest]
    out = [source, ""]
    titles = ["target", f"scenes ({len(scenes)})"] + others
    titles += [f"synctest ({len(synctest)} scenes)", "snapshot/restore", "fx exactness"]
    out.append("| " + " | ".join(titles) + " |")
    out.append("|" + "---|" * len(titles))

    def group(row, names, all_ok):
        bad = [f"{j} {row[col[j]]}" for j in names if not row[col[j]].startswith("OK")]
        if bad:
            return "FAIL: " + ", ".join(bad[:3]) + (" …" if len(bad) > 3 else "")
        return all_ok

    for row in rows:
        cells = [row[0], group(row, scenes, "OK" if row[1] == "full" else "OK (prefix)")]
        cells += [row[col[j]] for j in others]
        sync = {row[col[j]] for j in synctest}
        cells.append(group(row, synctest, sync.pop() if len(sync) == 1 else "OK"))
        snap = row[col["snapshot/restore"]]
        cells.append("OK" if snap.startswith("OK") else snap)
        fx = row[col["fx exactness"]]
        m = re.fullmatch(r"OK \((\d+) checked\)", fx)
        cells.append(f"OK {sig3(int(m.group(1)) / 1e6)} M" if m else fx)
        out.append("| " + " | ".join(cells) + " |")
    out += ["", f"`{status}`"]
    return "\n".join(out)


# ---- the public headers: what check_exports.sh (make test) counts --------------


def block_exports():
    """Inline: how many LS_API functions the public headers declare.

    The rule of tests/library/check_exports.sh, which checks in make test
    that the shared library exports exactly these."""
    text = []
    for pattern in PUBLIC_HEADERS:
        for path in sorted(glob.glob(pattern)):
            with open(path) as f:
                for line in f:
                    if not re.match(r" *#", line):
                        text.append(line.rstrip("\n").split("//")[0])
    decl = re.compile(r".*LS_API[^(]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*) *\(.*")
    names = set()
    for stmt in " ".join(text).split(";"):
        m = decl.match(stmt) if "LS_API" in stmt else None
        if m:
            names.add(m.group(1))
    if not names:
        raise SourceError("no LS_API declaration in " + " ".join(PUBLIC_HEADERS))
    return str(len(names))


BLOCKS = {
    "bench-physics": block_bench_physics,
    "bench-sections": block_bench_sections,
    "crosscheck-summary": block_crosscheck_summary,
    "crosscheck-matrix": block_crosscheck_matrix,
    "exports": block_exports,
}
INLINE = {"exports"}


def regenerate(path, text):
    """The text with every block regenerated, and the names of the blocks."""
    names = []

    def one(m):
        name = m.group(1)
        if name not in BLOCKS:
            raise SourceError(f"{path}: unknown block '{name}' (known: {', '.join(BLOCKS)})")
        names.append(name)
        body = BLOCKS[name]()
        if name not in INLINE:
            body = "\n\n" + body + "\n\n"
        return f"<!-- generated: {name} (make readme) -->{body}<!-- end generated -->"

    opened = text.count("<!-- generated:")
    new = MARKER.sub(one, text)
    if len(names) != opened or text.count("<!-- end generated -->") != opened:
        raise SourceError(f"{path}: a '<!-- generated: NAME (make readme) -->' marker has no end")
    return new, names


def main(argv):
    args = [a for a in argv if a != "--check"]
    if any(a in ("-h", "--help") for a in args):
        print(__doc__.strip())
        print("\nBlocks:")
        for name, fn in BLOCKS.items():
            print(f"    {name:20} {fn.__doc__.splitlines()[0]}")
        return 0
    bad = [a for a in args if a.startswith("-")]
    if bad:
        print(f"readme.py: unknown option {bad[0]} (see --help)", file=sys.stderr)
        return 2
    check = "--check" in argv
    status = 0
    files = [os.path.abspath(a) for a in args] or [os.path.join(ROOT, f) for f in DEFAULT_FILES]
    os.chdir(ROOT)  # the source files' paths are relative to the repository
    for path in (os.path.relpath(f) for f in files):
        try:
            with open(path) as f:
                old = f.read()
            new, names = regenerate(path, old)
        except (OSError, SourceError) as e:
            print(f"readme.py: {e}", file=sys.stderr)
            return 2
        if new == old:
            print(f"readme: {path}: {len(names)} generated blocks up to date")
            continue
        if not check:
            with open(path, "w") as f:
                f.write(new)
            print(f"readme: {path}: regenerated {len(names)} blocks")
            continue
        status = 1
        for was, now in zip(MARKER.finditer(old), MARKER.finditer(new)):
            name = now.group(1)
            if was.group(0) != now.group(0):
                print(f"readme-check: {path}: block '{name}' differs from its source", end="")
                print(" (run `make readme`):")
                sys.stdout.writelines(
                    difflib.unified_diff(
                        was.group(0).splitlines(True),
                        now.group(0).splitlines(True),
                        f"{path} ({name}, committed)",
                        f"{path} ({name}, generated)",
                    )
                )
                print()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
