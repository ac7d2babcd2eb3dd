#!/usr/bin/env python3
# Seed 000's workload in PyTorch, as the forum question's two versions: fifteen 2-20-1 sigmoid MLPs
# (binary cross-entropy, Adam lr 0.02) on the five rows of bench/seed000.csv, one batch of all five per step,
# 1000 steps.
#
#   naive   15 nn.Modules, each with its own optimizer, trained one after another (the question's loop)
#   merged  the hand-merged model: the 15 members' weights stacked ([15, 2, 20], [15, 1, 20], [15, 20, 1],
#           [15, 1, 1]), torch.baddbmm, the sum of the members' mean losses, one optimizer
#
# Each is timed on the CPU, one thread, from its first step to its last: importing torch, reading the csv
# and building the models are outside the time. The losses are read back once, at the end, as the
# question's code prints them. bench/seed000.net is the same model and data for `netc train`; bench/bench.ts
# runs this script with --json and reads the one line `RESULT {...}` it prints.
#
#   python3 bench/seed000.py [--csv bench/seed000.csv] [--steps 1000] [--json]
import argparse
import csv
import json
import os
import time

for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
    os.environ.setdefault(var, '1')

MEMBERS = 15
LR = 0.02


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return [[float(r['x1']), float(r['x2'])] for r in rows], [[float(r['y'])] for r in rows]


def naive(torch, x, y, steps):
    nn = torch.nn
    models = [nn.Sequential(nn.Linear(2, 20), nn.Sigmoid(), nn.Linear(20, 1), nn.Sigmoid()) for _ in range(MEMBERS)]
    optimizers = [torch.optim.Adam(m.parameters(), lr=LR) for m in models]
    loss_fn = nn.BCELoss()
    start = time.perf_counter()
    for _ in range(steps):
        for model, opt in zip(models, optimizers):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
    losses = [loss_fn(m(x), y).item() for m in models]
    return time.perf_counter() - start, losses


def merged(torch, x, y, steps):
    F = torch.nn.functional

    def uniform(shape, fan_in):
        bound = 1 / fan_in ** 0.5  # nn.Linear's initialisation
        return ((torch.rand(shape) * 2 - 1) * bound).requires_grad_()

    w1, b1 = uniform((MEMBERS, 2, 20), 2), uniform((MEMBERS, 1, 20), 2)
    w2, b2 = uniform((MEMBERS, 20, 1), 20), uniform((MEMBERS, 1, 1), 20)
    opt = torch.optim.Adam([w1, b1, w2, b2], lr=LR)
    xn = x.expand(MEMBERS, -1, -1)
    yn = y.expand(MEMBERS, -1, -1)
    start = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        h = torch.sigmoid(torch.baddbmm(b1, xn, w1))
        p = torch.sigmoid(torch.baddbmm(b2, h, w2))
        losses = F.binary_cross_entropy(p, yn, reduction='none').mean(dim=(1, 2))
        losses.sum().backward()
        opt.step()
    values = losses.detach().tolist()
    return time.perf_counter() - start, values


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--csv', default=os.path.join(here, 'seed000.csv'))
    parser.add_argument('--steps', type=int, default=1000)
    parser.add_argument('--json', action='store_true', help='print one line RESULT {...} for bench/bench.ts')
    args = parser.parse_args()

    import torch
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.manual_seed(0)
    xs, ys = read_csv(args.csv)
    x = torch.tensor(xs, dtype=torch.float32)
    y = torch.tensor(ys, dtype=torch.float32)
    result = {'torch': torch.__version__, 'threads': torch.get_num_threads(), 'steps': args.steps, 'members': MEMBERS, 'rows': len(xs)}
    for name, fn in (('naive', naive), ('merged', merged)):
        seconds, losses = fn(torch, x, y, args.steps)
        result[name] = {'seconds': seconds, 'meanLoss': sum(losses) / len(losses)}
    if args.json:
        print('RESULT ' + json.dumps(result), flush=True)
    else:
        print(f"PyTorch {result['torch']}, one thread: {MEMBERS} MLPs, {len(xs)} rows, {args.steps} Adam steps")
        for name in ('naive', 'merged'):
            print(f"  {name:6}  {result[name]['seconds']:.3f} s  (mean loss {result[name]['meanLoss']:.4f})")
        print(f"  naive / merged: {result['naive']['seconds'] / result['merged']['seconds']:.1f}x")


if __name__ == '__main__':
    main()
