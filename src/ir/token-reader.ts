// Which layer reads the model's input as token ids (an embedding), found in the model IR: loading asks it
// whether an npy x of uint8 holds ids or pixels, and which vocabulary every id must fall in.
import { layerKind } from '../layers/registry.js';
import type { TokenReader } from '../data/token-ids.js';
import type { ModelIR } from './model-ir.js';

/** The layer that reads the model's input as token ids, with its vocabulary's size: the smallest, if several do. */
export function tokenReader(ir: ModelIR): TokenReader | undefined {
  let reader: TokenReader | undefined;
  for (const op of ir.ops) {
    const kind = op.inputs.includes(0) ? layerKind(op.op) : undefined;
    const vocab = kind?.tokenIds?.(op.attrs);
    if (vocab !== undefined && (!reader || vocab < reader.vocab)) reader = { layer: op.name, vocab };
  }
  return reader;
}
