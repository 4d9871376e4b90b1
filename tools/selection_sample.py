"""Writes samples/selection.runs.json: the expected outputs of samples/selection.scan, computed
with NumPy (run in a virtual environment with numpy; the tests never need Python)."""
import math
import pathlib

import numpy as np

from scangen_output import arg, show, write_manifest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def top_k(x, k):
    """Descending, ties to the lower position, NaN above every number."""
    keys = [(0 if math.isnan(v) else 1, -v if not math.isnan(v) else 0, j) for j, v in enumerate(x)]
    order = [j for _, _, j in sorted(keys)[:k]]
    return [x[j] for j in order], order


def extremes_runs():
    runs = []
    for x in ([[1, 5, 3], [4, 5, 6]], [[2, 2], [2, 2]], [[1, float("nan"), 3], [float("nan"), 0, -1]],
              [[-0.0, 0.0, -1.5]]):
        a = np.array(x, dtype=np.float32)
        out = [np.argmax(a), np.argmin(a), np.argmax(a, axis=0), np.argmin(a, axis=1), np.argmax(a, axis=-1)]
        runs.append({"args": [arg("x", x)], "stdout": show([o.tolist() if isinstance(o, np.ndarray) else o for o in out])})
    runs.append({"args": ["x=@data/f32_0x3.npy"], "exit": 1, "stderr": "argmax of an empty array"})
    return runs


def best_runs():
    runs = []
    cases = [([[1, 5, 3, 5], [4, 2, 6, 0]], 2), ([[3, 1], [2, 2]], 2), ([[1, 2, 3]], 0),
             ([[0.5, float("nan"), 0.25, float("nan")]], 3), ([[7, 7, 7]], 3)]
    for x, k in cases:
        rows = [top_k(r, k) for r in x]
        sums = [sum(r) for r in x]
        sv, si = top_k(sums, min(k, len(x)))
        out = "[" + ",".join([show([r[0] for r in rows], False), show([r[1] for r in rows]), show(sv, False),
                              show(si)]) + "]"
        runs.append({"fn": "best", "args": [arg("x", x), "k=%d" % k], "stdout": out})
    runs.append({"fn": "best", "args": [arg("x", [[1, 2, 3]]), "k=4"], "exit": 1,
                 "stderr": "top_k: k is 4 but the last axis has size 3"})
    runs.append({"fn": "best", "args": [arg("x", [[1, 2, 3]]), "k=-1"], "exit": 1,
                 "stderr": "top_k: k is -1 but the last axis has size 3"})
    return runs


def rows_runs():
    table = np.arange(12, dtype=np.int32).reshape(4, 3) * 10 - 7
    runs = []
    for idx, grid in (([2, 0, 2, -1], [[0, 1], [3, 3]]), ([], [[1]]), ([-4], [[0, 0, 0]])):
        i = np.array(idx, dtype=np.int64)
        g = np.array(grid, dtype=np.int64)
        out = [table[i].tolist(), table[g].tolist(), table[i, 0].tolist(), table[i, 1:].tolist()]
        runs.append({"fn": "rows", "args": [arg("table", table), arg("idx", idx), arg("grid", grid)], "stdout": show(out)})
    runs.append({"fn": "rows", "args": [arg("table", table), arg("idx", [1, 4]), arg("grid", [[0]])], "exit": 1,
                 "stderr": "index 4 is out of range for dimension 0 of size 4"})
    runs.append({"fn": "rows", "args": [arg("table", table), arg("idx", [0]), arg("grid", [[-5]])], "exit": 1,
                 "stderr": "index -5 is out of range for dimension 0 of size 4"})
    return runs


def layout_runs():
    runs = []
    for shape in ((2, 3, 2), (1, 1, 4), (3, 2, 1)):
        x = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
        y = -x - 1
        flat = x.reshape(shape[0], -1)
        out = [np.transpose(x), flat, np.flip(x, axis=0), np.flip(x, axis=-1), np.concatenate((x, y)),
               np.stack((x, y), axis=1), np.concatenate((flat, y.reshape(shape[0], -1)), axis=1)]
        runs.append({"fn": "layout", "args": [arg("x", x), arg("y", y)], "stdout": show([o.tolist() for o in out])})
    x = np.zeros((2, 2, 2), dtype=np.int64)
    runs.append({"fn": "layout", "args": [arg("x", x), arg("y", np.zeros((2, 3, 2), dtype=np.int64))], "exit": 1,
                 "stderr": "argument 'y' of 'layout': dimension 1 is 3 but q = 2"})
    return runs


def mixed_runs():
    runs = []
    for a, b, s in (([1, 2], [0.5], 1.25), ([], [], -3), ([7], [2.5, -1], 0.1)):
        cat = np.concatenate((np.array(a, dtype=np.int32), np.array(b, dtype=np.float32)))
        st = np.stack((np.float64(s), 2 * np.float64(s), np.float64(s) + 1))
        out = "[" + show(cat.tolist()) + "," + show(st.tolist(), False) + "]"
        runs.append({"fn": "mixed", "args": [arg("a", a), arg("b", b), "s=%r" % s], "stdout": out})
    return runs


def pointer_walk_runs():
    runs = []
    rng = np.random.default_rng(17)
    for T, n in ((4, 3), (1, 2), (6, 5)):
        x = (rng.integers(-8, 8, size=(T, n)) / 4).astype(np.float32)
        ptr = rng.integers(-n, n, size=(T, n))
        h = np.zeros(n, dtype=np.float32)
        at, hs = [], []
        for t in range(T):
            at.append(int(np.argmax(x[t] + h)))
            h = h[ptr[t]] + x[t]
            hs.append(h.tolist())
        runs.append({"fn": "pointer_walk", "args": [arg("x", x), arg("ptr", ptr)], "stdout": show([at, hs])})
    runs.append({"fn": "pointer_walk", "args": [arg("x", [[1.0, 2.0]]), arg("ptr", [[0, 2]])], "exit": 1,
                 "stderr": "index 2 is out of range for dimension 0 of size 2"})
    return runs


def joined_runs():
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    b = -np.arange(1, 4, dtype=np.float32).reshape(1, 3)
    runs = []
    for r in (2, 3, 6, 1):
        out = [np.concatenate((a, b)).tolist(), a.reshape(r, -1).tolist()]
        runs.append({"fn": "joined", "args": [arg("a", a), arg("b", b), "r=%d" % r], "stdout": show(out)})
    runs.append({"fn": "joined", "args": [arg("a", a), arg("b", [[1, 2]]), "r=2"], "exit": 1,
                 "stderr": "concat: piece 1: dimension 1 is 2 but must be 3"})
    runs.append({"fn": "joined", "args": [arg("a", a), arg("b", b), "r=4"], "exit": 1,
                 "stderr": "reshape: an array of 6 elements cannot take the shape [4, 1]"})
    runs.append({"fn": "joined", "args": [arg("a", a), arg("b", b), "r=0"], "exit": 1,
                 "stderr": "reshape: an array of 6 elements cannot take the shape [0, 0]"})
    runs.append({"fn": "joined", "args": [arg("a", a), arg("b", b), "r=-2"], "exit": 1,
                 "stderr": "reshape: an array of 6 elements cannot take the shape [-2, 6]"})
    return runs


def paired_runs():
    nan = float("nan")
    runs = []
    for x in ([[[1, 5], [3, 5], [2, -1]], [[0.0, -0.0], [-0.0, 0.0], [nan, 1]]],
              [[[2, nan, 3]], [[-1, -2, -3]]],
              [[[-0.0, 0.0], [0.0, -0.0]]]):
        a = np.array(x, dtype=np.float32)
        # NumPy's max/min propagate NaN; its argmax/argmin take the first NaN, else the first extreme.
        out = [np.max(a, axis=1).tolist(), np.argmax(a, axis=1).tolist(), np.min(a, axis=1).tolist(),
               np.argmin(a, axis=1).tolist()]
        # Of equal zeros the first is kept (its sign too), as the scalar max/min keep their first operand.
        for name, pick in ((0, np.argmax), (2, np.argmin)):
            at = pick(a, axis=1)
            for i in range(a.shape[0]):
                for k in range(a.shape[2]):
                    if not math.isnan(out[name][i][k]):
                        out[name][i][k] = float(a[i, at[i, k], k])
        runs.append({"fn": "paired", "args": [arg("x", x)], "stdout": show(out)})
    return runs


if __name__ == "__main__":
    runs = (paired_runs() + extremes_runs() + best_runs() + rows_runs() + layout_runs() + mixed_runs() + pointer_walk_runs() +
            joined_runs())
    path = ROOT / "samples" / "selection.runs.json"
    write_manifest(path, "argmax/argmin, top_k, gathers, transpose, reshape, flip, concat and stack against NumPy, "
                         "in and out of scans, with their run-time errors.", runs)
    np.save(ROOT / "samples" / "data" / "f32_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    print("wrote", path.relative_to(ROOT))
