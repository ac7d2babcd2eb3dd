// Each activation as PyTorch code and as ONNX nodes, with netc's constants (leaky_relu's slope; softmax
// over the channel axis; the exact gelu): what a weighted layer's `activation:` and an activation layer
// export as. One table per format, keyed by the activation's name.
import { channelAxis } from './layout.js';
import { float, int, type OnnxGraph } from './onnx-graph.js';
import { pyFloat } from './torch-code.js';

/** An activation with netc's constants: leaky_relu's slope. */
export interface Act {
  name: string;
  alpha?: number;
}

/** `e` through the activation; `shape` the netc shape of one example; `alpha` leaky_relu's slope as Python. */
type TorchForm = (e: string, shape: number[], alpha: string) => string;

const torchForms: Record<string, TorchForm> = {
  linear: (e) => e,
  relu: (e) => `F.relu(${e})`,
  sigmoid: (e) => `torch.sigmoid(${e})`,
  tanh: (e) => `torch.tanh(${e})`,
  softmax: (e, shape) => `F.softmax(${e}, dim=${channelAxis(shape)})`,
  // netc's gelu is the exact one, x * Phi(x): PyTorch's default
  gelu: (e) => `F.gelu(${e})`,
  elu: (e) => `F.elu(${e}, alpha=1.0)`,
  swish: (e) => `F.silu(${e})`,
  leaky_relu: (e, _, alpha) => `F.leaky_relu(${e}, ${alpha})`,
};

/** The PyTorch expression of `act` on `e`; `alpha`, where given, is the Python expression of its slope. */
export function torchActivation(act: Act, e: string, shape: number[], alpha?: string): string {
  const form = torchForms[act.name];
  if (!form) throw new Error(`internal error: no PyTorch form of the ${act.name} activation`);
  return form(e, shape, alpha ?? (act.alpha === undefined ? '' : pyFloat(act.alpha)));
}

/** The ONNX nodes of `act` on `x`, the last named `out` where given; returns the output's name. */
type OnnxForm = (g: OnnxGraph, act: Act, x: string, shape: number[], out?: string) => string;

const onnxForms: Record<string, OnnxForm> = {
  linear: (g, _, x, __, out) => (out ? g.op('Identity', [x], [], out) : x),
  relu: (g, _, x, __, out) => g.op('Relu', [x], [], out),
  sigmoid: (g, _, x, __, out) => g.op('Sigmoid', [x], [], out),
  tanh: (g, _, x, __, out) => g.op('Tanh', [x], [], out),
  softmax: (g, _, x, shape, out) => g.op('Softmax', [x], [int('axis', channelAxis(shape))], out),
  elu: (g, _, x, __, out) => g.op('Elu', [x], [float('alpha', 1)], out),
  leaky_relu: (g, act, x, _, out) => g.op('LeakyRelu', [x], [float('alpha', act.alpha!)], out),
  swish: (g, _, x, __, out) => g.op('Mul', [x, g.op('Sigmoid', [x])], [], out),
  // the exact form, as netc computes it: x * 0.5 * (1 + erf(x / sqrt 2)) (Gelu itself is opset 20)
  gelu(g, _, x, __, out) {
    const phi = g.op('Add', [g.op('Erf', [g.op('Mul', [x, g.constant([Math.SQRT1_2])])]), g.constant([1])]);
    return g.op('Mul', [g.op('Mul', [x, phi]), g.constant([0.5])], [], out);
  },
};

export function onnxActivation(g: OnnxGraph, act: Act, x: string, shape: number[], out?: string): string {
  const form = onnxForms[act.name];
  if (!form) throw new Error(`internal error: no ONNX form of the ${act.name} activation`);
  return form(g, act, x, shape, out);
}

/** A weighted layer's op, `make`, then its `activation:`, the last of them named `out`. */
export function onnxActivated(g: OnnxGraph, act: Act, shape: number[], out: string, make: (name?: string) => string): string {
  return act.name === 'linear' ? make(out) : onnxActivation(g, act, make(), shape, out);
}
