# What bench/torch_bench.py, bench/train_loop.py and bench/seed000.py share: PyTorch on one thread, and the
# hand-merged forum model (every member's weights stacked, torch.baddbmm, one optimizer) that each of them
# times. Importing this module pins the BLAS libraries to one thread, so import it before torch.
import os

for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
    os.environ.setdefault(var, '1')


def single_threaded_torch():
    """torch, on one thread (intra- and inter-op), its generator seeded with 0."""
    import torch
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set: torch was used before this call
        pass
    torch.manual_seed(0)
    return torch


def linear_uniform(torch, shape, fan_in):
    """nn.Linear's initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as a leaf that wants its gradient."""
    bound = 1 / fan_in ** 0.5
    return ((torch.rand(shape) * 2 - 1) * bound).requires_grad_()


def stacked_forum_step(torch, params, opt, xb, yb):
    """One step of N stacked 2-20-1 sigmoid MLPs on [N, B, 2] / [N, B, 1]: each member's mean binary
    cross-entropy, their sum backward, one optimizer step. Returns the members' losses, detached."""
    F = torch.nn.functional
    w1, b1, w2, b2 = params
    opt.zero_grad()
    h = torch.sigmoid(torch.baddbmm(b1, xb, w1))
    p = torch.sigmoid(torch.baddbmm(b2, h, w2))
    losses = F.binary_cross_entropy(p, yb, reduction='none').mean(dim=(1, 2))
    losses.sum().backward()
    opt.step()
    return losses.detach()
