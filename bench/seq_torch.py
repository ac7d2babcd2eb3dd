#!/usr/bin/env python3
# PyTorch peers of `npm run bench -- --only seq` (issue 38): N sequence models trained side by side, as a
# PyTorch user writes them. bench/bench.ts runs this script once per configuration, in a process of its own, as
#
#   python3 bench/seq_torch.py '{"workload": "lstm", "method": "loop", "n": 32, "steps": 20, "threads": 1}'
#
# and reads the one line `RESULT {...}` it prints (with "error" where the method does not run, as nn.LSTM
# under torch.func.vmap does not: the message is the result).
#
# workloads (batch 32, each member its own learning rate, loguniform as netc's `vary lr`, and Adam):
#   lstm:        embedding(10000, 32), LSTM(32) over 100 ids, its last state, dense(1, sigmoid), BCE
#   transformer: embedding(10000, 32) plus a learned [200, 32] position table, one encoder block (2-head
#                self-attention, residual add, layernorm, dense(32, relu), dense(32), residual add, layernorm),
#                the mean over the 200 steps, dense(1, sigmoid), BCE
#   gru:         GRU(64) over 28 rows of 28 pixels, dense(10), softmax cross-entropy
# The data are random ids (or pixels) and labels of those shapes: the time of a step does not depend on them.
#
# methods:
#   loop: N nn.Modules (nn.Embedding + nn.LSTM(batch_first) + nn.Linear; nn.MultiheadAttention in a block;
#         nn.GRU), N torch.optim.Adam, one member after another each step
#   bmm:  the same hand-batched: every weight stacked over the members, torch.bmm per time step (the
#         transformer: bmm over members and batch), one Adam written out with a learning rate per member
#   vmap: torch.func.vmap(grad(functional_call(module))) over stacked module states, Adam written out
# threads: 1 (torch.set_num_threads(1), the BLAS variables 1) or "default" (torch's own: every core).
# Timed from before the first step to after the last step's losses are read back, after one warm-up step;
# peakRss is the process's ru_maxrss.
import json
import math
import os
import resource
import sys
import time

VOCAB, EMBED = 10000, 32
SHAPES = {'lstm': {'t': 100}, 'transformer': {'t': 200}, 'gru': {'t': 28}}
BATCH = 32
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-7


def import_torch(threads):
    if threads == 1:
        for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
            os.environ[var] = '1'
    import torch
    if threads == 1:
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
    torch.manual_seed(0)
    return torch


def member_lrs(n, low, high):
    """Each member's learning rate, log-uniform in [low, high) from a fixed generator."""
    import random
    r = random.Random(0)
    return [math.exp(math.log(low) + r.random() * (math.log(high) - math.log(low))) for _ in range(n)]


LR_RANGE = {'lstm': (1e-3, 1e-2), 'transformer': (3e-4, 3e-3), 'gru': (1e-3, 1e-2)}


def batches(torch, workload, steps):
    """steps batches of random inputs and labels, made before the clock starts."""
    g = torch.Generator().manual_seed(1)
    t = SHAPES[workload]['t']
    out = []
    for _ in range(steps):
        if workload == 'gru':
            out.append((torch.rand(BATCH, 28, 28, generator=g), torch.randint(0, 10, (BATCH,), generator=g)))
        else:
            out.append((torch.randint(0, VOCAB, (BATCH, t), generator=g), torch.randint(0, 2, (BATCH,), generator=g).float()))
    return out


# ---- the modules (loop and vmap) ----------------------------------------------------------------------


def modules(torch):
    nn = torch.nn

    class LstmText(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, EMBED)
            self.lstm = nn.LSTM(EMBED, 32, batch_first=True)
            self.out = nn.Linear(32, 1)

        def forward(self, ids):
            _, (h, _) = self.lstm(self.embed(ids))
            return self.out(h[-1]).squeeze(-1)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, EMBED)
            self.pos = nn.Parameter(torch.randn(200, EMBED) * 0.05)
            self.attn = nn.MultiheadAttention(EMBED, 2, batch_first=True)
            self.norm1 = nn.LayerNorm(EMBED, eps=1e-3)
            self.ff1 = nn.Linear(EMBED, 32)
            self.ff2 = nn.Linear(32, EMBED)
            self.norm2 = nn.LayerNorm(EMBED, eps=1e-3)
            self.out = nn.Linear(EMBED, 1)

        def forward(self, ids):
            x = self.embed(ids) + self.pos
            a, _ = self.attn(x, x, x, need_weights=False)
            n = self.norm1(x + a)
            f = self.ff2(torch.relu(self.ff1(n)))
            return self.out(self.norm2(n + f).mean(dim=1)).squeeze(-1)

    class GruRows(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(28, 64, batch_first=True)
            self.out = nn.Linear(64, 10)

        def forward(self, x):
            _, h = self.gru(x)
            return self.out(h[-1])

    return {'lstm': LstmText, 'transformer': Encoder, 'gru': GruRows}


def loss_of(torch, workload, logits, y):
    F = torch.nn.functional
    if workload == 'gru':
        return F.cross_entropy(logits, y)
    return F.binary_cross_entropy_with_logits(logits, y)


def run_loop(torch, workload, n, data, lrs):
    models = [modules(torch)[workload]() for _ in range(n)]
    opts = [torch.optim.Adam(m.parameters(), lr=lr, eps=EPSILON) for m, lr in zip(models, lrs)]

    def step(x, y):
        losses = []
        for m, o in zip(models, opts):
            o.zero_grad()
            loss = loss_of(torch, workload, m(x), y)
            loss.backward()
            o.step()
            losses.append(loss.detach())
        return torch.stack(losses)

    return step


class StackedAdam:
    """Adam written out over stacked [N, ...] parameters, each member its own learning rate."""

    def __init__(self, torch, params, lrs):
        self.torch, self.params, self.t = torch, params, 0
        self.lr = torch.tensor(lrs)
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    def step(self, grads):
        torch = self.torch
        self.t += 1
        c1, c2 = 1 - BETA1 ** self.t, 1 - BETA2 ** self.t
        with torch.no_grad():
            for p, g, m, v in zip(self.params, grads, self.m, self.v):
                m.mul_(BETA1).add_(g, alpha=1 - BETA1)
                v.mul_(BETA2).addcmul_(g, g, value=1 - BETA2)
                lr = self.lr.view(-1, *([1] * (p.dim() - 1)))
                p.sub_(lr * (m / c1) / ((v / c2).sqrt() + EPSILON))


def run_vmap(torch, workload, n, data, lrs):
    from torch.func import functional_call, grad, stack_module_state, vmap
    Model = modules(torch)[workload]
    models = [Model() for _ in range(n)]
    params, buffers = stack_module_state(models)
    base = Model().to('meta')
    names = list(params)

    def member_loss(p, b, x, y):
        return loss_of(torch, workload, functional_call(base, (p, b), (x,)), y)

    grads_of = vmap(grad(member_loss, has_aux=False), in_dims=(0, 0, None, None))
    losses_of = vmap(member_loss, in_dims=(0, 0, None, None))
    adam = StackedAdam(torch, [params[k] for k in names], lrs)

    def step(x, y):
        g = grads_of(params, buffers, x, y)
        adam.step([g[k] for k in names])
        with torch.no_grad():
            return losses_of(params, buffers, x, y)

    return step


# ---- hand-batched: stacked weights, bmm -----------------------------------------------------------------


def uniform(torch, shape, bound):
    return ((torch.rand(shape) * 2 - 1) * bound).requires_grad_()


def recurrent_params(torch, n, features, units, gates, head):
    """Stacked [N, ...] weights of a recurrent layer (PyTorch's initialisation, U(+-1/sqrt(units))) and its head."""
    k = 1 / units ** 0.5
    p = {
        'wx': uniform(torch, (n, features, gates * units), k),
        'wh': uniform(torch, (n, units, gates * units), k),
        'bx': uniform(torch, (n, 1, gates * units), k),
        'bh': uniform(torch, (n, 1, gates * units), k),
        'wo': uniform(torch, (n, units, head), 1 / units ** 0.5),
        'bo': uniform(torch, (n, 1, head), 1 / units ** 0.5),
    }
    if features == EMBED and head == 1:
        p['embed'] = torch.randn(n, VOCAB, EMBED).requires_grad_()
    return p


def embed_stacked(torch, table, ids):
    """[N, V, D] tables, [B, T] ids shared by the members: [N, B, T, D]. One F.embedding on the tables seen as
    one [N * V, D] table, each member's ids offset by its n * V: its backward is embedding's dense scatter-add
    (table[:, ids]'s advanced-indexing backward took 23 s a step at x32)."""
    n, v, d = table.shape
    offsets = (torch.arange(n) * v).view(n, 1, 1)
    return torch.nn.functional.embedding(ids.unsqueeze(0) + offsets, table.reshape(n * v, d))


def lstm_forward(torch, p, ids):
    n = p['wx'].shape[0]
    x = embed_stacked(torch, p['embed'], ids)  # [N, B, T, D]
    b, t = ids.shape
    xw = torch.baddbmm(p['bx'] + p['bh'], x.reshape(n, b * t, EMBED), p['wx']).reshape(n, b, t, -1)
    h = torch.zeros(n, b, 32)
    c = torch.zeros(n, b, 32)
    # unbind, not xw[:, :, s]: each slice's backward writes a zero tensor of xw's whole size (5 GB a step at x32)
    for xs in xw.unbind(2):
        g = xs + torch.bmm(h, p['wh'])
        i, f, gg, o = g.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
        h = torch.sigmoid(o) * torch.tanh(c)
    return torch.baddbmm(p['bo'], h, p['wo']).squeeze(-1)  # [N, B]


def gru_forward(torch, p, x):
    n = p['wx'].shape[0]
    b, t, f = x.shape
    units = p['wh'].shape[1]
    xw = torch.baddbmm(p['bx'], x.reshape(1, b * t, f).expand(n, -1, -1), p['wx']).reshape(n, b, t, -1)
    h = torch.zeros(n, b, units)
    for xs in xw.unbind(2):
        hw = torch.baddbmm(p['bh'], h, p['wh'])
        xr, xz, xn = xs.chunk(3, dim=-1)
        hr, hz, hn = hw.chunk(3, dim=-1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        h = (1 - z) * torch.tanh(xn + r * hn) + z * h
    return torch.baddbmm(p['bo'], h, p['wo'])  # [N, B, 10]


def encoder_params(torch, n):
    k = 1 / EMBED ** 0.5
    p = {'embed': torch.randn(n, VOCAB, EMBED).requires_grad_(), 'pos': (torch.randn(n, 1, 200, EMBED) * 0.05).requires_grad_()}
    for name, (i, o) in {'q': (EMBED, EMBED), 'k': (EMBED, EMBED), 'v': (EMBED, EMBED), 'o': (EMBED, EMBED), 'f1': (EMBED, 32), 'f2': (32, EMBED), 'out': (EMBED, 1)}.items():
        p['w' + name] = uniform(torch, (n, i, o), k)
        p['b' + name] = torch.zeros(n, 1, o, requires_grad=True)
    for name in ('1', '2'):
        p['g' + name] = torch.ones(n, 1, EMBED, requires_grad=True)
        p['beta' + name] = torch.zeros(n, 1, EMBED, requires_grad=True)
    return p


def encoder_forward(torch, p, ids):
    F = torch.nn.functional
    n = p['wq'].shape[0]
    b, t = ids.shape
    heads, dh = 2, EMBED // 2
    x = (embed_stacked(torch, p['embed'], ids) + p['pos']).reshape(n, b * t, EMBED)

    def dense(v, name):
        return torch.baddbmm(p['b' + name], v, p['w' + name])

    def split(v):  # [N, B*T, D] -> [N*B*H, T, dh]
        return v.reshape(n, b, t, heads, dh).permute(0, 1, 3, 2, 4).reshape(n * b * heads, t, dh)

    q, k, v = split(dense(x, 'q')), split(dense(x, 'k')), split(dense(x, 'v'))
    att = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / dh ** 0.5, dim=-1)
    a = torch.bmm(att, v).reshape(n, b, heads, t, dh).permute(0, 1, 3, 2, 4).reshape(n, b * t, EMBED)
    h = F.layer_norm(x + dense(a, 'o'), (EMBED,), eps=1e-3) * p['g1'] + p['beta1']
    f = dense(torch.relu(dense(h, 'f1')), 'f2')
    h = F.layer_norm(h + f, (EMBED,), eps=1e-3) * p['g2'] + p['beta2']
    pooled = h.reshape(n, b, t, EMBED).mean(dim=2)
    return dense(pooled, 'out').squeeze(-1)  # [N, B]


def run_bmm(torch, workload, n, data, lrs):
    F = torch.nn.functional
    if workload == 'lstm':
        p, forward = recurrent_params(torch, n, EMBED, 32, 4, 1), lstm_forward
    elif workload == 'gru':
        p, forward = recurrent_params(torch, n, 28, 64, 3, 10), gru_forward
    else:
        p, forward = encoder_params(torch, n), encoder_forward
    names = list(p)
    adam = StackedAdam(torch, [p[k] for k in names], lrs)

    def step(x, y):
        out = forward(torch, p, x)
        if workload == 'gru':
            losses = F.cross_entropy(out.reshape(-1, 10), y.repeat(n), reduction='none').reshape(n, -1).mean(dim=1)
        else:
            losses = F.binary_cross_entropy_with_logits(out, y.expand(n, -1), reduction='none').mean(dim=1)
        grads = torch.autograd.grad(losses.sum(), [p[k] for k in names])
        adam.step(grads)
        return losses.detach()

    return step


METHODS = {'loop': run_loop, 'bmm': run_bmm, 'vmap': run_vmap}


def run(job):
    threads = 1 if job.get('threads', 1) == 1 else 'default'
    torch = import_torch(threads)
    workload, n, steps = job['workload'], job['n'], job['steps']
    data = batches(torch, workload, steps + 1)
    lrs = member_lrs(n, *LR_RANGE[workload])
    result = {'workload': workload, 'method': job['method'], 'n': n, 'torch': torch.__version__, 'threads': torch.get_num_threads()}
    try:
        step = METHODS[job['method']](torch, workload, n, data, lrs)
        step(*data[0])  # warm-up: the allocator, the first call's dispatch
    except Exception as e:  # vmap of nn.LSTM / nn.GRU: the message is the result
        first = str(e).strip().split('\n')[0]
        return {**result, 'error': f'{type(e).__name__}: {first[:300]}', 'peakRss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    start = time.perf_counter()
    for x, y in data[1:]:
        losses = step(x, y)
    last = losses.tolist()
    seconds = time.perf_counter() - start
    return {**result, 'seconds': seconds, 'steps': steps, 'memberStepsPerSecond': n * steps / seconds,
            'lastLoss': sum(last) / len(last), 'peakRss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


if __name__ == '__main__':
    print('RESULT ' + json.dumps(run(json.loads(sys.argv[1]))), flush=True)
