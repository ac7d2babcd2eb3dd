// @tensorflow/tfjs as its core and cpu backend first, and the rest of it (tfjs-layers, -converter, -data, the
// webgl backend, and what the package registers: every op's gradient, the ops chained on tensors) when it is
// first used. A training run on the fused step uses none of the rest: loading @tensorflow/tfjs took 226-244 ms
// of CPU, its core and cpu backend 101-108 ms (bench/NOTES.md). Whatever reaches the rest loads it first, so
// every use works as with the whole package:
// - a name that only the package has (`tf.layers`, `tf.data`, `tf.version`),
// - a name through which TF.js records gradients (`tf.variableGrads`, `tf.customGrad`, `tf.train`, ...):
//   the tape saves what an op's gradient needs while it records, so the gradients are registered first,
// - a method that the package chains onto tensors (`t.square()`): until the rest is loaded, each is a getter
//   on Tensor's prototype that loads it (CHAINED_OPS).
// The core is the one @tensorflow/tfjs requires itself, so the backends and the rest share its engine.
import { createRequire } from 'node:module';
import type * as tfjs from '@tensorflow/tfjs';

type TF = typeof tfjs;

/** The core's names through which a gradient is recorded or taken. */
const GRADIENT_ENTRIES: ReadonlySet<string> = new Set(['grad', 'grads', 'valueAndGrad', 'valueAndGrads', 'variableGrads', 'customGrad', 'train']);

/** The namespace made by the first call: Tensor's prototype is wrapped once. */
let made: TF | undefined;

/**
 * The TF.js namespace, its core loaded and the rest loaded when used; undefined where `require` cannot
 * resolve @tensorflow/tfjs (a bundle that holds TF.js itself).
 */
export function coreFirst(require: NodeJS.Require): TF | undefined {
  if (made) return made;
  let umbrella: string;
  try {
    umbrella = require.resolve('@tensorflow/tfjs');
  } catch (error) {
    if ((error as { code?: string }).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
  const fromTF = createRequire(umbrella);
  const core = fromTF('@tensorflow/tfjs-core') as TF;
  fromTF('@tensorflow/tfjs-backend-cpu');
  let whole: TF | undefined;
  const rest = (): TF => (whole ??= require(umbrella) as TF);
  chainOnUse(core.Tensor.prototype, rest);
  // 'then' is read by every await of the namespace, and symbols by inspection: neither is the rest's
  const own = (key: string | symbol) => typeof key === 'symbol' || key === 'then' || (key in core && !GRADIENT_ENTRIES.has(key));
  return (made = new Proxy(core, {
    get: (target, key) => (own(key) ? Reflect.get(target, key) : Reflect.get(rest(), key)),
    has: (target, key) => (own(key) ? Reflect.has(target, key) : Reflect.has(rest(), key)),
  }));
}

/**
 * The methods @tensorflow/tfjs chains onto tensors (`t.square()`), of TF.js 4.22 (test/startup.test.ts checks
 * this list against the installed package): until the rest is loaded, each is a getter that loads it.
 */
export const CHAINED_OPS: readonly string[] = [
  'abs', 'acos', 'acosh', 'add', 'all', 'any', 'argMax', 'argMin', 'as1D', 'as2D', 'as3D', 'as4D', 'as5D',
  'asScalar', 'asType', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'avgPool', 'batchNorm', 'batchToSpaceND',
  'broadcastTo', 'ceil', 'clipByValue', 'concat', 'conv1d', 'conv2d', 'conv2dTranspose', 'cos', 'cosh',
  'cumprod', 'cumsum', 'depthToSpace', 'depthwiseConv2d', 'dilation2d', 'div', 'divNoNan', 'dot', 'elu',
  'equal', 'erf', 'euclideanNorm', 'exp', 'expandDims', 'expm1', 'fft', 'flatten', 'floor', 'floorDiv',
  'gather', 'greater', 'greaterEqual', 'ifft', 'irfft', 'isFinite', 'isInf', 'isNaN', 'leakyRelu', 'less',
  'lessEqual', 'localResponseNormalization', 'log', 'log1p', 'logSigmoid', 'logSoftmax', 'logSumExp',
  'logicalAnd', 'logicalNot', 'logicalOr', 'logicalXor', 'matMul', 'max', 'maxPool', 'maximum', 'mean', 'min',
  'minimum', 'mirrorPad', 'mod', 'mul', 'neg', 'norm', 'notEqual', 'oneHot', 'onesLike', 'pad', 'pool', 'pow',
  'prelu', 'prod', 'reciprocal', 'relu', 'relu6', 'reshape', 'reshapeAs', 'resizeBilinear',
  'resizeNearestNeighbor', 'reverse', 'rfft', 'round', 'rsqrt', 'selu', 'separableConv2d', 'sigmoid', 'sign',
  'sin', 'sinh', 'slice', 'softmax', 'softplus', 'spaceToBatchND', 'split', 'sqrt', 'square',
  'squaredDifference', 'squeeze', 'stack', 'step', 'stridedSlice', 'sub', 'sum', 'tan', 'tanh', 'tile',
  'toBool', 'toFloat', 'toInt', 'topk', 'transpose', 'unique', 'unsortedSegmentSum', 'unstack', 'where',
  'zerosLike',
];

/** Each chained op a getter that loads the rest, then is replaced by the method the rest assigns. */
function chainOnUse(proto: object, rest: () => void): void {
  for (const name of CHAINED_OPS) {
    if (Object.prototype.hasOwnProperty.call(proto, name)) continue;
    const get = function (this: Record<string, unknown>): unknown {
      rest();
      // a name the rest did not assign (a TF.js whose ops differ from the list) is taken away, not looked up forever
      if (Object.getOwnPropertyDescriptor(proto, name)?.get === get) delete (proto as Record<string, unknown>)[name];
      return this[name];
    };
    // the rest's own `Tensor.prototype.square = ...` makes the method an ordinary property again
    const set = function (this: object, method: unknown): void {
      Object.defineProperty(this, name, { value: method, writable: true, configurable: true, enumerable: true });
    };
    Object.defineProperty(proto, name, { configurable: true, get, set });
  }
}
