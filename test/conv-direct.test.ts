// The register-blocked conv loops of the generated step (src/wasm/conv-direct.ts) and the vector max-pool
// (src/wasm/conv.ts), run alone on odd shapes, against float32 references written out in the op path's
// summing orders (src/wasm/conv.ts's header): bit for bit. Shapes cover one and several input channels,
// filter counts that are and are not whole vectors (2, 5, 6, 7, 16), strides 1 and 2, valid and same
// padding, tiles cut short at the end of a row, and batches of 1 and 3.
import { describe, expect, it } from 'vitest';
import { ModuleBuilder, type Code, type Local } from '../src/wasm/module.js';
import type { Mat, ParamMat } from '../src/wasm/blocks.js';
import { maxPoolForward, maxPoolGrad, padImage, paddedHeight, paddedWidth, type Spatial } from '../src/wasm/conv.js';
import { convForwardDirect, convGradInputDirect, convGradWeightsDirect, padKernelRows, paddedGradSpatial, transposeKernelPadded } from '../src/wasm/conv-direct.js';
import { paddedRow } from '../src/wasm/vectors.js';
import { kernelSpatial, windowOutput } from '../src/layers/spatial.js';
import { values } from './kernel-values.js';

const f = Math.fround;

/** A conv's geometry as netc's kernels see it. */
function spatial(h: number, w: number, c: number, k: number, s: number, padding: 'valid' | 'same'): Spatial {
  return kernelSpatial([h, w, c], [k, k], [s, s], padding, [windowOutput(h, k, s, padding), windowOutput(w, k, s, padding)]);
}

/** xp [B, Hp, Wp, C] = x padded with zeros. */
function padRef(x: Float32Array, b: number, g: Spatial): Float32Array {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  const out = new Float32Array(b * hp * wp * g.c);
  for (let e = 0; e < b; e++) for (let y = 0; y < g.h; y++) for (let i = 0; i < g.w * g.c; i++) out[((e * hp + y + g.pt) * wp + g.pl) * g.c + i] = x[(e * g.h + y) * g.w * g.c + i];
  return out;
}

/** The window value of output (e, i, j) at kernel term (p, q, ch), from the padded image. */
const at = (xp: Float32Array, g: Spatial, e: number, i: number, j: number, p: number, q: number, ch: number) =>
  xp[((e * paddedHeight(g) + i * g.sh + p) * paddedWidth(g) + j * g.sw + q) * g.c + ch];

/** The op path's conv: each output from 0 over (p, q, ch) in order, then + bias. */
function forwardRef(xp: Float32Array, b: number, g: Spatial, w: Float32Array, bias: Float32Array, filters: number): Float32Array {
  const out = new Float32Array(b * g.oh * g.ow * filters);
  for (let e = 0; e < b; e++) for (let i = 0; i < g.oh; i++) for (let j = 0; j < g.ow; j++) for (let o = 0; o < filters; o++) {
    let acc = 0;
    for (let p = 0; p < g.kh; p++) for (let q = 0; q < g.kw; q++) for (let ch = 0; ch < g.c; ch++) acc = f(acc + f(at(xp, g, e, i, j, p, q, ch) * w[((p * g.kw + q) * g.c + ch) * filters + o]));
    out[((e * g.oh + i) * g.ow + j) * filters + o] = f(acc + bias[o]);
  }
  return out;
}

/** dkernel, summed over the outputs in 'rows' order (e, i, j) or 'cells' order ((i, j), then e). */
function gradWeightsRef(xp: Float32Array, dz: Float32Array, b: number, g: Spatial, filters: number, order: 'rows' | 'cells'): Float32Array {
  const outs: [number, number, number][] = [];
  if (order === 'rows') for (let e = 0; e < b; e++) for (let i = 0; i < g.oh; i++) for (let j = 0; j < g.ow; j++) outs.push([e, i, j]);
  else for (let i = 0; i < g.oh; i++) for (let j = 0; j < g.ow; j++) for (let e = 0; e < b; e++) outs.push([e, i, j]);
  const dw = new Float32Array(g.kh * g.kw * g.c * filters);
  for (let p = 0; p < g.kh; p++) for (let q = 0; q < g.kw; q++) for (let ch = 0; ch < g.c; ch++) for (let o = 0; o < filters; o++) {
    let acc = 0;
    for (const [e, i, j] of outs) acc = f(acc + f(at(xp, g, e, i, j, p, q, ch) * dz[((e * g.oh + i) * g.ow + j) * filters + o]));
    dw[((p * g.kw + q) * g.c + ch) * filters + o] = acc;
  }
  return dw;
}

/** dx of the unpadded input: each element's one running sum over the outputs reaching it in (i, j) order, then the filters in order. */
function gradInputRef(dz: Float32Array, b: number, g: Spatial, w: Float32Array, filters: number): Float32Array {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  const dxp = new Float32Array(b * hp * wp * g.c);
  for (let e = 0; e < b; e++) for (let i = 0; i < g.oh; i++) for (let j = 0; j < g.ow; j++) for (let p = 0; p < g.kh; p++) for (let q = 0; q < g.kw; q++) for (let ch = 0; ch < g.c; ch++) {
    const k = ((e * hp + i * g.sh + p) * wp + j * g.sw + q) * g.c + ch;
    for (let o = 0; o < filters; o++) dxp[k] = f(dxp[k] + f(dz[((e * g.oh + i) * g.ow + j) * filters + o] * w[((p * g.kw + q) * g.c + ch) * filters + o]));
  }
  const dx = new Float32Array(b * g.h * g.w * g.c);
  for (let e = 0; e < b; e++) for (let y = 0; y < g.h; y++) for (let x = 0; x < g.w * g.c; x++) dx[(e * g.h + y) * g.w * g.c + x] = dxp[((e * hp + y + g.pt) * wp + g.pl) * g.c + x];
  return dx;
}

/** A little memory of named buffers and one function per kernel call, run once. */
class Rig {
  private top = 64;
  private readonly at = new Map<string, [number, number]>();
  buffer(name: string, floats: number): number {
    const off = this.top;
    this.at.set(name, [off, floats]);
    this.top += Math.ceil((floats * 4) / 16) * 16 + 16;
    return off;
  }
  run(batch: number, inputs: Record<string, Float32Array>, body: (c: Code, base: Local, batch: Local) => void): (name: string) => Float32Array {
    const mb = new ModuleBuilder();
    mb.func(['i32', 'i32'], [], (c) => body(c, c.param(0), c.param(1)), 'run');
    const memory = new WebAssembly.Memory({ initial: Math.ceil(this.top / 65536) + 1 });
    const heap = new Float32Array(memory.buffer);
    // everything not written by the test holds NaN: a kernel that reads a float it should not shows
    heap.fill(NaN);
    for (const [name, v] of Object.entries(inputs)) heap.set(v, this.at.get(name)![0] / 4);
    const run = new WebAssembly.Instance(new WebAssembly.Module(mb.bytes()), { env: { memory } }).exports.run as (b: number, n: number) => void;
    run(0, batch);
    return (name) => {
      const [off, n] = this.at.get(name)!;
      return heap.slice(off / 4, off / 4 + n);
    };
  }
}

const mat = (base: Local, offset: number, width: number): Mat => ({ base, offset, width });
function param(c: Code, base: Local, offset: number, rows: number, width: number): ParamMat {
  const b = c.local('i32');
  c.get(base).i32(offset).i32Add().set(b);
  const stride = c.local('i32');
  c.i32(width * 4).set(stride);
  return { base: b, rowStride: stride, rows, width, stride: width * 4 };
}
const addr = (c: Code, base: Local, offset: number) => {
  const l = c.local('i32');
  c.get(base).i32(offset).i32Add().set(l);
  return l;
};
const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

const shapes: [number, number, number, number, number, 'valid' | 'same', number][] = [
  // h, w, c, kernel, stride, padding, filters
  [9, 11, 1, 5, 1, 'same', 6],
  [7, 7, 3, 3, 1, 'valid', 5],
  [8, 6, 6, 3, 2, 'same', 7],
  [10, 10, 6, 5, 1, 'valid', 16],
  [6, 9, 5, 2, 1, 'same', 2],
  [9, 9, 2, 3, 2, 'valid', 16],
];

describe('the register-blocked conv loops sum as the op path does, bit for bit', () => {
  for (const [h, w, c, k, s, padding, filters] of shapes) for (const batch of [1, 3]) {
    it(`${h}x${w}x${c}, ${k}x${k} kernel, stride ${s}, ${padding}, ${filters} filters, batch ${batch}`, () => {
      const g = spatial(h, w, c, k, s, padding);
      const depth = k * k * c;
      const cells = g.oh * g.ow;
      const x = values(batch * h * w * c, 1);
      const kernel = values(depth * filters, 2);
      const bias = values(filters, 3);
      const dz = values(batch * cells * filters, 4);
      const xp = padRef(x, batch, g);
      const rig = new Rig();
      const o = {
        x: rig.buffer('x', x.length), xp: rig.buffer('xp', xp.length), w: rig.buffer('w', kernel.length), b: rig.buffer('b', filters),
        wp: rig.buffer('wp', depth * paddedRow(filters)), z: rig.buffer('z', batch * cells * filters), dz: rig.buffer('dz', dz.length),
        dwRows: rig.buffer('dwRows', kernel.length), dwCells: rig.buffer('dwCells', kernel.length),
        dzp: rig.buffer('dzp', batch * (g.oh + 2 * k - 2) * (g.ow + 2 * k - 2) * filters), wt: rig.buffer('wt', k * k * filters * paddedRow(c)), dx: rig.buffer('dx', x.length),
      };
      const out = rig.run(batch, { x, w: kernel, b: bias, dz }, (code, base, n) => {
        const xs = mat(base, o.xp, xp.length / batch);
        padImage(code, n, mat(base, o.x, h * w * c), g, xs, 0);
        const kp = param(code, base, o.w, depth, filters);
        padKernelRows(code, kp, mat(base, o.wp, paddedRow(filters)));
        convForwardDirect(code, n, xs, g, mat(base, o.wp, paddedRow(filters)), addr(code, base, o.b), filters, mat(base, o.z, filters));
        convGradWeightsDirect(code, n, xs, mat(base, o.dz, filters), g, filters, 'rows', mat(base, o.dwRows, filters));
        convGradWeightsDirect(code, n, xs, mat(base, o.dz, filters), g, filters, 'cells', mat(base, o.dwCells, filters));
        if (s !== 1) return;
        const pg = paddedGradSpatial(g, filters);
        padImage(code, n, mat(base, o.dz, cells * filters), pg, mat(base, o.dzp, 1), 0);
        transposeKernelPadded(code, kp, k * k, c, mat(base, o.wt, 1));
        convGradInputDirect(code, n, mat(base, o.dzp, 1), g, mat(base, o.wt, 1), filters, mat(base, o.dx, c));
      });
      expect(bits(out('z'))).toEqual(bits(forwardRef(xp, batch, g, kernel, bias, filters)));
      expect(bits(out('dwRows'))).toEqual(bits(gradWeightsRef(xp, dz, batch, g, filters, 'rows')));
      expect(bits(out('dwCells'))).toEqual(bits(gradWeightsRef(xp, dz, batch, g, filters, 'cells')));
      if (s === 1) expect(bits(out('dx'))).toEqual(bits(gradInputRef(dz, batch, g, kernel, filters)));
    });
  }
});

describe('maxpool2d with the channels as vectors', () => {
  const pools: [number, number, number, number, number][] = [
    // h, w, c, size, stride
    [8, 8, 6, 2, 2],
    [7, 9, 3, 3, 2],
    [6, 6, 16, 2, 1],
    [5, 5, 1, 2, 2],
  ];
  for (const [h, w, c, size, stride] of pools) {
    it(`${h}x${w}x${c}, window ${size}, stride ${stride}: the maximum, and dy to each window's first maximum (ties included)`, () => {
      const batch = 2;
      const g: Spatial = { h, w, c, kh: size, kw: size, sh: stride, sw: stride, oh: windowOutput(h, size, stride, 'valid'), ow: windowOutput(w, size, stride, 'valid'), pt: 0, pb: 0, pl: 0, pr: 0 };
      // relu-like inputs: many zeros, so that windows hold ties
      const x = values(batch * h * w * c, 5).map((v) => Math.max(0, v));
      const dy = values(batch * g.oh * g.ow * c, 6);
      const rig = new Rig();
      const o = { x: rig.buffer('x', x.length), y: rig.buffer('y', dy.length), dy: rig.buffer('dy', dy.length), dx: rig.buffer('dx', x.length) };
      const out = rig.run(batch, { x, dy }, (code, base, n) => {
        maxPoolForward(code, n, mat(base, o.x, h * w * c), g, mat(base, o.y, g.oh * g.ow * c));
        maxPoolGrad(code, n, mat(base, o.x, h * w * c), mat(base, o.dy, g.oh * g.ow * c), g, mat(base, o.dx, h * w * c));
      });
      const y = new Float32Array(dy.length);
      const dx = new Float32Array(x.length);
      for (let e = 0; e < batch; e++) for (let i = 0; i < g.oh; i++) for (let j = 0; j < g.ow; j++) for (let ch = 0; ch < c; ch++) {
        const idx = (p: number, q: number) => ((e * h + i * stride + p) * w + j * stride + q) * c + ch;
        let best = idx(0, 0);
        for (let p = 0; p < size; p++) for (let q = 0; q < size; q++) if (x[idx(p, q)] > x[best]) best = idx(p, q);
        const k = ((e * g.oh + i) * g.ow + j) * c + ch;
        y[k] = x[best];
        dx[best] = f(dx[best] + dy[k]);
      }
      expect(bits(out('y'))).toEqual(bits(y));
      expect(bits(out('dx'))).toEqual(bits(dx));
    });
  }
});
