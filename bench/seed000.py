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
#   python3 bench/seed000.py [--csv bench/seed000.csv] [--steps 1000] [--json] [--merged-only]
import argparse
import csv
import json
import os
import time

from torch_common import linear_uniform, single_threaded_torch, stacked_forum_step

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
    params = [linear_uniform(torch, (MEMBERS, 2, 20), 2), linear_uniform(torch, (MEMBERS, 1, 20), 2),
              linear_uniform(torch, (MEMBERS, 20, 1), 20), linear_uniform(torch, (MEMBERS, 1, 1), 20)]
    opt = torch.optim.Adam(params, lr=LR)
    xn = x.expand(MEMBERS, -1, -1)
    yn = y.expand(MEMBERS, -1, -1)
    start = time.perf_counter()
    for _ in range(steps):
        losses = stacked_forum_step(torch, params, opt, xn, yn)
    values = losses.tolist()
    return time.perf_counter() - start, values


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--csv', default=os.path.join(here, 'seed000.csv'))
    parser.add_argument('--steps', type=int, default=1000)
    parser.add_argument('--json', action='store_true', help='print one line RESULT {...} for bench/bench.ts')
    parser.add_argument('--merged-only', action='store_true', help='time the merged model alone (a repeat of the bench)')
    args = parser.parse_args()

    torch = single_threaded_torch()
    xs, ys = read_csv(args.csv)
    x = torch.tensor(xs, dtype=torch.float32)
    y = torch.tensor(ys, dtype=torch.float32)
    result = {'torch': torch.__version__, 'threads': torch.get_num_threads(), 'steps': args.steps, 'members': MEMBERS, 'rows': len(xs)}
    for name, fn in ((('merged', merged),) if args.merged_only else (('naive', naive), ('merged', merged))):
        seconds, losses = fn(torch, x, y, args.steps)
        result[name] = {'seconds': seconds, 'meanLoss': sum(losses) / len(losses)}
    if args.json:
        print('RESULT ' + json.dumps(result), flush=True)
    else:
        print(f"PyTorch {result['torch']}, one thread: {MEMBERS} MLPs, {len(xs)} rows, {args.steps} Adam steps")
        for name in ('naive', 'merged'):
            if name in result:
                print(f"  {name:6}  {result[name]['seconds']:.3f} s  (mean loss {result[name]['meanLoss']:.4f})")
        # with --merged-only there is no naive loop to compare
        if 'naive' in result:
            print(f"  naive / merged: {result['naive']['seconds'] / result['merged']['seconds']:.1f}x")


if __name__ == '__main__':
    main()
