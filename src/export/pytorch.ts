// A member as PyTorch code: model.py (a plain torch.nn.Module `Model`) and its state_dict, both from the
// export plan. The arguments `vary` may change (dropout rates, batchnorm and layernorm epsilons and
// momenta, leaky_relu slopes) are the constructor's keyword arguments, defaulting to the member's values,
// so one class serves every member of a run.
import { channelAxis, exportedShape, isPadded, isSymmetric, type Pads } from './layout.js';
import type { Act, ExportNode, ExportPlan } from './plan.js';
import type { SafeTensor } from './safetensors.js';

/** A number as a Python float literal. */
export function pyFloat(v: number): string {
  if (!Number.isFinite(v)) throw new Error(`internal error: ${v} has no Python literal`);
  const s = String(v);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

const pair = (v: readonly number[]) => `(${v[0]}, ${v[1]})`;
/** F.pad's order for [top, bottom, left, right]: (left, right, top, bottom). */
const padTuple = ([t, b, l, r]: Pads) => `(${l}, ${r}, ${t}, ${b})`;

/** The constructor's keyword argument of a layer argument: `dropout_1_rate`. */
export const kwargName = (node: { name: string }, arg: string): string => `${node.name}_${arg}`;

/** The model's keyword arguments with the member's values, in the layers' order: what members.json lists as `args`. */
export function modelArgs(plan: ExportPlan): Record<string, number> {
  return Object.fromEntries(plan.nodes.flatMap((n) => Object.entries(n.hyper).map(([arg, v]) => [kwargName(n, arg), v])));
}

function activation(act: Act, e: string, node: ExportNode, self: boolean): string {
  switch (act.name) {
    case 'linear':
      return e;
    case 'relu':
      return `F.relu(${e})`;
    case 'sigmoid':
      return `torch.sigmoid(${e})`;
    case 'tanh':
      return `torch.tanh(${e})`;
    case 'softmax':
      return `F.softmax(${e}, dim=${channelAxis(node.shape)})`;
    case 'gelu': // netc's gelu is the exact one, x * Phi(x): PyTorch's default
      return `F.gelu(${e})`;
    case 'elu':
      return `F.elu(${e}, alpha=1.0)`;
    case 'swish':
      return `F.silu(${e})`;
    case 'leaky_relu':
      return `F.leaky_relu(${e}, ${self ? `self.${kwargName(node, 'alpha')}` : pyFloat(act.alpha!)})`;
    default:
      throw new Error(`internal error: no PyTorch form of the ${act.name} activation`);
  }
}

/** The layer's line in __init__, or undefined for layers without a module. */
function moduleLine(n: ExportNode): string | undefined {
  const kw = (arg: string) => kwargName(n, arg);
  switch (n.kind) {
    case 'linear':
      return `nn.Linear(${n.inFeatures}, ${n.outFeatures}${n.bias ? '' : ', bias=False'})`;
    case 'conv2d': {
      const padding = isSymmetric(n.pads) && isPadded(n.pads) ? `, padding=${pair([n.pads[0], n.pads[2]])}` : '';
      return `nn.Conv2d(${n.inChannels}, ${n.outChannels}, kernel_size=${pair(n.kernel)}, stride=${pair(n.stride)}${padding}${n.bias ? '' : ', bias=False'})`;
    }
    case 'maxpool2d':
      return isSymmetric(n.pads) ? `nn.MaxPool2d(${pair(n.size)}, stride=${pair(n.stride)}${isPadded(n.pads) ? `, padding=${pair([n.pads[0], n.pads[2]])}` : ''})` : undefined;
    case 'avgpool2d':
      return isSymmetric(n.pads) ? `nn.AvgPool2d(${pair(n.size)}, stride=${pair(n.stride)}${isPadded(n.pads) ? `, padding=${pair([n.pads[0], n.pads[2]])}, count_include_pad=False` : ''})` : undefined;
    case 'dropout':
      return `nn.Dropout(p=${kw('rate')})`;
    case 'batchnorm': {
      const dims = n.layout === 'nchw' ? 2 : n.shape.length === 4 ? 3 : 1;
      // Keras' momentum is the share of the running statistics kept; PyTorch's, the share moved
      return `nn.BatchNorm${dims}d(${n.features}, eps=${kw('epsilon')}, momentum=1 - ${kw('momentum')})`;
    }
    case 'layernorm':
      return `nn.LayerNorm(${n.features}, eps=${kw('epsilon')})`;
    default:
      return undefined;
  }
}

/** The expression that computes the node from its inputs' variables. */
function forwardExpr(n: ExportNode, vars: string[]): string {
  const [x] = vars;
  const self = `self.${n.name}`;
  switch (n.kind) {
    case 'linear':
      return activation(n.act, `${self}(${x})`, n, false);
    case 'conv2d':
      return activation(n.act, `${self}(${isSymmetric(n.pads) ? x : `F.pad(${x}, ${padTuple(n.pads)})`})`, n, false);
    case 'maxpool2d':
      return isSymmetric(n.pads) ? `${self}(${x})` : `F.max_pool2d(F.pad(${x}, ${padTuple(n.pads)}, value=float("-inf")), ${pair(n.size)}, ${pair(n.stride)})`;
    case 'avgpool2d':
      return isSymmetric(n.pads) ? `${self}(${x})` : `avg_pool_same(${x}, ${padTuple(n.pads)}, ${pair(n.size)}, ${pair(n.stride)})`;
    case 'global_avg_pool':
      return `${x}.mean(dim=(2, 3))`;
    case 'global_max_pool':
      return `${x}.amax(dim=(2, 3))`;
    case 'flatten':
      return n.channelsLast ? `torch.flatten(${x}.permute(0, 2, 3, 1), 1)` : `torch.flatten(${x}, 1)`;
    case 'dropout':
      return `${self}(${x})`;
    case 'batchnorm':
      return n.layout === 'last' ? `${self}(${x}.movedim(-1, 1)).movedim(1, -1)` : `${self}(${x})`;
    case 'layernorm':
      return n.layout === 'nchw' ? `${self}(${x}.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)` : `${self}(${x})`;
    case 'add':
      return vars.join(' + ');
    case 'concat':
      return `torch.cat([${vars.join(', ')}], dim=${channelAxis(n.shape)})`;
    case 'activation':
      return activation(n.act, x, n, true);
    case 'input':
      throw new Error('internal error: the input has no expression');
  }
}

const AVG_POOL_SAME = `

def avg_pool_same(x, pads, kernel_size, stride):
    """Average pooling over TF's \`same\` windows, whose padding is left out of each window's count."""
    total = F.avg_pool2d(F.pad(x, pads), kernel_size, stride)
    count = F.avg_pool2d(F.pad(torch.ones_like(x[:, :1]), pads), kernel_size, stride)
    return total / count
`;

const shapeText = (shape: number[]) => `[B, ${exportedShape(shape).join(', ')}]`;

/** What the output is, for the docstring. */
function outputText(plan: ExportPlan): string {
  const out = plan.nodes[plan.output];
  const act = out.kind === 'activation' || out.kind === 'linear' || out.kind === 'conv2d' ? out.act.name : 'linear';
  return `${shapeText(out.shape)}${act !== 'linear' ? `, after its ${act}` : ''}: what \`netc predict\` prints${out.layout === 'nchw' ? ' (as NCHW)' : ''}`;
}

/** model.py: the module `Model`; `about` says where the member comes from (a comment's line). */
export function modelPy(plan: ExportPlan, about: string): string {
  const nodes = plan.nodes.slice(1);
  const args = Object.entries(modelArgs(plan)).map(([k, v]) => `${k}=${pyFloat(v)}`);
  const init = nodes.flatMap((n) => {
    const line = moduleLine(n);
    const lines = line ? [`        self.${n.name} = ${line}`] : [];
    if (n.kind === 'activation' && n.act.name === 'leaky_relu') lines.push(`        self.${kwargName(n, 'alpha')} = ${kwargName(n, 'alpha')}`);
    return lines;
  });
  const varOf = (id: number) => (id === 0 ? 'x' : plan.nodes[id].name);
  const forward = nodes.map((n) => `        ${n.name} = ${forwardExpr(n, n.inputs.map(varOf))}${n.label ? `  # ${n.label}` : ''}`);
  const helper = nodes.some((n) => n.kind === 'avgpool2d' && !isSymmetric(n.pads)) ? AVG_POOL_SAME : '';
  return `# Generated by netc extract --format pytorch: ${about}.
"""The netc model \`${plan.name}\` as a PyTorch module.

Input: ${shapeText(plan.nodes[0].shape)}${plan.nodes[0].layout === 'nchw' ? ' (NCHW)' : ''}.
Output: ${outputText(plan)}.

    model = Model()
    model.load_state_dict(safetensors.torch.load_file("model.safetensors"))
    model.eval()
"""
import torch
from torch import nn
import torch.nn.functional as F
${helper}

class Model(nn.Module):
    def __init__(self${args.map((a) => `, ${a}`).join('')}):
        super().__init__()
${init.length ? init.join('\n') : '        pass'}

    def forward(self, x):
${forward.join('\n')}
        return ${varOf(plan.output)}
`;
}

/** The member's state_dict, under the module's names, in its layers' order. */
export function stateDict(plan: ExportPlan): Map<string, SafeTensor> {
  const out = new Map<string, SafeTensor>();
  for (const n of plan.nodes) for (const t of n.tensors) out.set(`${n.name}.${t.name}`, { shape: t.shape, data: t.data });
  return out;
}

/** The members' state_dicts stacked [N, ...] under each name: torch.func.stack_module_state's form. */
export function stackedStateDict(dicts: Map<string, SafeTensor>[]): Map<string, SafeTensor> {
  const out = new Map<string, SafeTensor>();
  for (const [name, first] of dicts[0]) {
    const parts = dicts.map((d) => d.get(name)!.data);
    const size = first.data.length;
    const data = first.data instanceof Float32Array ? new Float32Array(size * parts.length) : new BigInt64Array(size * parts.length);
    parts.forEach((p, i) => data.set(p as never, i * size));
    out.set(name, { shape: [parts.length, ...first.shape], data });
  }
  return out;
}
