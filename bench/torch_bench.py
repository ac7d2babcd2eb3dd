#!/usr/bin/env python3
# PyTorch anchors for `npm run bench`: the bench's workloads in PyTorch, on one thread, timed the way
# bench/lib.ts times netc and the naive TF.js loop (warm-up steps, then steps until a budget is spent;
# the median is reported). bench/bench.ts runs this script once per configuration, as
#
#   python3 bench/torch_bench.py '{"model": "forum", "method": "bmm", "n": 100, "warmup": 5,
#                                  "budgetMs": 1000, "minSteps": 10, "maxSteps": 5000}'
#
# and reads the one line `RESULT {...}` it prints. `python3 bench/torch_bench.py --probe` prints the
# versions and exits 0 when torch can be imported.
#
# A step is what a netc step is: one Adam step of every member on the same batch, then every member's
# loss read back to the host.
#   forum (2-20-1 sigmoid MLP, binary cross-entropy, Adam lr 0.02, batch 5):
#     bmm    all members' weights stacked, [N, 2, 20] and [N, 20, 1], torch.bmm; one torch.optim.Adam
#     vmap   vmap(grad_and_value) of one functional model over the stacked weights (torch.func, or functorch
#            before torch 2); Adam on the stack
#     loop   N nn.Sequential models, each with its own Adam, trained one after another (the naive user)
#   lenet (bench/lib.ts's LeNet-5, categorical cross-entropy, Adam lr 0.001, batch 64):
#     loop     N nn.Module LeNets, each with its own Adam, one after another
#     grouped  one network: conv2d with groups=N over the members' channels, then torch.bmm for the dense
#              layers; one Adam
import json
import os
import resource
import sys
import time

from torch_common import linear_uniform, single_threaded_torch, stacked_forum_step


def rss_bytes():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def blas_library():
    """The BLAS torch's process mapped (Debian's torch uses whichever libblas.so.3 is installed)."""
    try:
        with open('/proc/self/maps') as f:
            libs = {line.split()[-1] for line in f if 'blas' in line.lower() and '.so' in line}
        return sorted(os.path.basename(p) for p in libs) or None
    except OSError:
        return None


def probe():
    import torch
    info = {'torch': torch.__version__, 'python': sys.version.split()[0]}
    # torch.func from torch 2.0 on (functorch's vmap is deprecated there); torch 1.13 has functorch alone
    if hasattr(torch, 'func') and hasattr(torch.func, 'vmap'):
        info['vmap'] = 'torch.func.vmap'
    else:
        try:
            import functorch  # noqa: F401
            info['vmap'] = 'functorch.vmap'
        except ImportError:
            info['vmap'] = None
    print('PROBE ' + json.dumps(info))


def batch(torch, model, b):
    """A deterministic batch (the same LCG as bench/lib.ts makeBatch, so the same values)."""
    seed = 12345

    def nxt():
        nonlocal seed
        seed = (seed * 1103515245 + 12345) % 2147483648
        return seed / 2147483648

    if model == 'forum':
        xs = [nxt() * 2 - 1 for _ in range(b * 2)]
        ys = [1.0 if xs[2 * i] * xs[2 * i + 1] > 0 else 0.0 for i in range(b)]
        return torch.tensor(xs, dtype=torch.float32).reshape(b, 2), torch.tensor(ys, dtype=torch.float32).reshape(b, 1)
    xs = [nxt() for _ in range(b * 28 * 28)]
    # NHWC in bench/lib.ts; torch's convolutions take NCHW, and with one channel the layout is the same
    x = torch.tensor(xs, dtype=torch.float32).reshape(b, 1, 28, 28)
    labels = [int(nxt() * 10) for _ in range(b)]
    return x, torch.tensor(labels, dtype=torch.long)


def loop_step(torch, make, n, lr, loss_of):
    """The naive baseline: n models of their own, each with its own Adam, trained one after another."""
    nets = []
    for _ in range(n):
        m = make()
        nets.append((m, torch.optim.Adam(m.parameters(), lr=lr)))

    def step():
        total = 0.0
        for m, opt in nets:
            opt.zero_grad()
            loss = loss_of(m)
            loss.backward()
            opt.step()
            total += loss.item()
        return total / n
    return step


def forum_step(torch, method, n, x, y):
    nn = torch.nn
    F = torch.nn.functional
    lr = 0.02
    if method == 'loop':
        def make():
            return nn.Sequential(nn.Linear(2, 20), nn.Sigmoid(), nn.Linear(20, 1), nn.Sigmoid())
        return loop_step(torch, make, n, lr, lambda m: F.binary_cross_entropy(m(x), y))

    w1 = linear_uniform(torch, (n, 2, 20), 2)
    b1 = linear_uniform(torch, (n, 1, 20), 2)
    w2 = linear_uniform(torch, (n, 20, 1), 20)
    b2 = linear_uniform(torch, (n, 1, 1), 20)
    params = [w1, b1, w2, b2]
    opt = torch.optim.Adam(params, lr=lr)

    if method == 'bmm':
        xn = x.expand(n, *x.shape)
        yn = y.expand(n, *y.shape)

        def step():
            return stacked_forum_step(torch, params, opt, xn, yn).tolist()
        return lambda: sum(step()) / n

    if method == 'vmap':
        if hasattr(torch, 'func') and hasattr(torch.func, 'vmap'):
            from torch.func import grad_and_value, vmap
        else:
            from functorch import grad_and_value, vmap

        def member_loss(pw1, pb1, pw2, pb2):
            h = torch.sigmoid(x @ pw1 + pb1)
            p = torch.sigmoid(h @ pw2 + pb2)
            return F.binary_cross_entropy(p, y)

        grads_and_losses = vmap(grad_and_value(member_loss, argnums=(0, 1, 2, 3)))

        def step():
            opt.zero_grad()
            grads, losses = grads_and_losses(w1, b1, w2, b2)
            for p, g in zip(params, grads):
                p.grad = g
            opt.step()
            return losses.tolist()
        return lambda: sum(step()) / n

    raise ValueError(f'unknown forum method {method}')


class LeNet:
    """bench/lib.ts naiveModel('lenet') as an nn.Module (softmax folded into the loss)."""

    @staticmethod
    def make(torch):
        nn = torch.nn
        return nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(400, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, 10),
        )


def lenet_step(torch, method, n, x, labels):
    nn = torch.nn
    F = torch.nn.functional
    lr = 0.001
    if method == 'loop':
        # categorical cross-entropy of softmax probabilities, as log_softmax + nll (the same function)
        return loop_step(torch, lambda: LeNet.make(torch), n, lr, lambda m: F.cross_entropy(m(x), labels))

    if method == 'grouped':
        b = x.shape[0]
        conv1 = nn.Conv2d(n, 6 * n, 5, padding=2, groups=n)
        conv2 = nn.Conv2d(6 * n, 16 * n, 5, groups=n)

        def dense(i, o):
            bound = 1 / i ** 0.5
            w = ((torch.rand(n, i, o) * 2 - 1) * bound).requires_grad_()
            bias = ((torch.rand(n, 1, o) * 2 - 1) * bound).requires_grad_()
            return w, bias

        d1, d2, d3 = dense(400, 120), dense(120, 84), dense(84, 10)
        params = list(conv1.parameters()) + list(conv2.parameters()) + [*d1, *d2, *d3]
        opt = torch.optim.Adam(params, lr=lr)
        xn = x.expand(b, n, 28, 28)  # every member sees the same images
        target = labels.repeat(n)  # [N * B], member-major

        def step():
            opt.zero_grad()
            h = F.max_pool2d(F.relu(conv1(xn)), 2)
            h = F.max_pool2d(F.relu(conv2(h)), 2)  # [B, N*16, 5, 5]
            h = h.reshape(b, n, 400).transpose(0, 1)  # [N, B, 400]
            h = F.relu(torch.baddbmm(d1[1], h, d1[0]))
            h = F.relu(torch.baddbmm(d2[1], h, d2[0]))
            logits = torch.baddbmm(d3[1], h, d3[0])  # [N, B, 10]
            losses = F.cross_entropy(logits.reshape(n * b, 10), target, reduction='none').reshape(n, b).mean(dim=1)
            losses.sum().backward()
            opt.step()
            return sum(losses.detach().tolist()) / n
        return step

    raise ValueError(f'unknown lenet method {method}')


def median(xs):
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def run(job):
    torch = single_threaded_torch()
    baseline = rss_bytes()
    peak = [baseline]

    def sample():
        r = rss_bytes()
        if r > peak[0]:
            peak[0] = r

    model, method, n = job['model'], job['method'], job['n']
    members = job.get('members', n)
    t0 = time.perf_counter()
    if model == 'forum':
        x, y = batch(torch, 'forum', 5)
        step = forum_step(torch, method, members, x, y)
    else:
        x, labels = batch(torch, 'lenet', 64)
        step = lenet_step(torch, method, members, x, labels)
    setup_ms = (time.perf_counter() - t0) * 1000
    sample()
    last = float('nan')
    for _ in range(job['warmup']):
        last = step()
        sample()
    times = []
    cpu = []  # the process's CPU time per step, as bench/timing.ts takes netc's
    start = time.perf_counter()
    while (len(times) < job['minSteps'] or (time.perf_counter() - start) * 1000 < job['budgetMs']) and len(times) < job['maxSteps']:
        c = time.process_time()
        t = time.perf_counter()
        last = step()
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        sample()
    return {
        'msMedian': median(times),
        'msMean': sum(times) / len(times),
        'msMin': min(times),
        'cpuMsMedian': median(cpu),
        'cpuMsMin': min(cpu),
        'steps': len(times),
        'warmup': job['warmup'],
        'setupMs': setup_ms,
        'baselineRss': baseline,
        'peakRss': max(peak[0], 0),
        'vmHwm': peak_rss_bytes(),
        'lastLoss': last,
        'threads': torch.get_num_threads(),
        'torch': torch.__version__,
        'blas': blas_library(),
    }


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--probe':
        probe()
    else:
        print('RESULT ' + json.dumps(run(json.loads(sys.argv[1]))), flush=True)
