// The models the export tests train for a few steps and export: between them every layer kind, every
// activation (as a layer and as `activation:`), branches, padding `same` in its asymmetric cases, a shared
// trunk, and members whose varied layer arguments differ from the file's.
export interface ExportCase {
  name: string;
  source: string;
  /** the CSV's feature count (the input's size) and label classes */
  features: number;
  classes: number;
  input: number[];
  members: number;
  /** the input holds token ids in [0, tokens) (an embedding reads it), not numbers */
  tokens?: number;
  /**
   * what the exported models are held to: the TF.js LayersModel `netc extract` writes (the default), or, for
   * a model TF.js cannot load (gru with reset_after: true), the members as netc computes them on TF.js ops
   */
  reference?: 'op path';
}

const train = (loss: string) => `train { data: csv("d.csv", label: "y") loss: ${loss} optimizer: adam(lr: 0.05) batch: 8 steps: 3 }`;

export const exportCases: ExportCase[] = [
  {
    name: 'conv + batchnorm + pooling + flatten + dense',
    features: 60,
    classes: 3,
    input: [6, 5, 2],
    members: 2,
    source: `model conv(input: [6, 5, 2]) {
  conv2d(3, kernel: 3, padding: same, activation: relu)
  b = batchnorm(momentum: 0.5)
  conv2d(4, kernel: [2, 3], stride: 2, padding: same, activation: elu)
  maxpool2d(2, stride: 1, padding: same)
  avgpool2d([2, 3], stride: [2, 1], padding: same)
  conv2d(2, kernel: [2, 3], padding: same, bias: false)
  maxpool2d(3, stride: 1, padding: same)
  flatten()
  dense(5, activation: tanh)
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 2 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'branches (from:, add, concat), layernorm and every activation',
    features: 4,
    classes: 3,
    input: [4],
    members: 2,
    source: `model branches(input: [4]) {
  a = dense(6, activation: relu)
  b = dense(6, activation: tanh, from: input)
  s = add(a, b)
  c = dense(5, activation: gelu, from: input)
  cat = concat(s, c)
  ln = layernorm()
  sigmoid()
  dense(6, activation: swish)
  elu()
  dense(6, activation: elu)
  leaky_relu(0.1)
  dense(6, activation: leaky_relu)
  gelu()
  swish()
  tanh()
  relu()
  dense(6, activation: sigmoid)
  softmax()
  dense(3, activation: softmax, bias: false)
}
ensemble { members: 2 seed: 3 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'a shared trunk',
    features: 4,
    classes: 3,
    input: [4],
    members: 3,
    source: `model trunk(input: [4]) {
  trunk = shared dense(8, activation: relu)
  n = shared batchnorm(momentum: 0.5)
  dense(3, activation: softmax)
}
ensemble { members: 3 seed: 4 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: "members whose varied layer arguments differ from the file's",
    features: 60,
    classes: 2,
    input: [6, 5, 2],
    members: 3,
    source: `model varied(input: [6, 5, 2]) {
  conv2d(3, kernel: 3, activation: relu)
  bn = batchnorm()
  flatten()
  drop = dropout(0.2)
  ln = layernorm()
  slope = leaky_relu(0.2)
  dense(1, activation: sigmoid)
}
ensemble {
  members: 3
  seed: 5
  vary drop.rate: [0.1, 0.3, 0.5]
  vary bn.epsilon: [0.001, 0.01, 0.1]
  vary bn.momentum: [0.5, 0.9, 0.99]
  vary slope.alpha: [0.05, 0.3, 0.6]
  vary ln.epsilon: [0.001, 0.1, 0.5]
}
${train('binary_crossentropy')}
`,
  },
  {
    name: 'image branches, layernorm on channels, and a flatten whose order meets another in an add',
    features: 48,
    classes: 3,
    input: [4, 4, 3],
    members: 2,
    source: `model images(input: [4, 4, 3]) {
  a = conv2d(2, kernel: 3, padding: same, activation: swish)
  b = conv2d(2, kernel: 1, from: input)
  s = add(a, b)
  l = layernorm(epsilon: 0.01)
  c = concat(l, a)
  avgpool2d(3, stride: 2, padding: same)
  f = flatten()
  g = dense(16, activation: tanh)
  add(f, g)
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 6 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'global pooling of a conv and of the input',
    features: 40,
    classes: 3,
    input: [5, 4, 2],
    members: 2,
    source: `model pooled(input: [5, 4, 2]) {
  c = conv2d(4, kernel: 3, padding: same, activation: relu)
  a = global_avg_pool()
  m = global_max_pool(from: c)
  i = global_max_pool(from: input)
  concat(a, m, i)
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 8 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'examples of other ranks ([steps, features]), kept channels last',
    features: 12,
    classes: 3,
    input: [3, 4],
    members: 2,
    source: `model sequence(input: [3, 4]) {
  bn = batchnorm(momentum: 0.5)
  layernorm()
  softmax()
  a = leaky_relu(0.3)
  concat(a, bn)
  flatten()
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 7 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'a sequence of token ids: embedding, conv1d, the 1-D pools (padding same, even and uneven), global pools over steps',
    features: 8,
    classes: 3,
    input: [8],
    members: 2,
    tokens: 9,
    source: `model tokens(input: [8]) {
  e = embedding(9, 4)
  conv1d(5, kernel: 2, padding: same, activation: relu)
  maxpool1d(3, stride: 2, padding: same)
  conv1d(3, kernel: 3, padding: same, activation: tanh)
  maxpool1d(2)
  avgpool1d(2, stride: 1, padding: same)
  a = global_avg_pool()
  c = conv1d(2, kernel: 3, bias: false, from: e)
  avgpool1d(3, stride: 1, padding: same)
  m = global_max_pool()
  concat(a, m)
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 9 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'lstm and gru (reset_after: false) over sequences, every step and the last',
    features: 15,
    classes: 3,
    input: [5, 3],
    members: 2,
    source: `model recurrent(input: [5, 3]) {
  lstm(4, sequences: true)
  gru(3, sequences: true, reset_after: false)
  lstm(3)
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 9 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'gru (reset_after: true, which TF.js cannot load), every step and the last',
    features: 15,
    classes: 3,
    input: [5, 3],
    members: 2,
    reference: 'op path',
    source: `model resetafter(input: [5, 3]) {
  gru(4, sequences: true)
  gru(3)
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 10 }
${train('sparse_categorical_crossentropy')}
`,
  },
  {
    name: 'a transformer encoder on a sequence: attention, causal attention, dense and layernorm on [steps, features]',
    features: 24,
    classes: 3,
    input: [4, 6],
    members: 2,
    reference: 'op path',
    source: `model encoder(input: [4, 6]) {
  h = dense(8)
  a = attention(2)
  r = add(h, a)
  n = layernorm()
  dense(16, activation: relu)
  f = dense(8)
  add(n, f)
  layernorm(epsilon: 0.01)
  attention(heads: 4, causal: true)
  flatten()
  dense(3, activation: softmax)
}
ensemble { members: 2 seed: 9 }
${train('sparse_categorical_crossentropy')}
`,
  },
];
