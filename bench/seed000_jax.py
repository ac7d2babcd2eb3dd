#!/usr/bin/env python3
# Seed 000's workload in JAX, as a JAX user who wants speed writes it: fifteen 2-20-1 sigmoid MLPs (binary
# cross-entropy clipped at 1e-7 as TF.js's, Adam lr 0.02, epsilon 1e-7) on the five rows of bench/seed000.csv,
# one batch of all five per step, 1000 steps: the members' weights stacked, jax.vmap(jax.value_and_grad(one
# member's loss)) with Adam written out, every step in one jax.lax.scan inside one jax.jit. The losses are
# read back once, at the end, as bench/seed000.py's are.
#
# bench/bench.ts times this script as a whole process (Python's start-up, importing jax, XLA's compile and the
# training), beside `netc train bench/seed000.net` and `python3 bench/seed000.py --merged-only`; JAX's default
# threading, as a user runs it.
#
#   python3 bench/seed000_jax.py [--csv bench/seed000.csv] [--steps 1000]
import argparse
import csv
import os
import time

import jax
import jax.numpy as jnp

MEMBERS = 15
LR, BETA1, BETA2, EPSILON, CLIP = 0.02, 0.9, 0.999, 1e-7, 1e-7


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return jnp.array([[float(r['x1']), float(r['x2'])] for r in rows]), jnp.array([[float(r['y'])] for r in rows])


def member_loss(p, x, y):
    h = jax.nn.sigmoid(x @ p['w1'] + p['b1'])
    q = jnp.clip(jax.nn.sigmoid(h @ p['w2'] + p['b2']), CLIP, 1 - CLIP)
    return -jnp.mean(y * jnp.log(q) + (1 - y) * jnp.log(1 - q))


loss_and_grad = jax.vmap(jax.value_and_grad(member_loss), in_axes=(0, None, None))


def init(key):
    def glorot(k, shape, fan_in, fan_out):
        limit = (6 / (fan_in + fan_out)) ** 0.5
        return jax.random.uniform(k, shape, minval=-limit, maxval=limit)
    k1, k2 = jax.random.split(key)
    return {'w1': glorot(k1, (MEMBERS, 2, 20), 2, 20), 'b1': jnp.zeros((MEMBERS, 20)),
            'w2': glorot(k2, (MEMBERS, 20, 1), 20, 1), 'b2': jnp.zeros((MEMBERS, 1))}


def train(params, x, y, steps):
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)

    def step(state, t):
        p, m, v = state
        losses, g = loss_and_grad(p, x, y)
        m = jax.tree_util.tree_map(lambda a, b: BETA1 * a + (1 - BETA1) * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: BETA2 * a + (1 - BETA2) * b * b, v, g)
        c1, c2 = 1 / (1 - BETA1 ** t), 1 / (1 - BETA2 ** t)
        p = jax.tree_util.tree_map(lambda a, mk, vk: a - LR * (mk * c1) / (jnp.sqrt(vk * c2) + EPSILON), p, m, v)
        return (p, m, v), losses

    (params, _, _), losses = jax.lax.scan(step, (params, zeros, zeros), jnp.arange(1, steps + 1, dtype=jnp.float32))
    return params, losses[-1]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument('--csv', default=os.path.join(here, 'seed000.csv'))
    parser.add_argument('--steps', type=int, default=1000)
    args = parser.parse_args()
    x, y = read_csv(args.csv)
    start = time.perf_counter()
    _, losses = jax.jit(train, static_argnums=3)(init(jax.random.PRNGKey(0)), x, y, args.steps)
    losses = losses.tolist()
    seconds = time.perf_counter() - start
    print(f'JAX {jax.__version__}: {MEMBERS} MLPs, {x.shape[0]} rows, {args.steps} Adam steps in {seconds:.3f} s '
          f'(compile included), mean loss {sum(losses) / len(losses):.4f}')


if __name__ == '__main__':
    main()
