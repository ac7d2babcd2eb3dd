#!/usr/bin/env python3
# JAX (Python, XLA on the CPU) peers for `npm run bench`: the forum problem and LeNet-5 as a JAX user who
# wants speed writes them. bench/bench.ts runs this script once per configuration, in a process of its own
# (XLA's thread settings are read once, when jax is imported), as
#
#   python3 bench/jax_xla.py '{"model": "forum", "data": "/tmp/.../forum-train-100.json", "n": 100,
#                              "steps": 2000, "threads": 1}'
#   python3 bench/jax_xla.py '{"model": "lenet", "n": 30, "steps": 40, "threads": 1}'
#
# and reads the one line `RESULT {...}` it prints. `python3 bench/jax_xla.py --probe` prints the versions and
# exits 0 when jax can be imported (the bench reports the JAX rows as skipped, with the reason, otherwise).
#
# threads: 1 sets XLA_FLAGS='--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1' before jax is
# imported (one XLA thread) and pins the process to one core: with the flags alone, jax 0.10.2 still spent 1.4
# CPU seconds a wall second at N=1000 (its runtime's other threads); null leaves JAX's default (every core).
#
# forum (2-20-1 sigmoid MLP, binary cross-entropy clipped at 1e-7 as TF.js's, Adam lr 0.02 beta1 0.9 beta2
# 0.999 epsilon 1e-7, batch 5): the members' weights stacked ([N, 2, 20], [N, 20], [N, 20, 1], [N, 1]),
# jax.vmap(jax.value_and_grad(one member's loss)) with Adam written out, and each epoch one jax.lax.scan over
# its batches inside one jax.jit. The data file is bench/train_loop.py's (bench/lib.ts TrainData: netc's
# training split and every epoch's order of the examples), so JAX trains on netc's batches, as PyTorch does;
# each member's epoch-mean loss is read back at the end of each epoch, as train_loop.py and netc train do.
# XLA's compile is outside the time: every epoch length is compiled and run once before the clock starts.
#
# lenet (bench/lib.ts's LeNet-5 with bench/torch_bench.py's batch of 64, categorical cross-entropy of the
# softmax, Adam lr 0.001): jax.jit of jax.vmap(jax.value_and_grad(one member's loss)) and Adam; one call a
# step and the members' losses read back, timed step by step after one warm-up step (the compile).
import json
import os
import resource
import sys
import time

ONE_THREAD_FLAGS = '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-7
CLIP = 1e-7


def import_jax(threads):
    """jax, with one XLA thread when threads == 1 (the flags must be set before the first import)."""
    if threads == 1:
        os.environ['XLA_FLAGS'] = (os.environ.get('XLA_FLAGS', '') + ' ' + ONE_THREAD_FLAGS).strip()
        if hasattr(os, 'sched_setaffinity'):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.environ.setdefault('JAX_PLATFORMS', 'cpu')
    import jax
    return jax


def probe():
    jax = import_jax(None)
    import jaxlib
    print('PROBE ' + json.dumps({'jax': jax.__version__, 'jaxlib': jaxlib.__version__, 'python': sys.version.split()[0]}))


def adam(jnp, lr, params, grads, m, v, t):
    """One Adam step (tf.train.adam's form, as bench/jax_bench.ts writes it) over matching dicts of arrays."""
    c1 = 1 / (1 - BETA1 ** t)
    c2 = 1 / (1 - BETA2 ** t)
    new_m = {k: BETA1 * m[k] + (1 - BETA1) * grads[k] for k in params}
    new_v = {k: BETA2 * v[k] + (1 - BETA2) * grads[k] * grads[k] for k in params}
    new_p = {k: params[k] - lr * (new_m[k] * c1) / (jnp.sqrt(new_v[k] * c2) + EPSILON) for k in params}
    return new_p, new_m, new_v


def glorot(jax, key, shape, fan_in, fan_out):
    limit = (6 / (fan_in + fan_out)) ** 0.5
    return jax.random.uniform(key, shape, minval=-limit, maxval=limit)


# ---- forum ------------------------------------------------------------------------------------------


def forum_epoch_fn(jax, lr):
    """One epoch: a lax.scan of vmap(value_and_grad) + Adam over the epoch's batches; each member's mean loss."""
    jnp = jax.numpy

    def member_loss(p, x, y):
        h = jax.nn.sigmoid(x @ p['w1'] + p['b1'])
        q = jnp.clip(jax.nn.sigmoid(h @ p['w2'] + p['b2']), CLIP, 1 - CLIP)
        return -jnp.mean(y * jnp.log(q) + (1 - y) * jnp.log(1 - q))

    loss_and_grad = jax.vmap(jax.value_and_grad(member_loss), in_axes=(0, None, None))

    def step(state, batch):
        p, m, v, t = state
        t = t + 1
        losses, g = loss_and_grad(p, batch[0], batch[1])
        p, m, v = adam(jnp, lr, p, g, m, v, t)
        return (p, m, v, t), losses

    def epoch(state, x_all, y_all, order, batch):
        xb = x_all[order].reshape(-1, batch, x_all.shape[1])
        yb = y_all[order].reshape(-1, batch, 1)
        state, losses = jax.lax.scan(step, state, (xb, yb))
        return state, losses.mean(axis=0)

    return jax.jit(epoch, static_argnums=(4,))


def run_forum(jax, job):
    import numpy as onp
    jnp = jax.numpy
    with open(job['data']) as f:
        data = json.load(f)
    n, steps, lr = job['n'], job['steps'], job.get('lr', 0.02)
    count, batch = data['count'], data['batch']
    if count % batch:
        raise ValueError(f'{count} examples do not cut into batches of {batch}: the scan wants equal batches')
    x_all = jnp.asarray(onp.asarray(data['x'], dtype=onp.float32).reshape(count, 2))
    y_all = jnp.asarray(onp.asarray(data['y'], dtype=onp.float32).reshape(count, 1))
    # the epochs' orders, cut to `steps` batches in all (the last epoch may be short)
    orders, left = [], steps
    for order in data['orders']:
        if left <= 0:
            break
        take = min(left, count // batch)
        orders.append(jnp.asarray(onp.asarray(order[:take * batch], dtype=onp.int32)))
        left -= take
    if left > 0:
        raise ValueError(f"the data file's {len(data['orders'])} epochs hold fewer than {steps} steps")
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {'w1': glorot(jax, k1, (n, 2, 20), 2, 20), 'b1': jnp.zeros((n, 20)),
              'w2': glorot(jax, k2, (n, 20, 1), 20, 1), 'b2': jnp.zeros((n, 1))}
    zeros = {k: jnp.zeros_like(a) for k, a in params.items()}
    state = (params, zeros, dict(zeros), jnp.float32(0))
    epoch = forum_epoch_fn(jax, lr)

    # warm-up with the same shapes: compile and run every epoch length once, the results thrown away
    c0 = time.perf_counter()
    for length in sorted({o.shape[0] for o in orders}):
        order = next(o for o in orders if o.shape[0] == length)
        onp.asarray(epoch(state, x_all, y_all, order, batch)[1])
    compile_seconds = time.perf_counter() - c0

    epoch_losses = []
    cpu, start = time.process_time(), time.perf_counter()
    for order in orders:
        state, losses = epoch(state, x_all, y_all, order, batch)
        epoch_losses.append(onp.asarray(losses).tolist())
    seconds = time.perf_counter() - start
    last = epoch_losses[-1]
    return {'seconds': seconds, 'memberStepsPerSecond': n * steps / seconds, 'steps': steps, 'epochs': len(orders),
            'lastLoss': sum(last) / len(last), 'compileSeconds': compile_seconds, 'trainCpuSeconds': time.process_time() - cpu}


# ---- lenet ------------------------------------------------------------------------------------------


def lenet_batch(b):
    """bench/torch_bench.py's LeNet batch (bench/lib.ts makeBatch's LCG): b images NHWC in [0, 1), one-hot labels."""
    import numpy as onp
    seed = 12345

    def nxt():
        nonlocal seed
        seed = (seed * 1103515245 + 12345) % 2147483648
        return seed / 2147483648

    x = onp.asarray([nxt() for _ in range(b * 28 * 28)], dtype=onp.float32).reshape(b, 28, 28, 1)
    y = onp.zeros((b, 10), dtype=onp.float32)
    for i in range(b):
        y[i, int(nxt() * 10)] = 1
    return x, y


def lenet_params(jax, n):
    """Glorot-uniform kernels (HWIO for the convolutions) and zero biases, stacked over n members."""
    jnp = jax.numpy
    shapes = {'c1': ((5, 5, 1, 6), 25, 150), 'c2': ((5, 5, 6, 16), 150, 400),
              'd1': ((400, 120), 400, 120), 'd2': ((120, 84), 120, 84), 'd3': ((84, 10), 84, 10)}
    keys = jax.random.split(jax.random.PRNGKey(1), len(shapes))
    params = {}
    for key, (name, (shape, fan_in, fan_out)) in zip(keys, shapes.items()):
        params[name] = glorot(jax, key, (n, *shape), fan_in, fan_out)
        params[name + 'b'] = jnp.zeros((n, shape[-1]))
    return params


def lenet_step_fn(jax, lr):
    jnp, lax = jax.numpy, jax.lax
    dims = ('NHWC', 'HWIO', 'NHWC')

    def pool(h):
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')

    def member_loss(p, x, y):
        h = lax.conv_general_dilated(x, p['c1'], (1, 1), 'SAME', dimension_numbers=dims) + p['c1b']
        h = pool(jax.nn.relu(h))
        h = lax.conv_general_dilated(h, p['c2'], (1, 1), 'VALID', dimension_numbers=dims) + p['c2b']
        h = pool(jax.nn.relu(h)).reshape(x.shape[0], 400)
        h = jax.nn.relu(h @ p['d1'] + p['d1b'])
        h = jax.nn.relu(h @ p['d2'] + p['d2b'])
        logits = h @ p['d3'] + p['d3b']
        # softmax then categorical cross-entropy, as log_softmax (the same function; torch_bench.py likewise)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))

    loss_and_grad = jax.vmap(jax.value_and_grad(member_loss), in_axes=(0, None, None))

    def step(state, x, y):
        p, m, v, t = state
        t = t + 1
        losses, g = loss_and_grad(p, x, y)
        p, m, v = adam(jnp, lr, p, g, m, v, t)
        return (p, m, v, t), losses

    return jax.jit(step)


def run_lenet(jax, job):
    import numpy as onp
    jnp = jax.numpy
    n, steps = job['n'], job['steps']
    xs, ys = lenet_batch(64)
    x, y = jnp.asarray(xs), jnp.asarray(ys)
    params = lenet_params(jax, n)
    zeros = {k: jnp.zeros_like(a) for k, a in params.items()}
    state = (params, zeros, dict(zeros), jnp.float32(0))
    step = lenet_step_fn(jax, job.get('lr', 0.001))
    c0 = time.perf_counter()
    onp.asarray(step(state, x, y)[1])  # the compile, and one step thrown away
    compile_seconds = time.perf_counter() - c0
    times, cpu = [], []
    cpu0, start = time.process_time(), time.perf_counter()
    for _ in range(steps):
        c, t0 = time.process_time(), time.perf_counter()
        state, losses = step(state, x, y)
        last = onp.asarray(losses).tolist()
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    seconds = time.perf_counter() - start
    return {'seconds': seconds, 'memberStepsPerSecond': n * steps / seconds, 'steps': steps, 'msMedian': median(times),
            'msMin': min(times), 'cpuMsMedian': median(cpu), 'lastLoss': sum(last) / len(last), 'compileSeconds': compile_seconds,
            'trainCpuSeconds': time.process_time() - cpu0}


def median(xs):
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def run(job):
    threads = job.get('threads')
    jax = import_jax(threads)
    cpu0 = time.process_time()
    result = (run_forum if job['model'] == 'forum' else run_lenet)(jax, job)
    return {**result, 'model': job['model'], 'n': job['n'], 'threads': threads,
            'xlaFlags': os.environ.get('XLA_FLAGS', ''), 'jax': jax.__version__, 'cores': os.cpu_count(),
            'coresAllowed': len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else None,
            'cpuSeconds': time.process_time() - cpu0, 'peakRss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--probe':
        probe()
    else:
        print('RESULT ' + json.dumps(run(json.loads(sys.argv[1]))), flush=True)
