#!/usr/bin/env python3
# A PyTorch user's own training loop for the forum problem, against `netc train` end to end in
# `npm run bench` (its "netc train end to end" table). bench/bench.ts runs it as
#
#   python3 bench/train_loop.py '{"data": "/tmp/.../forum-data.json", "n": 100, "steps": 2000}'
#
# and reads the one line `RESULT {...}` it prints. The data file (bench/lib.ts TrainData) holds netc's
# training split of the forum data (xor(n: 1000, noise: 0.3), validation 0) and every epoch's order of the
# examples as netc's trainer draws them, so both train on the same batches.
#
# The loop is what someone who merged the members by hand writes: the N members' weights stacked
# ([N, 2, 20], [N, 1, 20], [N, 20, 1], [N, 1, 1]), torch.baddbmm, one torch.optim.Adam (lr 0.02, epsilon
# 1e-7 as netc's), a batch of 5 cut from the data by the epoch's order each step; each member's mean loss
# over the epoch accumulated on the tensor side and read back at the epoch's end (what netc's trainer
# reports per epoch). One thread; with "threads": "default" in the job, torch's default threading (every
# core: bench/bench.ts's whole-machine row against netc's and JAX's defaults). Timed from before the first step to after the last epoch's losses are
# read back: importing torch, reading the data and building the weights are outside it, as netc train's
# start-up is outside its train_seconds.
import json
import os
import sys
import time

from torch_common import single_threaded_torch, stacked_forum_step


def default_threaded_torch():
    """torch with its default threading: torch_common pinned the BLAS variables to one thread on import, so
    they are removed again before torch is imported."""
    for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
        os.environ.pop(var, None)
    import torch
    torch.manual_seed(0)
    return torch


def run(job):
    torch = default_threaded_torch() if job.get('threads') == 'default' else single_threaded_torch()
    with open(job['data']) as f:
        data = json.load(f)
    n, steps, lr = job['n'], job['steps'], job.get('lr', 0.02)
    count, batch = data['count'], data['batch']
    x_all = torch.tensor(data['x'], dtype=torch.float32).reshape(count, 2)
    y_all = torch.tensor(data['y'], dtype=torch.float32).reshape(count, 1)
    orders = [torch.tensor(o, dtype=torch.long) for o in data['orders']]

    def glorot(fan_in, fan_out):
        limit = (6 / (fan_in + fan_out)) ** 0.5
        return ((torch.rand(n, fan_in, fan_out) * 2 - 1) * limit).requires_grad_()

    w1, w2 = glorot(2, 20), glorot(20, 1)
    b1 = torch.zeros(n, 1, 20, requires_grad=True)
    b2 = torch.zeros(n, 1, 1, requires_grad=True)
    params = [w1, b1, w2, b2]
    opt = torch.optim.Adam(params, lr=lr, eps=1e-7)

    step = 0
    epoch_losses = []
    start = time.perf_counter()
    for order in orders:
        if step >= steps:
            break
        total = torch.zeros(n)
        seen = 0
        for s0 in range(0, count, batch):
            if step >= steps:
                break
            idx = order[s0:s0 + batch]
            xb = x_all[idx].expand(n, -1, -1)
            yb = y_all[idx].expand(n, -1, -1)
            losses = stacked_forum_step(torch, params, opt, xb, yb)
            total += losses * len(idx)
            seen += len(idx)
            step += 1
        epoch_losses.append((total / seen).tolist())
    seconds = time.perf_counter() - start
    last = epoch_losses[-1]
    return {
        'seconds': seconds,
        'memberStepsPerSecond': n * step / seconds,
        'steps': step,
        'epochs': len(epoch_losses),
        'lastLoss': sum(last) / len(last),
        'threads': torch.get_num_threads(),
        'torch': torch.__version__,
    }


if __name__ == '__main__':
    print('RESULT ' + json.dumps(run(json.loads(sys.argv[1]))), flush=True)
