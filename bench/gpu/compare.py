"""The same recurrences in PyTorch (a Python loop over steps) and JAX (lax.scan and
lax.associative_scan), on the same GPU, for comparison with gpu_bench (bench/gpu/run.sh).

`compare.py [SUMMARY.json ...]`: with the summaries gpu_bench and scan_bench wrote in the same run,
also prints how many times faster scangen is than each (the issue's target: the tiny body >= 8x
faster than jax.lax.scan), and the associative scan helper (scan_bench.cu, issue 16) against
jax.lax.associative_scan on its problem: h = a * h + u[t], a scalar, 8 x 1024 channels, T = 65536."""
import json
import sys
import time

import jax
import jax.numpy as jnp
import torch


def best_ms(f, reps=5):
    f()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, (time.perf_counter() - t0) * 1e3)
    return best


def linear(n, t):
    a = torch.rand(t, n, device="cuda") * 0.5 + 0.5
    b = torch.rand(t, n, device="cuda") * 2 - 1
    h0 = torch.rand(n, device="cuda") * 2 - 1

    def torch_loop():
        h, out = h0, torch.empty_like(a)
        for s in range(t):
            h = a[s] * h + b[s]
            out[s] = h
        torch.cuda.synchronize()

    ja, jb, jh0 = jnp.asarray(a.cpu().numpy()), jnp.asarray(b.cpu().numpy()), jnp.asarray(h0.cpu().numpy())
    scan = jax.jit(lambda a, b, h0: jax.lax.scan(lambda h, ab: (ab[0] * h + ab[1],) * 2, h0, (a, b))[1])

    def combine(x, y):
        return y[0] * x[0], y[0] * x[1] + y[1]

    assoc = jax.jit(lambda a, b, h0: jax.lax.associative_scan(combine, (a, b.at[0].add(a[0] * h0)))[1])
    times = {"torch loop": best_ms(torch_loop, 2),
             "jax.lax.scan": best_ms(lambda: scan(ja, jb, jh0).block_until_ready()),
             "jax.lax.associative_scan": best_ms(lambda: assoc(ja, jb, jh0).block_until_ready())}
    print(f"linear N={n} T={t}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in times.items()))
    return times


def tiny(t):
    u = jnp.asarray(torch.rand(t).numpy())
    scan = jax.jit(lambda u: jax.lax.scan(lambda h, x: (0.5 * h + x, None), jnp.float32(0.25), u)[0])
    ms = best_ms(lambda: scan(u).block_until_ready())
    print(f"tiny body T={t}: jax.lax.scan {ms:.2f} ms = {ms * 1e6 / t:.1f} ns/step")
    return ms * 1e6 / t


def decayed(n, t, decay=0.999):
    """scan_bench's problem: h[t] = decay * h[t-1] + u[t] with a scalar decay, n channels."""
    u = jnp.asarray(torch.rand(t, n).numpy() * 2 - 1)
    h0 = jnp.asarray(torch.rand(n).numpy() * 2 - 1)

    def combine(x, y):
        return y[0] * x[0], y[0] * x[1] + y[1]

    assoc = jax.jit(lambda u, h0: jax.lax.associative_scan(
        combine, (jnp.full_like(u, decay), u.at[0].add(decay * h0)))[1])
    ms = best_ms(lambda: assoc(u, h0).block_until_ready())
    print(f"decayed N={n} T={t} (scalar a): jax.lax.associative_scan {ms:.2f} ms")
    return ms


def main():
    scangen = {}
    for summary in sys.argv[1:]:
        scangen.update(json.load(open(summary)))
    for n, t in [(1 << 18, 4096), (8 * 1024, 65536)]:
        times = linear(n, t)
        ours = scangen.get(f"linear_{n}_{t}_ms")
        if ours:
            print(f"  scangen {ours:.2f} ms: " +
                  ", ".join(f"{v / ours:.1f}x faster than {k}" for k, v in times.items()))
    n, t = 8 * 1024, 65536
    jax_ms = decayed(n, t)
    for key in sorted(k for k in scangen if k.startswith(f"scan_affine_{n}_{t}_") and k.endswith("_ms")):
        ours = scangen[key]
        print(f"  scangen {key[:-3]} {ours:.2f} ms: {jax_ms / ours:.1f}x faster than jax.lax.associative_scan")
    jax_ns = tiny(1_000_000)
    ours = scangen.get("tiny_ns_per_step")
    if ours:
        ratio = jax_ns / ours
        print(f"  scangen {ours:.1f} ns/step: {ratio:.1f}x faster than jax.lax.scan "
              f"(target >= 8x: {'met' if ratio >= 8 else 'NOT met'})")


main()
