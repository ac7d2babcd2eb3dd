"""Checks `netc extract --all --format pytorch` output against reference outputs (test/export.test.ts).

    python3 check_export.py DIR REFERENCE.json [DIR REFERENCE.json ...]

DIR holds member-K/model.py + model.safetensors for each member, model.py, ensemble.safetensors and
members.json; REFERENCE.json the input (NCHW) and each member's output as the TF.js model computes it. Each
member's module loads its state_dict strictly and computes the reference within TOLERANCE; every member
computes it again from ensemble.safetensors through torch.func.functional_call (all at once with
torch.func.vmap where the members share their layer arguments and it has no nn.LSTM or nn.GRU, which vmap
cannot batch), and ensemble.safetensors is what
torch.func.stack_module_state makes of the members' modules. Exits 1 with a line saying what differs.
"""
import importlib.util
import json
import sys
from pathlib import Path

import torch
from torch import nn
from safetensors.torch import load_file, save_file
from torch.func import functional_call, stack_module_state, vmap

TOLERANCE = 1e-5


def load_class(path):
    spec = importlib.util.spec_from_file_location(f"netc_model_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Model


def tensor(entry):
    return torch.tensor(entry["data"], dtype=torch.float32).reshape(entry["shape"])


def expect_close(what, got, want):
    if tuple(got.shape) != tuple(want.shape):
        sys.exit(f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}")
    diff = (got - want).abs().max().item()
    if not diff <= TOLERANCE:
        sys.exit(f"{what}: differs from the reference by {diff}")
    return diff


def train_member(Model, row, out, x, tokens=None):
    """Trains the first member a few SGD steps in PyTorch (on random inputs: token ids in [0, tokens) where
    the input holds them); writes trained.safetensors and its output on x."""
    torch.manual_seed(0)
    model = Model(**row["args"])
    model.load_state_dict(load_file(out / f"member-{row['member']}" / "model.safetensors"), strict=True)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.enable_grad():
        for _ in range(3):
            optimizer.zero_grad()
            inputs = torch.randint(0, tokens, x.shape).float() if tokens else torch.randn_like(x)
            loss = model(inputs).square().mean()
            loss.backward()
            optimizer.step()
    model.eval()
    save_file(model.state_dict(), out / "trained.safetensors")
    y = model(x)
    (out / "trained.json").write_text(json.dumps({"member": row["member"], "output": {"shape": list(y.shape), "data": y.flatten().tolist()}}))


def main(out_dir, reference_path):
    out = Path(out_dir)
    ref = json.loads(Path(reference_path).read_text())
    x = tensor(ref["input"])
    worst = 0.0
    models = []
    with torch.no_grad():
        for entry in ref["members"]:
            k = entry["member"]
            model = load_class(out / f"member-{k}" / "model.py")()
            model.load_state_dict(load_file(out / f"member-{k}" / "model.safetensors"), strict=True)
            model.eval()
            worst = max(worst, expect_close(f"member {k}", model(x), tensor(entry["output"])))

        listed = json.loads((out / "members.json").read_text())["members"]
        Model = load_class(out / "model.py")
        # the same members as instances of one class: what stack_module_state stacks
        for row in listed:
            model = Model(**row["args"])
            model.load_state_dict(load_file(out / f"member-{row['member']}" / "model.safetensors"), strict=True)
            models.append(model.eval())
        stacked = load_file(out / "ensemble.safetensors")
        params, buffers = stack_module_state(models)
        for name, t in {**params, **buffers}.items():
            if name not in stacked or not torch.equal(stacked[name], t):
                sys.exit(f"ensemble.safetensors: '{name}' is not stack_module_state's")
        if set(stacked) != set(params) | set(buffers):
            sys.exit(f"ensemble.safetensors has other names than stack_module_state: {sorted(set(stacked))}")

        for i, (row, entry) in enumerate(zip(listed, ref["members"])):
            base = Model(**row["args"]).eval()
            state = {name: t[i] for name, t in stacked.items()}
            worst = max(worst, expect_close(f"member {row['member']} by functional_call", functional_call(base, state, (x,)), tensor(entry["output"])))
        vmapped = "no"
        # torch.func.vmap has no batching rule for aten::lstm and aten::gru (nn.LSTM, nn.GRU): functional_call above runs them
        recurrent = any(isinstance(m, nn.RNNBase) for m in Model(**listed[0]["args"]).modules())
        if recurrent:
            vmapped = "no (nn.LSTM and nn.GRU have no vmap batching rule)"
        elif all(row["args"] == listed[0]["args"] for row in listed):
            base = Model(**listed[0]["args"]).eval()
            p = {n: stacked[n] for n, _ in base.named_parameters()}
            b = {n: stacked[n] for n, _ in base.named_buffers()}
            ys = vmap(lambda p, b: functional_call(base, (p, b), (x,)))(p, b)
            want = torch.stack([tensor(e["output"]) for e in ref["members"]])
            worst = max(worst, expect_close("the members by vmap", ys, want))
            vmapped = "yes"
        train_member(Model, listed[0], out, x, ref.get("tokens"))
    print(f"ok: {out_dir}: {len(models)} members, strict load, functional_call, vmap {vmapped}, max difference {worst:.2e}")


if __name__ == "__main__":
    pairs = sys.argv[1:]
    for i in range(0, len(pairs), 2):
        main(pairs[i], pairs[i + 1])
