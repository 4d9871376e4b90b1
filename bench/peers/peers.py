"""The Python side of bench/peers/run.sh: times torch.nn.RNN / torch.nn.LSTM (PyTorch CPU) and
jax.jit of lax.scan (JAX CPU) on the shapes of peers_bench.cpp, after checking each against a
NumPy float64 reference, and prints the same tab-separated lines:

    workload  H  B  peer  threads  ms  repetitions

    python peers.py --threads 1 [--quick] [--workload elman|lstm|linear] [--peer torch|jax]

One thread count per process: XLA reads its thread flags once, when jax is imported.
"""
import argparse
import os
import sys
import time

STEPS = 512
REPETITIONS = 5
CASE_BUDGET_SECONDS = 10.0  # as peers_bench.cpp: fewer repetitions for cases this slow
CHECK_STEPS = 4  # the correctness check runs the real B and H over this many steps
LINEAR_T, LINEAR_N = 4096, 4096


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--workload", choices=["elman", "lstm", "linear"])
    p.add_argument("--peer", choices=["torch", "jax"])
    return p.parse_args()


ARGS = parse_args()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's start-up notes (no GPU found, ...)
if ARGS.threads == 1:
    # Must be set before jax is imported. Without it XLA's CPU client uses every core.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402


def emit(workload, H, B, peer, seconds, reps):
    print(f"{workload}\t{H}\t{B}\t{peer}\t{ARGS.threads}\t{seconds * 1e3:.4f}\t{reps}", flush=True)


def fastest(call):
    """call() once to warm up, then the fastest of up to REPETITIONS calls."""
    call()
    best, spent, reps = float("inf"), 0.0, 0
    while reps < REPETITIONS and (reps == 0 or spent < CASE_BUDGET_SECONDS):
        start = time.perf_counter()
        call()
        s = time.perf_counter() - start
        best, spent, reps = min(best, s), spent + s, reps + 1
    return best, reps


def check(what, expected, actual, tolerance=1e-3):
    worst = np.max(np.abs(expected - actual) / np.maximum(1.0, np.abs(expected)))
    if not worst <= tolerance:
        sys.exit(f"{what}: largest relative difference {worst:.3g} from the NumPy reference")
    print(f"checked {what}: largest relative difference {worst:.2g}", file=sys.stderr)


# ---- inputs and NumPy float64 references (the meaning of samples/elman.scan and lstm.scan)

def elman_inputs(rng, T, B, H):
    s = 1 / np.sqrt(H)
    u = lambda shape, lo, hi: rng.uniform(lo, hi, shape).astype(np.float32)
    return u((T, B, H), -1, 1), u((B, H), -1, 1), u((H, H), -s, s), u((H, H), -s, s), u((H,), -0.1, 0.1)


def elman_reference(x, h0, W_xh, W_hh, b):
    h, out = h0.astype(np.float64), []
    for xt in x.astype(np.float64):
        h = np.tanh(xt @ W_xh + h @ W_hh + b)
        out.append(h)
    return np.stack(out)


def lstm_inputs(rng, T, B, H):
    s = 1 / np.sqrt(H)
    u = lambda shape, lo, hi: rng.uniform(lo, hi, shape).astype(np.float32)
    return (u((T, B, H), -1, 1), u((B, H), -1, 1), u((B, H), -1, 1), u((4, H, H), -s, s),
            u((4, H, H), -s, s), u((4, H), -0.1, 0.1))


def lstm_reference(x, h0, c0, W, U, b):
    sig = lambda v: 1 / (1 + np.exp(-v))
    h, c, hs = h0.astype(np.float64), c0.astype(np.float64), []
    for xt in x.astype(np.float64):
        z = [xt @ W[k] + h @ U[k] + b[k] for k in range(4)]
        c = sig(z[1]) * c + sig(z[0]) * np.tanh(z[2])
        h = sig(z[3]) * np.tanh(c)
        hs.append(h)
    return np.stack(hs)


def linear_reference(a, b, h0):
    h, out = h0.astype(np.float64), []
    for at, bt in zip(a.astype(np.float64), b.astype(np.float64)):
        h = at * h + bt
        out.append(h)
    return np.stack(out)


# ---- PyTorch: torch.nn.RNN and torch.nn.LSTM as a user writes them; the linear recurrence as a
# loop over steps (PyTorch has no scan)

def torch_elman(x, h0, W_xh, W_hh, b):
    import torch
    rnn = torch.nn.RNN(W_xh.shape[0], W_xh.shape[1], nonlinearity="tanh", batch_first=False)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(torch.from_numpy(W_xh.T.copy()))
        rnn.weight_hh_l0.copy_(torch.from_numpy(W_hh.T.copy()))
        rnn.bias_ih_l0.copy_(torch.from_numpy(b))
        rnn.bias_hh_l0.zero_()
    xt, h0t = torch.from_numpy(x), torch.from_numpy(h0)[None]

    def run(steps):
        with torch.no_grad():
            return rnn(xt[:steps], h0t)[0]
    return run


def torch_lstm(x, h0, c0, W, U, b):
    import torch
    lstm = torch.nn.LSTM(W.shape[1], W.shape[2], batch_first=False)
    with torch.no_grad():  # gate k's rows of weight_ih_l0 are W[k] transposed
        lstm.weight_ih_l0.copy_(torch.from_numpy(np.concatenate([w.T for w in W])))
        lstm.weight_hh_l0.copy_(torch.from_numpy(np.concatenate([u.T for u in U])))
        lstm.bias_ih_l0.copy_(torch.from_numpy(b.reshape(-1)))
        lstm.bias_hh_l0.zero_()
    xt, state = torch.from_numpy(x), (torch.from_numpy(h0)[None], torch.from_numpy(c0)[None])

    def run(steps):
        with torch.no_grad():
            return lstm(xt[:steps], state)[0]
    return run


def torch_linear(a, b, h0):
    import torch
    at, bt, h0t = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(h0)

    def run(steps):
        out = torch.empty(steps, h0t.shape[0])
        h = h0t
        for t in range(steps):
            torch.addcmul(bt[t], at[t], h, out=out[t])  # b[t] + a[t] * h
            h = out[t]
        return out
    return run


# ---- JAX: jax.jit of lax.scan; the input projection x @ W over all steps is done once before the
# scan, as the OpenBLAS loops and torch.nn.RNN do

def on_device(x, call):
    """run(steps) for a jitted call of the sequence: the inputs are put on the device once, so
    that a run times the computation, not the copy of x."""
    import jax
    whole, short = jax.device_put(x), jax.device_put(x[:CHECK_STEPS])
    return lambda steps: call(whole if steps == len(x) else short).block_until_ready()


def jax_elman(x, h0, W_xh, W_hh, b):
    import jax
    import jax.numpy as jnp

    @jax.jit
    def elman(xs, h0, W_xh, W_hh, b):
        def step(h, xw_t):
            h = jnp.tanh(xw_t + h @ W_hh + b)
            return h, h
        return jax.lax.scan(step, h0, xs @ W_xh)[1]
    args = [jax.device_put(v) for v in (h0, W_xh, W_hh, b)]
    return on_device(x, lambda xs: elman(xs, *args))


def jax_lstm(x, h0, c0, W, U, b):
    import jax
    import jax.numpy as jnp
    H = h0.shape[1]
    W_packed, U_packed = np.concatenate(list(W), axis=1), np.concatenate(list(U), axis=1)  # [I, 4H]

    @jax.jit
    def lstm(xs, h0, c0, W_packed, U_packed, b):
        def step(hc, z_t):
            h, c = hc
            z = z_t + h @ U_packed
            i, f = jax.nn.sigmoid(z[:, :H]), jax.nn.sigmoid(z[:, H:2 * H])
            g, o = jnp.tanh(z[:, 2 * H:3 * H]), jax.nn.sigmoid(z[:, 3 * H:])
            c = f * c + i * g
            h = o * jnp.tanh(c)
            return (h, c), h
        return jax.lax.scan(step, (h0, c0), xs @ W_packed + b.reshape(-1))[1]
    args = [jax.device_put(v) for v in (h0, c0, W_packed, U_packed, b)]
    return on_device(x, lambda xs: lstm(xs, *args))


def jax_linear(a, b, h0):
    import jax

    @jax.jit
    def linear(a, b, h0):
        def step(h, ab):
            h = ab[0] * h + ab[1]
            return h, h
        return jax.lax.scan(step, h0, (a, b))[1]
    whole = [jax.device_put(v) for v in (a, b, h0)]
    short = [jax.device_put(v) for v in (a[:CHECK_STEPS], b[:CHECK_STEPS])]
    return lambda steps: linear(*(whole[:2] if steps == len(a) else short), whole[2]).block_until_ready()


# ---- the runs

def shapes():
    hidden = [256] if ARGS.quick else [256, 512]
    batches = [1, 32] if ARGS.quick else [1, 8, 32, 256]
    return [(H, B) for H in hidden for B in batches]


def bench_sequence_model(workload, make_inputs, reference, builders):
    rng = np.random.default_rng(1)
    for H, B in shapes():
        inputs = make_inputs(rng, STEPS, B, H)
        x = inputs[0]
        expected = reference(x[:CHECK_STEPS], *inputs[1:])
        for peer, build in builders:
            run = build(*inputs)
            check(f"{workload} {peer} H={H} B={B}", expected, np.asarray(run(CHECK_STEPS)))
            seconds, reps = fastest(lambda: run(STEPS))
            emit(workload, H, B, peer, seconds, reps)


def bench_linear(builders):
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 1.0, (LINEAR_T, LINEAR_N)).astype(np.float32)
    b = rng.uniform(-1, 1, (LINEAR_T, LINEAR_N)).astype(np.float32)
    h0 = rng.uniform(-1, 1, LINEAR_N).astype(np.float32)
    expected = linear_reference(a[:CHECK_STEPS], b[:CHECK_STEPS], h0)
    for peer, build in builders:
        run = build(a, b, h0)
        check(f"linear {peer}", expected, np.asarray(run(CHECK_STEPS)))
        seconds, reps = fastest(lambda: run(LINEAR_T))
        emit("linear", LINEAR_N, 1, peer, seconds, reps)


def main():
    use = lambda peer: ARGS.peer in (None, peer)
    if use("torch"):
        import torch
        torch.set_num_threads(ARGS.threads)
    pick = lambda t, j: [p for p in (("torch", t), ("jax", j)) if use(p[0])]
    if ARGS.workload in (None, "elman"):
        bench_sequence_model("elman", elman_inputs, elman_reference, pick(torch_elman, jax_elman))
    if ARGS.workload in (None, "lstm"):
        bench_sequence_model("lstm", lstm_inputs, lstm_reference, pick(torch_lstm, jax_lstm))
    if ARGS.workload in (None, "linear"):
        bench_linear(pick(torch_linear, jax_linear))


if __name__ == "__main__":
    main()
