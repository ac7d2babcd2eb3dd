// The checker's rules, one line each: a source and the diagnostic it must produce.
import { describe, expect, it } from 'vitest';
import { expectClean, expectDiagnostics, expectError, modelSource } from './helpers.js';
import { formatDiagnostic, formatDiagnostics } from '../src/diagnostics/format.js';
import { Messages } from '../src/diagnostics/messages.js';
import { nearest } from '../src/diagnostics/suggest.js';
import { fileHost } from '../src/cli/host.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mlp = (layers = 'dense(1, activation: sigmoid)') => modelSource([2], layers);
const withTrain = (body: string, layers?: string) => `${mlp(layers)}train {\n${body}\n}\n`;
const withEnsemble = (body: string, layers?: string) => `${mlp(layers)}ensemble {\n${body}\n}\ntrain { data: xor() loss: binary_crossentropy epochs: 1 }\n`;

describe('names', () => {
  it('suggests the nearest layer', () => expectError(mlp('dens(1)'), 2001, "unknown layer 'dens' (did you mean 'dense'?); expected one of: dense, conv2d"));
  it('checks activations', () => expectError(mlp('dense(1, activation: sigmoud)'), 2001, "unknown activation 'sigmoud' (did you mean 'sigmoid'?)"));
  it('checks initialisers', () => expectError(mlp('dense(1, init: he_unifrom)'), 2001, "unknown initializer 'he_unifrom' (did you mean 'he_uniform'?)"));
  it('checks losses', () => expectError(withTrain('data: xor() loss: bce epochs: 1'), 2001, "unknown loss 'bce'"));
  it('checks optimizers', () => expectError(withTrain('data: xor() loss: mse optimizer: adma epochs: 1'), 2001, "unknown optimizer 'adma' (did you mean 'adam'?)"));
  it('checks data sources', () => expectError(withTrain('data: minst() loss: mse epochs: 1'), 2001, "unknown data source 'minst' (did you mean 'mnist'?)"));
  it('does not suggest far-off names', () => expect(nearest('zzzz', ['dense', 'conv2d'])).toBeUndefined());
});

describe('arguments', () => {
  it('dense(-5)', () => expectError(mlp('dense(-5)'), 2005, 'dense: units must be an integer >= 1, got -5'));
  it('dropout(1.5)', () => expectError(mlp('dropout(1.5)'), 2005, 'dropout: rate must be a number in [0, 1), got 1.5'));
  it('conv2d stride 0', () => expectError(modelSource([8, 8, 1], 'conv2d(4, kernel: 3, stride: 0)'), 2005, 'conv2d: stride must be an integer >= 1, got 0'));
  it('adam(lr: -1)', () => expectError(withTrain('data: xor() loss: mse optimizer: adam(lr: -1) epochs: 1'), 2005, 'adam: lr must be a number > 0, got -1'));
  it('dense("twenty")', () => expectError(mlp('dense("twenty")'), 2004, 'dense: units must be an integer, got "twenty"'));
  it('dense(20, unit: 5)', () => expectError(mlp('dense(20, unit: 5)'), 2002, "dense has no argument 'unit' (did you mean 'units'?)"));
  it('a missing required argument', () => expectError(mlp('dense()'), 2003, "dense needs the argument 'units'"));
  it('too many positional arguments', () => expectError(mlp('dense(1, 2)'), 2006, 'dense takes at most 1 positional'));
  it('an argument given twice', () => expectError(mlp('dense(1, units: 2)'), 2007, "argument 'units' is given twice"));
  it('a fractional integer', () => expectError(mlp('dense(2.5)'), 2005, 'units must be an integer >= 1, got 2.5'));
  it('a kernel list of the wrong length', () => expectError(modelSource([8, 8, 1], 'conv2d(4, kernel: [3, 3, 3])'), 2004, 'kernel must be an integer or a list of two integers'));
  it('a bad model input', () => expectError('model m(input: [0, 2]) { dense(1) }', 2005, 'a list of positive integers'));
  it('a missing model input', () => expectError('model m() { dense(1) }', 2003, "model m needs the argument 'input'"));
  it('an empty model', () => expectError('model m(input: [2]) { }', 2012, "model 'm' has no layers"));
});

describe('labels', () => {
  it('duplicates', () => expectError(mlp('h = dense(2)\nh = dense(1)'), 2008, "label 'h' is already defined at line 2"));
  it('undefined', () => expectError(mlp('h = dense(2)\nadd(h, k)'), 2009, "'k' is not a label defined in this model"));
  it('used before defined', () => expectError(mlp('h = dense(2)\nadd(h, k)\nk = dense(2)'), 2010, "label 'k' is used before it is defined (at line 4)"));
  it('input is reserved', () => expectError(mlp('input = dense(2)'), 2011, "'input' is reserved"));
  it('add needs two inputs', () => expectError(mlp('h = dense(2)\nadd(h)'), 2018, 'add needs at least 2 labelled inputs, got 1'));
  it('add may read the model input', () => expectClean(mlp('h = dense(2)\nadd(h, input)')));
});

describe('data and loss fit', () => {
  it('accepts flat mnist for a [784] input', () =>
    expectClean('model m(input: [784]) { dense(10, activation: softmax) }\ntrain { data: mnist() loss: categorical_crossentropy epochs: 1 }'));
  it('refuses a wrong input', () => expectError(withTrain('data: mnist() loss: categorical_crossentropy epochs: 1'), 4006, 'the model input [2] does not fit the data: mnist() gives examples of shape [28, 28, 1]'));
  it('refuses a wrong output size', () =>
    expectError('model m(input: [784]) { dense(2, activation: softmax) }\ntrain { data: mnist() loss: categorical_crossentropy epochs: 1 }', 4007, 'the last layer must give [10]'));
  it('xor has 2 features and 1 label', () => expectClean(withTrain('data: xor() loss: binary_crossentropy epochs: 1')));
  it('binary cross-entropy needs two classes', () =>
    expectError('model m(input: [4]) { dense(1, activation: sigmoid) }\ntrain { data: iris() loss: binary_crossentropy epochs: 1 }', 4007, 'binary_crossentropy needs 2 classes, the data has 3'));
  it('warns about a 1-unit softmax layer after the last dense under any loss', () => expectError(withTrain('data: xor() loss: mse epochs: 1', 'dense(1)\nsoftmax()'), 4030, 'a softmax over 1 unit'));
  it('warns when a probability loss gets a linear output', () =>
    expectError(withTrain('data: xor() loss: binary_crossentropy epochs: 1', 'dense(1)'), 4009, 'the last layer\'s activation is linear; use activation: sigmoid'));
  describe('csv files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-'));
    writeFileSync(join(dir, 'points.csv'), 'y,x1,x2\n1,0.5,0.25\n');
    const host = { host: fileHost(join(dir, 'test.net')) };
    it('reads the header for the shape', () => expectClean(withTrain('data: csv("points.csv", label: "y") loss: mse epochs: 1'), host));
    it('warns about a missing file, which may not exist yet', () => {
      const state = expectClean(withTrain('data: csv("none.csv") loss: mse epochs: 1'), host);
      expect(state.diagnostics.map((d) => [d.category, d.code, d.message])).toEqual([
        ['warning', 4010, 'cannot read the csv file "none.csv"; its shape is not checked, and training will fail until it exists'],
      ]);
    });
    it('reports a missing label column', () => expectError(withTrain('data: csv("points.csv", label: "z") loss: mse epochs: 1'), 4008, 'has no column "z"', host));
    it('warns that a 1-unit softmax always outputs 1.0 under categorical_crossentropy, at the layer', () => {
      const source = withTrain('data: csv("points.csv", label: "y") loss: categorical_crossentropy epochs: 1', 'dense(1, activation: softmax)');
      const state = expectClean(source, host);
      expect(state.diagnostics.map((d) => [d.category, d.code, d.message, source.slice(d.start, d.start + d.length)])).toEqual([
        ['warning', 4030, 'the last layer is a softmax over 1 unit, which always outputs 1.0, so the model cannot learn; for two classes use activation: sigmoid with loss: binary_crossentropy, or give the last layer one unit per class', 'dense(1, activation: softmax)'],
      ]);
    });
    it('does not steer a 1-unit sigmoid under categorical_crossentropy to softmax', () => {
      const state = expectClean(withTrain('data: csv("points.csv", label: "y") loss: categorical_crossentropy epochs: 1', 'dense(1, activation: sigmoid)'), host);
      expect(state.diagnostics).toHaveLength(1);
      expect(state.diagnostics[0].code).toBe(4009);
      expect(state.diagnostics[0].message).not.toContain('use activation: softmax');
      expect(state.diagnostics[0].message).toBe(
        "categorical_crossentropy expects probabilities over the classes, but the last layer has 1 unit: a softmax over 1 unit always outputs 1.0; for two classes use loss: binary_crossentropy with this sigmoid, or give the last layer one unit per class with activation: softmax",
      );
    });
    it('counts idx classes from the label file, and fits the output to them', () => {
      writeFileSync(join(dir, 'images.idx'), Buffer.from([0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6]));
      writeFileSync(join(dir, 'labels.idx'), Buffer.from([0, 0, 8, 1, 0, 0, 0, 2, 0, 4]));
      const idx = (layers: string, args = '') => modelSource([3], layers) + `train { data: idx(images: "images.idx", labels: "labels.idx"${args}) loss: categorical_crossentropy epochs: 1 }`;
      expectClean(idx('dense(5, activation: softmax)'), host);
      expectError(idx('dense(10, activation: softmax)'), 4007, 'with 5 classes: the last layer must give [5]', host);
      expectError(idx('dense(3, activation: softmax)', ', classes: 3'), 4008, '"labels.idx" holds label 4, but classes: 3 allows 0..2; give classes: 5 or more, or leave classes: out to count them from the labels', host);
    });
    it('fits the model input to the feature columns', () =>
      expectError(modelSource([3], 'dense(1)') + 'train { data: csv("points.csv") loss: mse epochs: 1 }', 4006, 'gives examples of shape [2]', host));
  });
});

describe('ensemble', () => {
  it('members >= 1', () => expectError(withEnsemble('members: 0'), 2005, 'members must be an integer >= 1, got 0'));
  it('members is an integer', () => expectError(withEnsemble('members: 2.5'), 2005, 'members must be an integer >= 1'));
  it('vary resolves optimizer hyperparameters', () => expectClean(withEnsemble('members: 3 vary lr: [0.1, 0.01] vary beta1: uniform(0.8, 0.95)')));
  it('vary refuses unknown optimizer hyperparameters', () => expectError(withEnsemble('vary momentum: [0.9]'), 3003, "adam has no hyperparameter 'momentum'"));
  it('vary resolves layer hyperparameters', () => expectClean(withEnsemble('vary drop.rate: [0.1, 0.2]', 'drop = dropout(0.1)\ndense(1, activation: sigmoid)')));
  it('vary refuses unknown labels', () => expectError(withEnsemble('vary d.rate: [0.1]'), 3003, "no layer is labelled 'd'"));
  it('vary refuses shape-changing arguments', () => expectError(withEnsemble('vary h.units: [1, 2]', 'h = dense(4)\ndense(1, activation: sigmoid)'), 3004, "'units' changes the layer's shape"));
  it('loguniform needs 0 < a < b', () => expectError(withEnsemble('vary lr: loguniform(0, 1)'), 3005, 'loguniform(a, b) needs 0 < a < b'));
  it('uniform needs a < b', () => expectError(withEnsemble('vary lr: uniform(0.1, 0.01)'), 3005, 'uniform(a, b) needs a < b'));
  it('spaces stay inside the range', () => expectError(withEnsemble('vary beta1: uniform(0.5, 2)'), 3005, 'every value must be a number in [0, 1)'));
  it('list values are checked', () => expectError(withEnsemble('vary lr: [0.1, -1]'), 2005, 'vary lr must be a number > 0, got -1'));
  it('unknown spaces', () => expectError(withEnsemble('vary lr: normal(0, 1)'), 2001, "unknown space 'normal'"));
  it('choice of values', () => expectClean(withEnsemble('vary lr: choice(0.1, 0.01)')));
  it('a path varied twice', () => expectError(withEnsemble('vary lr: [0.1] vary lr: [0.2]'), 3006, "'lr' is varied twice"));
  it('unknown keys', () => expectError(withEnsemble('size: 3'), 3002, "unknown ensemble key 'size'"));
  it('vary belongs in the ensemble', () => expectError(withTrain('data: xor() loss: mse epochs: 1 vary lr: [1]'), 3008, "'vary' belongs in the ensemble block"));
});

describe('positional optimizer arguments, as docs/language.md lists them', () => {
  it('sgd(lr, momentum, nesterov)', () => expectClean(withTrain('data: xor() loss: mse optimizer: sgd(0.1, 0.9, true) epochs: 1', 'dense(1)')));
  it('adam(lr, beta1, beta2, epsilon)', () => expectClean(withTrain('data: xor() loss: mse optimizer: adam(0.01, 0.8, 0.99, 1e-8) epochs: 1', 'dense(1)')));
  it('adamw(lr, weight_decay)', () => expectClean(withTrain('data: xor() loss: mse optimizer: adamw(0.01, 0.01) epochs: 1', 'dense(1)')));
  it('rmsprop(lr, rho, momentum, epsilon)', () => expectClean(withTrain('data: xor() loss: mse optimizer: rmsprop(0.01, 0.9, 0.5, 1e-6) epochs: 1', 'dense(1)')));
});

describe('train', () => {
  it('batch >= 1', () => expectError(withTrain('data: xor() loss: mse batch: 0 epochs: 1'), 2005, 'batch must be an integer >= 1, got 0'));
  it('not both epochs and steps', () => expectError(withTrain('data: xor() loss: mse epochs: 1 steps: 5'), 4003, 'exactly one'));
  it('one of epochs or steps', () => expectError(withTrain('data: xor() loss: mse'), 4004, "needs 'epochs' or 'steps'"));
  it('validation in [0, 1)', () => expectError(withTrain('data: xor() loss: mse epochs: 1 validation: 1'), 2005, 'validation must be a number in [0, 1), got 1'));
  it('unknown keys', () => expectError(withTrain('data: xor() loss: mse epochs: 1 lr: 0.1'), 4002, "unknown train key 'lr'"));
  it('repeated keys', () => expectError(withTrain('data: xor() loss: mse epochs: 1 epochs: 2'), 3007, "key 'epochs' is given twice"));
  it('data is required', () => expectError(withTrain('loss: mse epochs: 1'), 4005, "the train block needs 'data'"));
});

describe('schedules', () => {
  const withSchedule = (s: string) => `${withEnsemble('members: 4')}${s}\n`;
  it('accepts pbt', () => expectClean(withSchedule('schedule pbt { every: 2 epochs, metric: val_loss, quantile: 0.25, perturb: [0.8, 1.2] }')));
  it('unknown schedules', () => expectError(withSchedule('schedule hyperband { every: 1 epochs }'), 3010, "unknown schedule 'hyperband'"));
  it('intervals', () => expectError(withSchedule('schedule halving { every: 3 }'), 3013, "every must be an interval such as '2 epochs'"));
  it('required keys', () => expectError(withSchedule('schedule early_stopping { metric: loss }'), 2003, "schedule early_stopping needs the argument 'patience'"));
  it('a validation metric needs validation data', () =>
    expectError(withSchedule('schedule halving { every: 1 epochs }'), 3014, 'schedule halving ranks members by val_loss, but there is no validation data, so it ranks them by loss instead'));
  it('a training metric needs none', () => expectClean(withSchedule('schedule halving { every: 1 epochs, metric: loss }')));
  it('pbt with nothing varied warns', () => expectError(withSchedule('schedule pbt { every: 1 epochs, metric: loss }'), 3015, 'nothing varies'));
});

describe('blocks', () => {
  it('an unknown block is named, with a suggestion', () => expectError(mlp() + 'trian { epochs: 1 }\n', 1009, "unknown block 'trian' (did you mean 'train'?)"));
  it('stray input at the top level', () => expectError(mlp() + '}\n', 1005, "unexpected '}'; a file holds only model, ensemble, train and schedule blocks"));
});

describe('printing', () => {
  it('prints file(line,col), the code, the line and an underline', () =>
    expectDiagnostics(
      'model m(input: [2]) {\n  dense(-5)\n}',
      `test.net(2,9): error NET2005: dense: units must be an integer >= 1, got -5
   2 |   dense(-5)
     |         ~~`,
    ));
  it('never underlines past the end of the line', () => {
    const text = formatDiagnostic({ code: 1, category: 'error', file: 'f', start: 2, length: 99, message: 'm' }, 'abcd\nef');
    expect(text.split('\n')[2]).toBe('     |   ~~');
  });
  const at = (source: string, start: number, length: number) => formatDiagnostic({ code: 1, category: 'error', file: 'f', start, length, message: 'm' }, source);
  it('shows control characters as escapes, so file content never drives the terminal, and underlines the right span', () => {
    const text = at('x\x07\x1b[2Jy = 1', 6, 1);
    expect(text).toBe('f(1,7): error NET1: m\n   1 | x\\x07\\x1b[2Jy = 1\n     |             ~');
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
  });
  it('escapes control characters in the message too', () => {
    const text = formatDiagnostic({ code: 1, category: 'error', file: 'f', start: 0, length: 1, message: "unexpected character '\x1b'" }, '\x1b');
    expect(text.split('\n')[0]).toBe("f(1,1): error NET1: unexpected character '\\x1b'");
  });
  it('windows a long line around its span and clips the underline to the window', () => {
    const line = 'a'.repeat(1500) + 'b'.repeat(1000) + 'c'.repeat(500);
    const [header, excerpt, underline] = at(line, 1500, 1000).split('\n');
    expect(header).toBe('f(1,1501): error NET1: m');
    expect(excerpt.length).toBeLessThanOrEqual(120);
    expect(underline.length).toBeLessThanOrEqual(120);
    // the underline starts under the span's first character and runs to the window's end
    const first = underline.indexOf('~');
    expect(excerpt.slice(first - 1, first + 1)).toBe('ab');
    expect(excerpt.slice(first).replace(/…$/, '')).toMatch(/^b+$/);
    expect(underline.slice(first)).toMatch(/^~+$/);
    expect(excerpt.endsWith('…')).toBe(true);
  });
  it('windows a long line so that a span near its end shows to the end', () => {
    const [, excerpt, underline] = at('x'.repeat(400) + 'END', 400, 3).split('\n');
    expect(excerpt.endsWith('xEND')).toBe(true);
    expect(excerpt).toContain(' | …');
    expect(underline.endsWith('~~~')).toBe(true);
    expect(excerpt.indexOf('END')).toBe(underline.indexOf('~'));
  });
  it('prints at most 50 diagnostics of a file, then how many more there are', () => {
    const source = 'x\n'.repeat(60);
    const many = Array.from({ length: 60 }, (_, i) => ({ code: 1, category: i < 57 ? 'error' : 'warning', file: 'f', start: 2 * i, length: 1, message: 'm' }) as const);
    const text = formatDiagnostics(many, source);
    expect(text.match(/error NET1/g)).toHaveLength(50);
    expect(text.endsWith('\n\nf: 7 more errors and 3 more warnings are not shown')).toBe(true);
  });
  it('keeps every code unique', () => {
    const codes = Object.values(Messages).map((m) => m.code);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
