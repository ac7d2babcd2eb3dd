#!/usr/bin/env python3
# The JAX (XLA on the CPU) peer of `npm run bench -- --only seq` (issue 38): bench/seq_torch.py's three
# workloads as a JAX user who wants speed writes them: one member's loss (lax.scan over the time steps for the
# LSTM and the GRU), jax.jit(jax.vmap(a step: value_and_grad and Adam written out, each member its own
# learning rate)) over the members' stacked parameters. bench/bench.ts runs it once per configuration, as
#
#   python3 bench/seq_jax.py '{"workload": "gru", "n": 32, "steps": 20, "threads": 1}'
#
# and reads the one line `RESULT {...}` it prints. threads 1: one XLA thread and the process pinned to one core
# (bench/jax_xla.py's import_jax); null: JAX's default. XLA's compile is outside the time (one warm-up step).
# The data are random ids (or pixels) and labels of the workload's shapes, as bench/seq_torch.py's.
import json
import math
import resource
import sys
import time

from jax_xla import BETA1, BETA2, EPSILON, import_jax
from seq_torch import BATCH, EMBED, LR_RANGE, SHAPES, VOCAB, member_lrs


def init(jax, workload, key):
    """One member's parameters (the Keras/PyTorch shapes; the scale matters little for the time)."""
    jnp = jax.numpy
    ks = iter(jax.random.split(key, 16))

    def u(shape, fan):
        b = 1 / math.sqrt(fan)
        return jax.random.uniform(next(ks), shape, minval=-b, maxval=b)

    if workload == 'lstm':
        return {'embed': jax.random.normal(next(ks), (VOCAB, EMBED)), 'wx': u((EMBED, 128), 32), 'wh': u((32, 128), 32),
                'b': jnp.zeros(128), 'wo': u((32, 1), 32), 'bo': jnp.zeros(1)}
    if workload == 'gru':
        return {'wx': u((28, 192), 64), 'wh': u((64, 192), 64), 'bx': jnp.zeros(192), 'bh': jnp.zeros(192),
                'wo': u((64, 10), 64), 'bo': jnp.zeros(10)}
    p = {'embed': jax.random.normal(next(ks), (VOCAB, EMBED)), 'pos': 0.05 * jax.random.normal(next(ks), (200, EMBED))}
    for name, (i, o) in {'q': (EMBED, EMBED), 'k': (EMBED, EMBED), 'v': (EMBED, EMBED), 'o': (EMBED, EMBED), 'f1': (EMBED, 32), 'f2': (32, EMBED), 'out': (EMBED, 1)}.items():
        p['w' + name], p['b' + name] = u((i, o), i), jnp.zeros(o)
    for name in ('1', '2'):
        p['g' + name], p['beta' + name] = jnp.ones(EMBED), jnp.zeros(EMBED)
    return p


def forward(jax, workload, p, x):
    jnp = jax.numpy
    if workload == 'lstm':
        xw = p['embed'][x] @ p['wx'] + p['b']  # [B, T, 128]

        def cell(hc, xt):
            h, c = hc
            i, f, g, o = jnp.split(xt + h @ p['wh'], 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), None

        zeros = jnp.zeros((x.shape[0], 32))
        (h, _), _ = jax.lax.scan(cell, (zeros, zeros), jnp.swapaxes(xw, 0, 1))
        return (h @ p['wo'] + p['bo'])[:, 0]
    if workload == 'gru':
        xw = x @ p['wx'] + p['bx']

        def cell(h, xt):
            xr, xz, xn = jnp.split(xt, 3, axis=-1)
            hr, hz, hn = jnp.split(h @ p['wh'] + p['bh'], 3, axis=-1)
            r, z = jax.nn.sigmoid(xr + hr), jax.nn.sigmoid(xz + hz)
            return (1 - z) * jnp.tanh(xn + r * hn) + z * h, None

        h, _ = jax.lax.scan(cell, jnp.zeros((x.shape[0], 64)), jnp.swapaxes(xw, 0, 1))
        return h @ p['wo'] + p['bo']
    return encoder(jax, p, x)


def encoder(jax, p, ids):
    jnp = jax.numpy
    b, t = ids.shape
    heads, dh = 2, EMBED // 2

    def norm(v, g, beta):
        mean = v.mean(-1, keepdims=True)
        var = ((v - mean) ** 2).mean(-1, keepdims=True)
        return (v - mean) / jnp.sqrt(var + 1e-3) * g + beta

    def dense(v, name):
        return v @ p['w' + name] + p['b' + name]

    def split(v):
        return v.reshape(b, t, heads, dh).transpose(0, 2, 1, 3)

    x = p['embed'][ids] + p['pos']
    q, k, v = split(dense(x, 'q')), split(dense(x, 'k')), split(dense(x, 'v'))
    att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh), axis=-1)
    a = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, EMBED)
    h = norm(x + dense(a, 'o'), p['g1'], p['beta1'])
    h = norm(h + dense(jax.nn.relu(dense(h, 'f1')), 'f2'), p['g2'], p['beta2'])
    return dense(h.mean(axis=1), 'out')[:, 0]


def member_loss(jax, workload, p, x, y):
    jnp = jax.numpy
    out = forward(jax, workload, p, x)
    if workload == 'gru':
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(out), y[:, None], axis=1))
    return jnp.mean(jnp.maximum(out, 0) - out * y + jnp.log1p(jnp.exp(-jnp.abs(out))))


def step_fn(jax, workload):
    """jit(vmap(one member's value_and_grad and Adam step)): the members' parameters, moments and learning rates stacked."""
    jnp = jax.numpy

    def member_step(p, m, v, lr, t, x, y):
        loss, g = jax.value_and_grad(lambda q: member_loss(jax, workload, q, x, y))(p)
        c1, c2 = 1 / (1 - BETA1 ** t), 1 / (1 - BETA2 ** t)
        m = jax.tree_util.tree_map(lambda a, b: BETA1 * a + (1 - BETA1) * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: BETA2 * a + (1 - BETA2) * b * b, v, g)
        p = jax.tree_util.tree_map(lambda w, a, b: w - lr * (a * c1) / (jnp.sqrt(b * c2) + EPSILON), p, m, v)
        return p, m, v, loss

    return jax.jit(jax.vmap(member_step, in_axes=(0, 0, 0, 0, None, None, None)))


def run(job):
    threads = job.get('threads')
    jax = import_jax(threads)
    jnp = jax.numpy
    workload, n, steps = job['workload'], job['n'], job['steps']
    params = jax.vmap(lambda k: init(jax, workload, k))(jax.random.split(jax.random.PRNGKey(0), n))
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    lrs = jnp.array(member_lrs(n, *LR_RANGE[workload]), dtype=jnp.float32)
    key = jax.random.PRNGKey(1)
    t = SHAPES[workload]['t']
    data = []
    for _ in range(steps + 1):
        key, kx, ky = jax.random.split(key, 3)
        if workload == 'gru':
            data.append((jax.random.uniform(kx, (BATCH, 28, 28)), jax.random.randint(ky, (BATCH,), 0, 10)))
        else:
            data.append((jax.random.randint(kx, (BATCH, t), 0, VOCAB), jax.random.randint(ky, (BATCH,), 0, 2).astype(jnp.float32)))
    step = step_fn(jax, workload)
    c0 = time.perf_counter()
    params, m, v, losses = step(params, m, v, lrs, 1.0, *data[0])
    losses.block_until_ready()
    compile_seconds = time.perf_counter() - c0
    start = time.perf_counter()
    for i, (x, y) in enumerate(data[1:]):
        params, m, v, losses = step(params, m, v, lrs, float(i + 2), x, y)
    last = losses.tolist()
    seconds = time.perf_counter() - start
    return {'workload': workload, 'n': n, 'steps': steps, 'threads': threads, 'jax': jax.__version__, 'seconds': seconds,
            'memberStepsPerSecond': n * steps / seconds, 'compileSeconds': compile_seconds, 'lastLoss': sum(last) / len(last),
            'peakRss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


if __name__ == '__main__':
    print('RESULT ' + json.dumps(run(json.loads(sys.argv[1]))), flush=True)
