#!/usr/bin/env python3
"""The expected outputs of the decoding samples, computed with NumPy independently of scangen.

Writes the manifests samples/edit_distance.runs.json, samples/viterbi.runs.json and
samples/beam_search.runs.json (samples/README.md). The references below follow the samples'
definitions in the samples' dtypes and operation order (f32 sums and matrix products accumulated
left to right from 0, one rounding per operation), so that the floats printed are the ones every
backend must print. The tests never run Python: rerun this only to change the runs.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy
    /tmp/venv/bin/python tools/decode_samples.py
"""
import ctypes
import math
import pathlib

import numpy as np

from scangen_output import arg, show, write_manifest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
f32 = np.float32
LIBM = ctypes.CDLL("libm.so.6")
for name in ("tanhf", "expf", "logf"):
    getattr(LIBM, name).restype = ctypes.c_float
    getattr(LIBM, name).argtypes = [ctypes.c_float]


# ---- edit distance: the textbook table, in Python integers

def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            row.append(min(d[j] + 1, row[j - 1] + 1, d[j - 1] + (x != y)))
        d = row
    return d[-1]


def edit_distance_runs():
    pairs = [
        ([1, 2, 3, 4, 5, 6], [7, 2, 3, 4, 8, 6, 9]),    # kitten / sitting as tokens: 3
        ([5, 3, 5, 3], [5, 3, 5, 3]),                   # equal: 0
        ([1, 2, 3], [3, 2, 1]),
        ([1, 1, 2, 1], [2, 1, 1]),
        ([4], [4]),
        ([4], [9]),
        ([1, 2, 3, 1, 2, 3, 1, 2], [3, 1, 2, 3, 3, 1]),
        ([-1, 1000000000000], [1000000000000, -1, 1000000000000]),
        ([], [1, 2, 3]),                                # empty a: len(b)
        ([1, 2], []),                                   # empty b: len(a)
        ([], []),
    ]
    rng = np.random.default_rng(17)
    for n, m in ((9, 12), (15, 7)):
        pairs.append((rng.integers(0, 4, n).tolist(), rng.integers(0, 4, m).tolist()))
    runs = [{"args": [arg("a", a), arg("b", b)], "stdout": "[%d]" % edit_distance(a, b)} for a, b in pairs]
    runs += [
        {"args": ["a=[1,2.5]", "b=[1]"], "exit": 1, "stderr": "argument 'a': element [1]: 2.5 is not an integer"},
        {"args": ["a=[[1,2]]", "b=[1]"], "exit": 1, "stderr": "argument 'a': expected a rank-1 array of i64"},
        {"args": ["a=[1,2]", "b=[true]"], "exit": 1, "stderr": "argument 'b': element [0]: expected an integer"},
    ]
    return {"description": "Levenshtein distance of two i64 token sequences: a scan over the rows of the "
                           "table, each row an inner scan over b.", "runs": runs}



# ---- Viterbi, in f32: every value is a sum of the inputs, so exact for inputs in quarters

def viterbi(log_pi, log_A, log_B, obs):
    log_pi, log_A, log_B = (np.asarray(x, dtype=f32) for x in (log_pi, log_A, log_B))
    delta = log_pi + log_B[:, obs[0]]
    back = []
    for o in obs[1:]:
        cand = delta[:, None] + log_A               # cand[i, j]: from state i to state j
        back.append(np.argmax(cand, axis=0))        # the first of equal maxima
        delta = cand.max(axis=0) + log_B[:, o]
    path = [int(np.argmax(delta))]
    for pointers in reversed(back):
        path.append(int(pointers[path[-1]]))
    return path[::-1], delta.max()


def quarters(rng, shape, lo, hi):
    return rng.integers(int(lo * 4), int(hi * 4) + 1, shape).astype(f32) / f32(4)


def viterbi_runs():
    rng = np.random.default_rng(5)
    cases = [
        # two states, three symbols (the weather HMM in log-space quarters)
        ([-0.5, -1], [[-0.25, -1.5], [-1, -0.5]], [[-0.5, -1, -2], [-2, -1, -0.25]], [0, 1, 2, 2, 0]),
        ([-0.5, -1], [[-0.25, -1.5], [-1, -0.5]], [[-0.5, -1, -2], [-2, -1, -0.25]], [2]),  # T = 1
        ([-1, -1, -1], [[-1] * 3] * 3, [[-2, -2]] * 3, [1, 0, 0, 1]),                       # all tied: state 0
        ([0, -3], [[-3, 0], [0, -3]], [[0, -5], [-5, 0]], [0, 1, 0, 1, 1]),                 # alternating, one switch
        # a tie between the best last states (0 wins) and between predecessors of a state
        ([-1, -1], [[-1, -1], [-1, -1]], [[-1, -1], [-1, -1]], [0, 1]),
        ([-2, -1], [[-1, -2], [-2, -1]], [[-1, -2], [-2, -1]], [1, 0, 0]),
    ]
    for S, V, T in ((3, 4, 8), (4, 3, 12), (5, 6, 20)):
        cases.append((quarters(rng, S, -3, 0), quarters(rng, (S, S), -3, 0), quarters(rng, (S, V), -3, 0),
                      rng.integers(0, V, T).tolist()))
    runs = []
    for log_pi, log_A, log_B, obs in cases:
        path, score = viterbi(log_pi, log_A, log_B, obs)
        runs.append({"args": [arg("log_pi", log_pi), arg("log_A", log_A), arg("log_B", log_B), arg("obs", obs)],
                     "stdout": show([path, f32(score)])})
    ok = [arg("log_pi", [-0.5, -1]), arg("log_A", [[-0.25, -1.5], [-1, -0.5]]), arg("log_B", [[-0.5, -1, -2], [-2, -1, -0.25]])]
    runs += [
        # no observations: there is no last state to start the backtrace from
        {"args": ok + ["obs=[]"], "exit": 1, "stderr": "index -1 is out of range for dimension 0 of size 0"},
        # an observation outside the vocabulary
        {"args": ok + ["obs=[0,3,1]"], "exit": 1, "stderr": "index 3 is out of range for dimension 0 of size 3"},
        # transitions that are not S x S
        {"args": ok[:1] + ["log_A=[[-0.25,-1.5,-1],[-1,-0.5,-1]]"] + ok[2:] + ["obs=[0]"], "exit": 1,
         "stderr": "argument 'log_A' of 'viterbi': dimension 1 is 3 but"},
    ]
    return {"description": "Viterbi decoding of an HMM in log space: a forward scan with max and argmax along "
                           "axis 0, a reverse scan over the back-pointers.", "runs": runs}


# ---- beam search, in f32 with the operation order of beam_search.scan

def correctly_rounded(fn, libm_fn, x):
    """fn of f32 values, correctly rounded (through f64), checked against glibc's f32 function:
    the expectations must not depend on the math library, so a case with a disagreement is refused."""
    out = np.empty_like(x)
    for i, v in np.ndenumerate(x):
        exact = f32(fn(float(v)))
        if libm_fn(float(v)) != exact:
            raise ValueError("%s(%r) is not correctly rounded by libm" % (libm_fn.__name__, float(v)))
        out[i] = exact
    return out


def matmul(a, b):
    """a @ b in f32, accumulated over k from 0, one rounding per product and per sum."""
    out = np.zeros((a.shape[0], b.shape[1]), dtype=f32)
    for k in range(a.shape[1]):
        out = out + a[:, k:k + 1] * b[k]
    return out


def top_k(x, k):
    """The k largest, in descending order, ties to the lower index."""
    order = sorted(range(len(x)), key=lambda i: (-float(x[i]), i))[:k]
    return x[order], np.array(order, dtype=np.int64)


def beam_search(E, W, Wout, h0, bos, eos, beam, max_len):
    E, W, Wout, h0 = (np.asarray(x, dtype=f32) for x in (E, W, Wout, h0))
    V = E.shape[0]
    h = np.zeros((beam, h0.shape[0]), dtype=f32) + h0
    score = np.where(np.arange(beam) == 0, f32(0), f32(-np.inf)).astype(f32)
    last = np.full(beam, bos, dtype=np.int64)
    ended = np.zeros(beam, dtype=bool)
    only_eos = np.where(np.arange(V) == eos, f32(0), f32(-np.inf)).astype(f32)
    parents, tokens = [], []
    for _ in range(max_len):
        h_new = correctly_rounded(math.tanh, LIBM.tanhf, E[last] + matmul(h, W))
        logits = matmul(h_new, Wout)
        z = logits - logits.max(axis=1)[:, None]
        e = correctly_rounded(math.exp, LIBM.expf, z)
        total = np.zeros(beam, dtype=f32)
        for v in range(V):                          # left to right
            total = total + e[:, v]
        logp = z - correctly_rounded(math.log, LIBM.logf, total)[:, None]
        cand = score[:, None] + np.where(ended[:, None], only_eos, logp)
        best, at = top_k(cand.reshape(-1), beam)
        parent, token = at // V, at % V
        h, score, last = h_new[parent], best.astype(f32), token
        ended = ended[parent] | (token == eos)
        parents.append(parent)
        tokens.append(token)
        if ended.all():
            break
    at, seq = 0, []
    for parent, token in zip(reversed(parents), reversed(tokens)):
        seq.append(int(token[at]))
        at = int(parent[at])
    seq.reverse()
    kept = min(len(seq), sum(t != eos for t in seq) + 1)
    return seq[:kept], score[0], len(tokens)


def eighths(rng, shape, scale):
    return (rng.integers(-8, 9, shape) * scale / 8).astype(f32)


def beam_case(seed, V, H, eos_bias, saturated):
    """Weights in eighths; eos_bias is added to the weights of the eos logit (a positive bias ends
    hypotheses sooner). `saturated`: embeddings of 10 to 16 in size, so that every tanh is -1 or 1
    (exact), and long decodes can be tested; otherwise tanh works in its curved range and only
    short decodes have every call correctly rounded by libm."""
    rng = np.random.default_rng(seed)
    if saturated:
        E = (rng.choice([-1, 1], (V, H)) * rng.integers(80, 129, (V, H)) / 8).astype(f32)
    else:
        E = eighths(rng, (V, H), 1)
    W, Wout, h0 = eighths(rng, (H, H), 0.5), eighths(rng, (H, V), 1), eighths(rng, H, 1)
    Wout[:, 0] += f32(eos_bias)
    return E, W, Wout, h0


def beam_search_runs():
    # (seed, V, H, eos bias, saturated, bos, eos, beam, max_len, what the run must show, its least
    # length); eos is 0 (the bias is on the first column)
    cases = [
        (0, 6, 3, -0.5, True, 1, 0, 3, 10, "stops early", 5),
        (0, 6, 4, 0, True, 2, 0, 3, 12, "runs to max_len", 12),
        (0, 5, 3, 0, True, 4, 0, 4, 10, "stops early", 3),
        (0, 4, 2, 0.25, False, 1, 0, 2, 8, "stops early", 2),
        (0, 4, 2, -1, False, 2, 0, 2, 4, "runs to max_len", 4),
        (0, 5, 2, 0, False, 3, 0, 1, 6, "beam 1 (greedy)", 1),
        (0, 2, 2, 0, False, 1, 0, 3, 4, "more hypotheses than tokens", 1),
        (0, 7, 3, 0.5, False, 1, 0, 4, 1, "max_len 1", 1),
    ]
    runs = []
    for seed, V, H, bias, saturated, bos, eos, beam, max_len, what, least in cases:
        # The first seed from `seed` on whose every tanh, exp and log is correctly rounded by libm
        # and whose run shows `what`.
        for seed in range(seed, seed + 5000):
            E, W, Wout, h0 = beam_case(seed, V, H, bias, saturated)
            try:
                seq, score, steps = beam_search(E, W, Wout, h0, bos, eos, beam, max_len)
            except ValueError:
                continue
            if len(seq) < least or what == "stops early" and steps == max_len:
                continue
            if what == "runs to max_len" and (steps < max_len or seq[-1] == eos):
                continue
            break
        else:
            raise SystemExit("no seed for case %r" % what)
        runs.append({"args": [arg("E", E), arg("W", W), arg("Wout", Wout), arg("h0", h0), "bos=%d" % bos,
                              "eos=%d" % eos, "beam=%d" % beam, "max_len=%d" % max_len],
                     "stdout": show([seq, f32(score)])})
    # All weights zero: every token equally likely, so the ties go to the lower index everywhere.
    zero = [arg("E", np.zeros((3, 2))), arg("W", np.zeros((2, 2))), arg("Wout", np.zeros((2, 3))), arg("h0", [0, 0])]
    for eos, beam, max_len in ((2, 2, 3), (0, 2, 3)):
        seq, score, _ = beam_search(np.zeros((3, 2)), np.zeros((2, 2)), np.zeros((2, 3)), np.zeros(2), 1, eos, beam, max_len)
        runs.append({"args": zero + ["bos=1", "eos=%d" % eos, "beam=%d" % beam, "max_len=%d" % max_len],
                     "stdout": show([seq, f32(score)])})
    runs += [
        # no step: no hypothesis to return
        {"args": zero + ["bos=1", "eos=0", "beam=2", "max_len=0"], "exit": 1,
         "stderr": "index -1 is out of range for dimension 0 of size 0"},
        {"args": zero + ["bos=1", "eos=0", "beam=2", "max_len=-1"], "exit": 1, "stderr": "steps is -1; it must be >= 0"},
        # a start token outside the vocabulary
        {"args": zero + ["bos=3", "eos=0", "beam=2", "max_len=2"], "exit": 1,
         "stderr": "index 3 is out of range for dimension 0 of size 3"},
        # logits of another vocabulary
        {"args": zero[:2] + [arg("Wout", np.zeros((2, 4)))] + zero[3:] + ["bos=1", "eos=0", "beam=2", "max_len=2"],
         "exit": 1, "stderr": "argument 'Wout' of 'beam_search': dimension 1 is 4 but"},
    ]
    return {"description": "A beam search decoder (RETURNN's style): an RNN's hypotheses extended by top_k over "
                           "the flattened candidates, states gathered by back-pointer, until every hypothesis "
                           "ended; a reverse scan backtracks the best.", "runs": runs}

if __name__ == "__main__":
    manifests = {"edit_distance": edit_distance_runs(), "viterbi": viterbi_runs(), "beam_search": beam_search_runs()}
    for name, manifest in manifests.items():
        path = SAMPLES / (name + ".runs.json")
        write_manifest(path, manifest["description"], manifest["runs"])
        print("wrote", path.relative_to(ROOT))
