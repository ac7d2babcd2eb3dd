// An ONNX graph being built, as plain objects in the schema's field names (export/onnx.ts encodes them
// with protobufjs): the nodes in order, the initializers, constants made once. A layer kind's export rule
// writes its ONNX nodes with it.
import type { Pads } from './layout.js';

export const FLOAT = 1;
export const INT64 = 7;

export type Attr = { name: string; type: string; i?: number; f?: number; ints?: number[] };
export const int = (name: string, i: number): Attr => ({ name, type: 'INT', i });
export const ints = (name: string, v: number[]): Attr => ({ name, type: 'INTS', ints: v });
export const float = (name: string, f: number): Attr => ({ name, type: 'FLOAT', f });

/** ONNX's pads for [top, bottom, left, right]: the begins, then the ends. */
export const onnxPads = ([t, b, l, r]: Pads): number[] => [t, l, b, r];

/** The permutation of a rank-`rank` tensor from channels first to channels last, and back. */
export const toChannelsLast = (rank: number): number[] => [0, ...Array.from({ length: rank - 2 }, (_, i) => i + 2), 1];
export const toChannelsFirst = (rank: number): number[] => [0, rank - 1, ...Array.from({ length: rank - 2 }, (_, i) => i + 1)];

/** A graph being built: nodes in order, initializers, and names made unique. */
export class OnnxGraph {
  nodes: object[] = [];
  initializers: object[] = [];
  private constants = new Map<string, string>();
  private count = 0;

  op(type: string, inputs: string[], attrs: Attr[] = [], output = `t${this.count++}`): string {
    this.nodes.push({ op_type: type, input: inputs, output: [output], name: `${output}:${type}`, attribute: attrs });
    return output;
  }

  tensor(name: string, shape: number[], data: Float32Array | BigInt64Array): string {
    const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.initializers.push({ name, dims: shape, data_type: data instanceof Float32Array ? FLOAT : INT64, raw_data: raw });
    return name;
  }

  /** A float32 or int64 constant, once per value. */
  constant(values: number[], kind: 'float' | 'int64' = 'float', shape = values.length === 1 ? [] : [values.length]): string {
    const key = `${kind}:${shape.join('x')}:${values.join(',')}`;
    let name = this.constants.get(key);
    if (!name) {
      name = `const_${this.constants.size}`;
      this.tensor(name, shape, kind === 'float' ? Float32Array.from(values) : BigInt64Array.from(values.map(BigInt)));
      this.constants.set(key, name);
    }
    return name;
  }
}

/** x · weightᵀ (+ bias) on the last axis of x, whatever its rank (a Linear's weight [out, in]; ONNX's Gemm takes matrices only). */
export function onnxLinear(g: OnnxGraph, x: string, [weight, bias]: string[], name?: string): string {
  const y = g.op('MatMul', [x, g.op('Transpose', [weight], [ints('perm', [1, 0])])], [], bias ? undefined : name);
  return bias ? g.op('Add', [y, bias], [], name) : y;
}
