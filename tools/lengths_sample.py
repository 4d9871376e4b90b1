#!/usr/bin/env python3
"""The expected outputs of samples/lengths.scan and samples/filter_bank.scan, computed with NumPy
from the contract's definition of `lengths` and `offsets` (row b of a batched scan is the plain
scan of its own L[b] steps; after its end a row's states keep their value and its per-step outputs
are 0; a packed batch is the padded one with L[b] = O[b+1] - O[b]), independently of scangen.
Writes samples/lengths.runs.json and samples/filter_bank.runs.json (samples/README.md). The tests never run Python: rerun this only to
change the runs.

    /usr/bin/python3 tools/lengths_sample.py      (apt: python3-numpy)
"""
import pathlib

import numpy as np

from scangen_output import arg, show, write_manifest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATH = "samples/lengths.scan"


def running_sums(x, L):
    T, B = x.shape
    s, o = np.zeros((T, B), np.int64), np.zeros((T, B), np.int64)
    for b in range(B):
        acc = 0
        for t in range(T):
            if t < L[b]:
                acc += x[t, b]
                o[t, b] = x[t, b] * 10
            s[t, b] = acc
    last = s[-1] if T else np.zeros(B, np.int64)
    return [s, o, last]


def reverse_windows(x, L):
    # Taps -1, 0, 1: m = -1, M = 1; the steps are len(x) - 2; row b reads its own L[b] + 2 elements
    # from the end: at step t, tap k reads x[L[b] + 1 - 1 + k - t] (the contract's reverse rule with
    # L[b] + M - m elements).
    T, B = x.shape
    steps = max(T - 2, 0)
    s, y = np.zeros((steps, B), np.int64), np.zeros((steps, B), np.int64)
    for b in range(B):
        acc = 0
        read = lambda k, t: x[L[b] + 1 - 1 + k - t, b]
        for t in range(steps):
            if t < L[b]:
                acc = acc * 2 + read(0, t)
                y[t, b] = read(-1, t) + 10 * read(0, t) + 100 * read(1, t)
            s[t, b] = acc
    return [s, y]


def fibonacci(L, n):
    B = len(L)
    f = np.zeros((n, B), np.int64)
    for b in range(B):
        prev2, prev1 = 0, 1
        for t in range(n):
            if t < L[b]:
                prev2, prev1 = prev1, prev1 + prev2
            f[t, b] = prev1
    return [f]


def prefix_sums(x, L, M):
    T, B, K = x.shape
    r = np.zeros((T, B), np.int64)
    for t in range(T):
        for b in range(B):
            if t < L[b]:
                r[t, b] = x[t, b, :M[t, b]].sum()
    return [r]


def masked_mean(x, L):
    T, B = x.shape
    m = np.arange(T)[:, None] < np.asarray(L)[None, :]
    total = np.zeros(B, np.float32)
    for t in range(T):  # left to right from 0, one f32 rounding per addition, as sum() does
        total = (total + np.where(m[t], x[t], np.float32(0))).astype(np.float32)
    return [m, (total / np.maximum(np.asarray(L), 1).astype(np.float32)).astype(np.float32)]


def packed_sums(x, O):
    B = len(O) - 1
    L = [O[b + 1] - O[b] for b in range(B)]
    steps = max(L + [0])
    out = []
    for backward in (False, True):
        s, o = np.zeros((steps, B), np.int64), np.zeros(len(x), np.int64)
        for b in range(B):
            seq = list(x[O[b]:O[b + 1]])
            if backward:
                seq = seq[::-1]
            acc = 0
            for t in range(steps):
                if t < L[b]:
                    o[O[b] + t] = seq[t] * 10 + acc
                    acc += seq[t]
                s[t, b] = acc
        out += [s, o]
    return out


def filter_bank(x, O, b0, b1, b2, a1, a2):
    """Each signal through its biquad, in the sample's operation order (f64, left to right)."""
    B = len(O) - 1
    y, last = np.zeros(len(x)), np.zeros(B)
    for b in range(B):
        u1 = u2 = y1 = y2 = 0.0
        for n in range(O[b], O[b + 1]):
            v = b0[b] * x[n] + b1[b] * u1 + b2[b] * u2 - a1[b] * y1 - a2[b] * y2
            u2, u1, y2, y1 = u1, x[n], y1, v
            y[n] = v
        last[b] = y1
    return [y, last]


def run(fn, args, results, f32=True):
    return {"fn": fn, "args": [arg(k, v) for k, v in args], "stdout": show(results, f32)}


def runs():
    rng = np.random.default_rng(29)
    out = []
    x = rng.integers(-9, 10, (4, 3))
    for L in ([4, 2, 0], [4, 4, 4], [0, 0, 0], [1, 3, 2]):
        out.append(run("running_sums", [("x", x), ("L", L)], running_sums(x, L)))
    out.append(run("running_sums", [("x", x[:, :1]), ("L", [3])], running_sums(x[:, :1], [3])))
    x = rng.integers(1, 10, (6, 4))
    for L in ([4, 2, 0, 1], [4, 4, 4, 4]):
        out.append(run("reverse_windows", [("x", x), ("L", L)], reverse_windows(x, L)))
    for L, n in (([5, 2, 0], 6), ([3], 3), ([0, 1], 0 + 1)):
        out.append(run("fibonacci", [("L", L), ("n", n)], fibonacci(L, n)))
    x = rng.integers(-5, 6, (3, 2, 4))
    M = np.array([[4, 1], [0, 3], [2, 2]])
    out.append(run("prefix_sums", [("x", x), ("L", [3, 2]), ("M", M)], prefix_sums(x, [3, 2], M)))
    xf = rng.integers(-8, 9, (3, 3)).astype(np.float32) / np.float32(4)
    out.append(run("masked_mean", [("x", xf), ("L", [3, 1, 0])], masked_mean(xf, [3, 1, 0])))
    x = rng.integers(-9, 10, 9)
    for O in ([0, 3, 3, 7, 9], [0, 9], [0, 0, 0], [0, 2, 4, 6, 8, 9]):
        out.append(run("packed_sums", [("x", x[:O[-1]]), ("O", O)], packed_sums(list(x[:O[-1]]), O)))
    out.append({"fn": "packed_sums", "args": [arg("x", x), arg("O", [0, 4, 3, 9])], "exit": 1,
                "stderr": "lengths.scan:87:33: error: offsets[2] is 3, below offsets[1] = 4; offsets must not decrease"})
    out.append({"fn": "packed_sums", "args": [arg("x", x), arg("O", [0, 4, 8])], "exit": 1,
                "stderr": "lengths.scan:87:33: error: offsets[2] is 8 but the packed sequences have 9 rows"})
    # Errors: a length beyond the steps, a negative length, a batch that disagrees, an inner
    # length beyond the inner scan's steps.
    x = rng.integers(-9, 10, (4, 3))
    out.append({"fn": "running_sums", "args": [arg("x", x), arg("L", [4, 5, 0])], "exit": 1,
                "stderr": "lengths.scan:9:33: error: lengths[1] is 5; it must lie in 0..4, the scan's number of steps"})
    out.append({"fn": "running_sums", "args": [arg("x", x), arg("L", [-1, 0, 0])], "exit": 1,
                "stderr": "lengths.scan:9:33: error: lengths[0] is -1; it must lie in 0..4, the scan's number of steps"})
    out.append({"fn": "last_sums", "args": [arg("x", x), arg("L", [1, 2])], "exit": 1,
                "stderr": "lengths.scan:60:25: error: sequence 'x': dimension 1 is 3 but must be len(lengths) = 2"})
    out.append(run("last_sums", [("x", x), ("L", [1, 2, 4])], [running_sums(x, [1, 2, 4])[2]]))
    x = rng.integers(-5, 6, (2, 2, 3))
    out.append({"fn": "prefix_sums", "args": [arg("x", x), arg("L", [2, 1]), arg("M", [[1, 4], [0, 0]])],
                "exit": 1, "stderr": "error: lengths[1] is 4; it must lie in 0..3, the scan's number of steps"})
    return out


def tagger_runs():
    """Random words, their letters' true tags (1 for a vowel) and 0 past each word's end; the same
    words again with other values in the padding must give the same tags."""
    rng = np.random.default_rng(11)
    out = []
    for B, T in ((4, 5),):
        L = rng.integers(1, T + 1, B)
        L[0] = T
        letters = rng.integers(0, 26, (T, B))
        tags = np.zeros((T, B), np.int64)
        for b in range(B):
            for t in range(L[b]):
                tags[t, b] = int(letters[t, b] in (0, 4, 8, 14, 20))
        for padding_seed in (1, 2):
            padded = letters.copy()
            other = np.random.default_rng(padding_seed).integers(0, 26, (T, B))
            for b in range(B):
                padded[L[b]:, b] = other[L[b]:, b]
            out.append(run("train_and_tag", [("letters", padded), ("L", L), ("epochs", 25)], [True, tags]))
    return out


write_manifest(ROOT / "samples" / "tagger.runs.json",
               "A bidirectional GRU tagger that trains itself (lengths = L, sequence_mask, grad in a scan): "
               "its loss falls below a quarter of its start and it tags every letter of every word right; other padding, the "
               "same tags. Expected tags from NumPy (tools/lengths_sample.py)", tagger_runs())


def filter_bank_runs():
    rng = np.random.default_rng(7)
    out = []
    for O in ([0, 5, 5, 12, 20], [0, 20], [0, 1, 2, 3]):
        B, N = len(O) - 1, O[-1]
        x = np.round(rng.uniform(-1, 1, N), 3)
        b0, b1, b2 = (np.round(rng.uniform(-0.5, 0.5, B), 3) for _ in range(3))
        a1, a2 = np.round(rng.uniform(-0.6, 0.6, B), 3), np.round(rng.uniform(-0.3, 0.3, B), 3)
        args = [("x", x), ("O", O), ("b0", b0), ("b1", b1), ("b2", b2), ("a1", a1), ("a2", a2)]
        out.append(run("filter_bank", args, filter_bank(x, O, b0, b1, b2, a1, a2), f32=False))
    return out


write_manifest(ROOT / "samples" / "filter_bank.runs.json",
               "Second-order IIR filters over a packed batch of signals of different lengths (offsets = O); "
               "expectations from a plain NumPy loop (tools/lengths_sample.py)", filter_bank_runs())
write_manifest(ROOT / "samples" / "lengths.runs.json",
               "Variable-length batches (lengths = L): each row's own steps, held states, zero outputs after a "
               "row's end, reverse within each row, two lags with steps, a nested scan with lengths from a step, "
               "sequence_mask, packed batches (offsets = O); expectations from NumPy (tools/lengths_sample.py)", runs())
