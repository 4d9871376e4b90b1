"""Prints bench/peers/run.sh's tables from the measurement lines of peers_bench.cpp and peers.py
(workload, H, B, peer, threads, ms, repetitions; tab-separated, on stdin or in the files named):
per workload and thread count, each peer's time, GFLOP/s and ratio to the reference (the
OpenBLAS loop; the hand-written loop for the linear recurrence). Standard library only.
"""
import collections
import fileinput

STEPS = 512
LINEAR_STEPS = 4096
TITLES = {
    "elman": "Elman RNN h[t] = tanh(x[t] @ W_xh + h[t-1] @ W_hh + b), f32, T = 512, I = H",
    "lstm": "LSTM (samples/lstm.scan), f32, T = 512, I = H",
    "linear": "linear recurrence h[t] = a[t] * h[t-1] + b[t], f32, T = 4096, N = 4096 channels",
}
# Columns in order: (peer, heading). The reference comes first.
PEERS = [("reference", None), ("scangen-strict", "scangen strict"), ("scangen-fast", "scangen fast"),
         ("torch", "PyTorch"), ("jax", "JAX")]
REFERENCE = {"elman": ("openblas", "OpenBLAS loop"), "lstm": ("openblas", "OpenBLAS loop"),
             "linear": ("handwritten", "hand-written loop")}
# What a missing measurement means, when it has a known reason.
NO_THREADS = "n/a (no threads option yet)"


def flops(workload, H, B):
    if workload == "linear":
        return 2 * LINEAR_STEPS * H  # H is the channel count N
    gates = 4 if workload == "lstm" else 1
    return 2 * STEPS * B * (H + H) * gates * H  # 2 T B (I + H) (gates x H), I = H


def read(lines):
    """{(workload, threads): {(H, B): {peer: (ms, repetitions)}}}"""
    runs = collections.defaultdict(lambda: collections.defaultdict(dict))
    for line in lines:
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 7:
            continue  # anything else a peer printed
        workload, H, B, peer, threads, ms, reps = fields
        runs[(workload, int(threads))][(int(H), int(B))][peer] = (float(ms), int(reps))
    return runs


def cell(workload, H, B, peer, measured, ref_ms, threads):
    if peer not in measured:
        return NO_THREADS if peer.startswith("scangen") and threads > 1 else "n/a (not run)"
    ms, reps = measured[peer]
    mark = "" if reps >= 5 else f" ({reps} reps)"
    ratio = f", {ms / ref_ms:.2f}x" if ref_ms else ""
    return f"{ms:.1f} ms, {flops(workload, H, B) / ms / 1e6:.1f} GF/s{ratio}{mark}"


def table(workload, threads, by_shape):
    ref_peer, ref_heading = REFERENCE[workload]
    peers = [(ref_peer if p == "reference" else p, ref_heading if p == "reference" else h) for p, h in PEERS]
    size = "N" if workload == "linear" else "H"
    print(f"\n### {TITLES[workload]}: {threads} thread{'s' if threads > 1 else ''}\n")
    print(f"| {size} | B | " + " | ".join(h for _, h in peers) + " |")
    print("|---" * (len(peers) + 2) + "|")
    for (H, B), measured in sorted(by_shape.items()):
        ref_ms = measured.get(ref_peer, (0, 0))[0]
        cells = [cell(workload, H, B, p, measured, ref_ms, threads) for p, _ in peers]
        print(f"| {H} | {B} | " + " | ".join(cells) + " |")


def targets(runs):
    """The issue's targets at 1 thread: scangen strict <= 1.25x the OpenBLAS loop at B >= 32,
    <= 1.0x at B <= 8; scangen fast <= 0.9x the OpenBLAS loop and faster than PyTorch and JAX."""
    print("\n### Targets: scangen strict, 1 thread, against the OpenBLAS loop\n")
    for workload in ("elman", "lstm"):
        for (H, B), m in sorted(runs.get((workload, 1), {}).items()):
            if "scangen-strict" in m and "openblas" in m:
                ratio = m["scangen-strict"][0] / m["openblas"][0]
                limit = 1.25 if B >= 32 else 1.0
                verdict = "met" if ratio <= limit else "not met"
                print(f"- {workload} H={H} B={B}: {ratio:.2f}x (target <= {limit}x): {verdict}")
    print("\n### Targets: scangen fast, 1 thread: <= 0.9x the OpenBLAS loop, faster than PyTorch and JAX\n")
    for workload in ("elman", "lstm"):
        for (H, B), m in sorted(runs.get((workload, 1), {}).items()):
            if "scangen-fast" not in m or "openblas" not in m:
                continue
            fast = m["scangen-fast"][0]
            ratio = fast / m["openblas"][0]
            others = [f"{name} {fast / m[p][0]:.2f}x" for p, name in (("torch", "PyTorch"), ("jax", "JAX")) if p in m]
            verdict = "met" if ratio <= 0.9 and all(fast < m[p][0] for p in ("torch", "jax") if p in m) else "not met"
            against = f"; against {', '.join(others)}" if others else ""
            print(f"- {workload} H={H} B={B}: {ratio:.2f}x the OpenBLAS loop{against}: {verdict}")


def summary(runs, thread_counts):
    """One compact table of every ratio to the reference (for docs/performance.md)."""
    peers = [("scangen-strict", "strict"), ("scangen-fast", "fast"), ("torch", "PyTorch"), ("jax", "JAX")]
    # scangen has no threads option yet: its columns at more threads would be all n/a.
    columns = [(t, p, name) for t in thread_counts for p, name in peers if t == 1 or not p.startswith("scangen")]
    head = [f"{name} {t}t" for t, _, name in columns]
    print("\n### Ratios to the reference (below 1: faster than it); reference time in ms\n")
    print("| workload | H or N | B | " + " | ".join(head) + " | " +
          " | ".join(f"reference {t}t" for t in thread_counts) + " |")
    print("|---" * (len(head) + len(thread_counts) + 3) + "|")
    workloads = sorted({w for w, _ in runs}, key=lambda w: ["elman", "lstm", "linear"].index(w))
    for workload in workloads:
        ref = REFERENCE[workload][0]
        shapes = sorted({s for t in thread_counts for s in runs.get((workload, t), {})})
        for H, B in shapes:
            measured = {t: runs.get((workload, t), {}).get((H, B), {}) for t in thread_counts}
            ref_ms = {t: measured[t].get(ref, (0, 0))[0] for t in thread_counts}
            ratios = [f"{measured[t][p][0] / ref_ms[t]:.2f}" if p in measured[t] and ref_ms[t] else "n/a"
                      for t, p, _ in columns]
            refs = [f"{ref_ms[t]:.1f}" if ref_ms[t] else "n/a" for t in thread_counts]
            print(f"| {workload} | {H} | {B} | " + " | ".join(ratios) + " | " + " | ".join(refs) + " |")


def main():
    runs = read(fileinput.input())
    order = ["elman", "lstm", "linear"]
    for workload, threads in sorted(runs, key=lambda k: (order.index(k[0]) if k[0] in order else 9, k[1])):
        table(workload, threads, runs[(workload, threads)])
    print("\nTimes: the fastest of 5 calls after a warm-up call (fewer where marked: a case stops after "
          "10 s of calls). GF/s: 2 T B (I + H) H flops for Elman, 2 T B (I + H) 4H for LSTM, 2 T N for "
          "the linear recurrence. Ratios: time over the reference's (below 1: faster).")
    targets(runs)
    summary(runs, sorted({t for _, t in runs}))


if __name__ == "__main__":
    main()
