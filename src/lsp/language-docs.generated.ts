// Generated from docs/language.md by scripts/generate-lsp-docs.ts (npm run lsp-docs): do not edit.
import type { DocLine } from './language-docs.js';

export const languageDocs: readonly DocLine[] = [
  {
    "section": "Blocks",
    "names": [
      "model"
    ],
    "text": "| `model NAME(input: SHAPE) { ... }` | exactly one | the layers of one member |",
    "header": "| block | how many | what it holds |",
    "line": 79
  },
  {
    "section": "Blocks",
    "names": [
      "ensemble"
    ],
    "text": "| `ensemble { ... }` | at most one | `members` (default 1), `seed` (default 0), `split` (none) and `vary` lines |",
    "header": "| block | how many | what it holds |",
    "line": 80
  },
  {
    "section": "Blocks",
    "names": [
      "train"
    ],
    "text": "| `train { ... }` | at most one | data, loss, optimizer and how long to train; `netc check` accepts a file without one, `netc train` and `netc compile` need it |",
    "header": "| block | how many | what it holds |",
    "line": 81
  },
  {
    "section": "Blocks",
    "names": [
      "schedule"
    ],
    "text": "| `schedule NAME { ... }` | any number, each kind once | how the population changes while it trains: `pbt`, `halving`, `early_stopping` |",
    "header": "| block | how many | what it holds |",
    "line": 82
  },
  {
    "section": "The model block",
    "names": [
      "add"
    ],
    "text": "- `add(a, b, ...)` and `concat(a, b, ...)` read two or more labelled outputs (`input` among them if wanted): `add` sums outputs of one shape (residual connections), `concat` joins them along the last axis.",
    "line": 98
  },
  {
    "section": "Shared layers",
    "names": [
      "shared"
    ],
    "text": "- `shared` goes before a layer with weights: `dense`, `conv2d`, `conv1d`, `embedding`, `batchnorm`, `layernorm`, `lstm`, `gru`, `attention` (`shared relu()` is an error, NET2019). With a label it follows the `=`: `trunk = shared dense(16)`.",
    "line": 130
  },
  {
    "section": "The ensemble block",
    "names": [
      "members"
    ],
    "text": "- `members` (default 1): how many copies of the model train together. `--members N` on the command line overrides it.",
    "line": 167
  },
  {
    "section": "The ensemble block",
    "names": [
      "seed"
    ],
    "text": "- `seed` (default 0): the seed of everything random: initial weights, drawn hyperparameters, generated data, shuffling, dropout. Member *i* draws its initial weights from (seed, *i*) alone, so it starts at the same weights whatever the member count. `--seed S` overrides it.",
    "line": 169
  },
  {
    "section": "The ensemble block",
    "names": [
      "vary"
    ],
    "text": "- `vary PATH: SPACE` gives each member its own value of one hyperparameter.",
    "line": 172
  },
  {
    "section": "The ensemble block",
    "names": [
      "uniform"
    ],
    "text": "| `uniform(a, b)` | a value drawn uniformly from [a, b) |",
    "header": "| space | member *i* gets |",
    "line": 187
  },
  {
    "section": "The ensemble block",
    "names": [
      "loguniform"
    ],
    "text": "| `loguniform(a, b)` | a value drawn uniformly on a log scale from [a, b); a > 0 |",
    "header": "| space | member *i* gets |",
    "line": 188
  },
  {
    "section": "The ensemble block",
    "names": [
      "choice"
    ],
    "text": "| `choice(v1, v2, ...)` | one of the values, drawn uniformly |",
    "header": "| space | member *i* gets |",
    "line": 189
  },
  {
    "section": "Members on their own data: split",
    "names": [
      "kfold"
    ],
    "text": "| `kfold(k)` | every training example but those of fold *i* mod *k*, in the data's order | fold *i* mod *k* |",
    "header": "| split | member *i* trains on | and validates on |",
    "line": 217
  },
  {
    "section": "Members on their own data: split",
    "names": [
      "bootstrap"
    ],
    "text": "| `bootstrap()` | *n* draws with replacement from the *n* training examples, from (seed, *i*), in the order drawn | the examples it never drew (its out-of-bag set), in the data's order |",
    "header": "| split | member *i* trains on | and validates on |",
    "line": 218
  },
  {
    "section": "The train block",
    "names": [
      "data"
    ],
    "text": "| `data` | required | the data source (below) |",
    "header": "| key | default | meaning |",
    "line": 267
  },
  {
    "section": "The train block",
    "names": [
      "loss"
    ],
    "text": "| `loss` | required | the loss function (below); the model's last layer must fit it and the labels |",
    "header": "| key | default | meaning |",
    "line": 268
  },
  {
    "section": "The train block",
    "names": [
      "optimizer"
    ],
    "text": "| `optimizer` | `adam()` | the optimizer and its hyperparameters (below) |",
    "header": "| key | default | meaning |",
    "line": 269
  },
  {
    "section": "The train block",
    "names": [
      "lr_schedule"
    ],
    "text": "| `lr_schedule` | none (a constant rate) | how each member's learning rate moves while it trains (below) |",
    "header": "| key | default | meaning |",
    "line": 270
  },
  {
    "section": "The train block",
    "names": [
      "batch"
    ],
    "text": "| `batch` | `32` | examples per step; every member sees the same batches (under a `split`, a batch of its own examples) |",
    "header": "| key | default | meaning |",
    "line": 271
  },
  {
    "section": "The train block",
    "names": [
      "epochs"
    ],
    "text": "| `epochs` | one of the two is required | passes over the training examples |",
    "header": "| key | default | meaning |",
    "line": 272
  },
  {
    "section": "The train block",
    "names": [
      "steps"
    ],
    "text": "| `steps` | | optimizer steps (`steps: 0` leaves the members untrained) |",
    "header": "| key | default | meaning |",
    "line": 273
  },
  {
    "section": "The train block",
    "names": [
      "validation"
    ],
    "text": "| `validation` | `0` | the fraction held out for validation, in [0, 1): the examples right before the test split (or the data's last) |",
    "header": "| key | default | meaning |",
    "line": 274
  },
  {
    "section": "The train block",
    "names": [
      "test"
    ],
    "text": "| `test` | `0` | the fraction held out for testing, in [0, 1): the data's last examples, never trained or ranked on; `validation + test` must be below 1 |",
    "header": "| key | default | meaning |",
    "line": 275
  },
  {
    "section": "The train block",
    "names": [
      "metrics"
    ],
    "text": "| `metrics` | `[accuracy]` (a regression loss: none) | what is computed per member besides the loss: `accuracy`, `mse`, `mae` (`loss` may be listed; it always is); `accuracy` needs a classification loss |",
    "header": "| key | default | meaning |",
    "line": 276
  },
  {
    "section": "The train block",
    "names": [
      "shuffle"
    ],
    "text": "| `shuffle` | `true` | shuffle the batches from the seed each epoch; `false` keeps the data's order, batch after batch |",
    "header": "| key | default | meaning |",
    "line": 277
  },
  {
    "section": "The train block",
    "names": [
      "holdout"
    ],
    "text": "| `holdout` | `last` | which examples `validation` and `test` hold out: `last`, the data's last in its order (as Keras' `validation_split`), or `shuffled`, a sample drawn from the ensemble's seed (the same seed, the same split); a held-out split that lacks a class training has is a warning (NET4034), which data sorted by class gives under `last` |",
    "header": "| key | default | meaning |",
    "line": 278
  },
  {
    "section": "Learning-rate schedules",
    "names": [
      "constant"
    ],
    "text": "| `constant()` | 1 |",
    "header": "| schedule | f(t) |",
    "line": 300
  },
  {
    "section": "Learning-rate schedules",
    "names": [
      "step"
    ],
    "text": "| `step(every: Q, gamma: g)` | g ^ floor(t / Q) |",
    "header": "| schedule | f(t) |",
    "line": 301
  },
  {
    "section": "Learning-rate schedules",
    "names": [
      "exponential"
    ],
    "text": "| `exponential(every: Q, gamma: g)` | g ^ (t / Q) |",
    "header": "| schedule | f(t) |",
    "line": 302
  },
  {
    "section": "Learning-rate schedules",
    "names": [
      "cosine"
    ],
    "text": "| `cosine(warmup: W, min: m)` | (t + 1) / W for t < W; then m + (1 - m)(1 + cos(pi p)) / 2, p = (t - W) / (T - W) |",
    "header": "| schedule | f(t) |",
    "line": 303
  },
  {
    "section": "Learning-rate schedules",
    "names": [
      "linear"
    ],
    "text": "| `linear(warmup: W, min: m)` | the same warmup; then 1 - (1 - m) p |",
    "header": "| schedule | f(t) |",
    "line": 304
  },
  {
    "section": "Learning-rate schedules",
    "names": [
      "plateau"
    ],
    "text": "| `plateau(metric:, patience:, factor:, min_delta:, min_lr:)` | starts at 1; at an epoch's end, a member whose `metric` has not improved by `min_delta` for `patience` epochs has its factor multiplied by `factor` (its rate never below `min_lr`), as Keras' ReduceLROnPlateau |",
    "header": "| schedule | f(t) |",
    "line": 305
  },
  {
    "section": "Schedules",
    "names": [
      "pbt"
    ],
    "text": "| `pbt` | `every` (required), `metric` (`val_loss`), `quantile` (0.25, in (0, 0.5]), `perturb` (`[0.8, 1.2]`), `resample` (0.25) | population-based training: each member of the bottom `quantile` copies the weights and optimizer state of a member of the top `quantile`, then perturbs each varied hyperparameter by a factor from `perturb`, or with probability `resample` draws it anew |",
    "header": "| schedule | keys (defaults) | what it does |",
    "line": 378
  },
  {
    "section": "Schedules",
    "names": [
      "halving"
    ],
    "text": "| `halving` | `every` (required), `metric` (`val_loss`), `keep` (0.5, in (0, 1)), `min_members` (1) | successive halving: at each interval all but the best `keep` fraction stop, down to `min_members` |",
    "header": "| schedule | keys (defaults) | what it does |",
    "line": 379
  },
  {
    "section": "Schedules",
    "names": [
      "early_stopping"
    ],
    "text": "| `early_stopping` | `patience` (required, epochs), `metric` (`val_loss`), `min_delta` (0), `restore_best` (`false`) | stops a member once its metric has not improved by `min_delta` for `patience` epochs; with `restore_best: true` the stopped member keeps the weights of its best epoch |",
    "header": "| schedule | keys (defaults) | what it does |",
    "line": 380
  },
  {
    "section": "Layers",
    "names": [
      "dense"
    ],
    "text": "| `dense(units)` | `units` | a fully connected layer on the last axis; input `[n]`, or a sequence `[t, n]` to `[t, units]` (every step by the same kernel, as Keras' `Dense`) |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 393
  },
  {
    "section": "Layers",
    "names": [
      "conv2d"
    ],
    "text": "| `conv2d(filters, kernel:, stride:, padding:)` | `filters`, `kernel: 3`, `stride: 1`, `padding: valid` | a 2-D convolution; input `[h, w, c]`; `padding: same` keeps `h` and `w` at stride 1 |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 394
  },
  {
    "section": "Layers",
    "names": [
      "maxpool2d"
    ],
    "text": "| `maxpool2d(size, stride:, padding:)` | `size: 2`, `stride:` the size, `padding: valid` | max over each window |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 395
  },
  {
    "section": "Layers",
    "names": [
      "avgpool2d"
    ],
    "text": "| `avgpool2d(size, stride:, padding:)` | as `maxpool2d` | mean over each window |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 396
  },
  {
    "section": "Layers",
    "names": [
      "conv1d"
    ],
    "text": "| `conv1d(filters, kernel:, stride:, padding:)` | `filters`, `kernel: 3`, `stride: 1`, `padding: valid` | a 1-D convolution over the steps of a sequence; input `[t, c]`, output `[t', filters]` |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 397
  },
  {
    "section": "Layers",
    "names": [
      "maxpool1d"
    ],
    "text": "| `maxpool1d(size, stride:, padding:)` | `size: 2`, `stride:` the size, `padding: valid` | max over each window of steps; input `[t, c]` |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 398
  },
  {
    "section": "Layers",
    "names": [
      "avgpool1d"
    ],
    "text": "| `avgpool1d(size, stride:, padding:)` | as `maxpool1d` | mean over each window of steps |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 399
  },
  {
    "section": "Layers",
    "names": [
      "global_avg_pool",
      "global_max_pool"
    ],
    "text": "| `global_avg_pool()`, `global_max_pool()` | | each channel's mean or maximum over the image, `[h, w, c]` to `[c]`, or over a sequence's steps, `[t, c]` to `[c]` |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 400
  },
  {
    "section": "Layers",
    "names": [
      "embedding"
    ],
    "text": "| `embedding(vocab, dim, positions:)` | `vocab`, `dim`, `positions:` none | a learned `[dim]` vector for each token id: input `[t]` of integer ids in `[0, vocab)`, output `[t, dim]`; `positions: t` (the input's length) adds a learned `[t, dim]` table, one vector per step |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 401
  },
  {
    "section": "Layers",
    "names": [
      "flatten"
    ],
    "text": "| `flatten()` | | `[h, w, c]` to `[h*w*c]` |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 402
  },
  {
    "section": "Layers",
    "names": [
      "dropout"
    ],
    "text": "| `dropout(rate)` | `rate`, in [0, 1) | drops inputs while training; each member draws its own mask |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 403
  },
  {
    "section": "Layers",
    "names": [
      "batchnorm"
    ],
    "text": "| `batchnorm(momentum:, epsilon:)` | `momentum: 0.99`, `epsilon: 0.001` | normalises over the batch; statistics per member |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 404
  },
  {
    "section": "Layers",
    "names": [
      "layernorm"
    ],
    "text": "| `layernorm(epsilon:)` | `epsilon: 0.001` | normalises over the last axis (each step of a sequence on its own) |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 405
  },
  {
    "section": "Layers",
    "names": [
      "lstm"
    ],
    "text": "| `lstm(units, sequences:)` | `units`, `sequences: false` | a long short-term memory over a sequence: input `[t, f]`; its last state `[units]`, or every step's `[t, units]` with `sequences: true`; Keras' LSTM (tanh, sigmoid gates, the forget gate's bias starting at 1) |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 406
  },
  {
    "section": "Layers",
    "names": [
      "gru"
    ],
    "text": "| `gru(units, sequences:, reset_after:)` | `units`, `sequences: false`, `reset_after: true` | a gated recurrent unit over a sequence: input `[t, f]`, output as `lstm`; `reset_after: true` is Keras' and PyTorch's form, `reset_after: false` TF.js's (the only one `netc extract` writes as a TF.js model) |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 407
  },
  {
    "section": "Layers",
    "names": [
      "attention"
    ],
    "text": "| `attention(heads, causal:)` | `heads`, `causal: false` | multi-head self-attention over a sequence `[t, f]` to `[t, f]`: query, key, value and output projections (`[f, f]` kernels and biases), `heads` heads of `f / heads` features each (`heads` must divide `f`), scores scaled by `1 / sqrt(f / heads)`; `causal: true` lets a step attend to itself and earlier steps only. On wasm it trains in the generated step (a `shared` one on TF.js ops), and `netc extract` writes it for PyTorch and ONNX but not for TF.js (tfjs-layers has no such layer) |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 408
  },
  {
    "section": "Layers",
    "names": [
      "add"
    ],
    "text": "| `add(a, b, ...)` | two or more labels | element-wise sum of outputs of one shape |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 409
  },
  {
    "section": "Layers",
    "names": [
      "concat"
    ],
    "text": "| `concat(a, b, ...)` | two or more labels | joins outputs along the last axis |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 410
  },
  {
    "section": "Layers",
    "names": [
      "relu",
      "sigmoid",
      "tanh",
      "softmax",
      "gelu",
      "elu",
      "swish"
    ],
    "text": "| `relu()`, `sigmoid()`, `tanh()`, `softmax()`, `gelu()`, `elu()`, `swish()` | | an activation as a layer of its own |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 411
  },
  {
    "section": "Layers",
    "names": [
      "leaky_relu"
    ],
    "text": "| `leaky_relu(alpha)` | `alpha: 0.2` | |",
    "header": "| layer | arguments (defaults) | notes |",
    "line": 412
  },
  {
    "section": "Layers",
    "names": [
      "activation"
    ],
    "text": "| `activation:` | `linear` | an activation (below), applied to the layer's output |",
    "header": "| option | default | values |",
    "line": 421
  },
  {
    "section": "Layers",
    "names": [
      "bias"
    ],
    "text": "| `bias:` | `true` | `false` leaves the bias out |",
    "header": "| option | default | values |",
    "line": 422
  },
  {
    "section": "Layers",
    "names": [
      "init"
    ],
    "text": "| `init:` | `glorot_uniform` | the kernel's initialiser (below) |",
    "header": "| option | default | values |",
    "line": 423
  },
  {
    "section": "Layers",
    "names": [
      "bias_init"
    ],
    "text": "| `bias_init:` | `zeros` | the bias's initialiser |",
    "header": "| option | default | values |",
    "line": 424
  },
  {
    "section": "Activations",
    "names": [
      "linear",
      "relu",
      "sigmoid",
      "tanh",
      "softmax",
      "gelu",
      "elu",
      "leaky_relu",
      "alpha",
      "activation",
      "swish"
    ],
    "text": "`linear` (the default: none), `relu`, `sigmoid`, `tanh`, `softmax`, `gelu`, `elu`, `leaky_relu` (with `alpha` 0.2 when used as `activation: leaky_relu`), `swish`.",
    "line": 428
  },
  {
    "section": "Activations",
    "names": [
      "alpha",
      "activation",
      "swish"
    ],
    "text": "`alpha` 0.2 when used as `activation: leaky_relu`), `swish`.",
    "line": 429
  },
  {
    "section": "Initialisers",
    "names": [
      "glorot_uniform",
      "glorot_normal",
      "he_uniform",
      "he_normal",
      "lecun_normal",
      "lecun_uniform",
      "zeros",
      "ones"
    ],
    "text": "`glorot_uniform` (the default for kernels), `glorot_normal`, `he_uniform`, `he_normal`, `lecun_normal`, `lecun_uniform`, `zeros` (the default for biases), `ones`.",
    "line": 433
  },
  {
    "section": "Initialisers",
    "names": [
      "lecun_uniform",
      "zeros",
      "ones"
    ],
    "text": "`lecun_uniform`, `zeros` (the default for biases), `ones`.",
    "line": 434
  },
  {
    "section": "Losses",
    "names": [
      "mse"
    ],
    "text": "| `mse` | regression: mean squared error |",
    "header": "| loss | for |",
    "line": 440
  },
  {
    "section": "Losses",
    "names": [
      "mae"
    ],
    "text": "| `mae` | regression: mean absolute error |",
    "header": "| loss | for |",
    "line": 441
  },
  {
    "section": "Losses",
    "names": [
      "huber"
    ],
    "text": "| `huber(delta)` | regression: squared below `delta` (default 1), absolute above |",
    "header": "| loss | for |",
    "line": 442
  },
  {
    "section": "Losses",
    "names": [
      "binary_crossentropy"
    ],
    "text": "| `binary_crossentropy` | two classes, one `sigmoid` output |",
    "header": "| loss | for |",
    "line": 443
  },
  {
    "section": "Losses",
    "names": [
      "categorical_crossentropy"
    ],
    "text": "| `categorical_crossentropy` | K classes, K `softmax` outputs (labels one-hot encoded by netc) |",
    "header": "| loss | for |",
    "line": 444
  },
  {
    "section": "Losses",
    "names": [
      "sparse_categorical_crossentropy"
    ],
    "text": "| `sparse_categorical_crossentropy` | K classes, K `softmax` outputs, integer labels |",
    "header": "| loss | for |",
    "line": 445
  },
  {
    "section": "Optimizers",
    "names": [
      "sgd"
    ],
    "text": "| `sgd(lr, momentum, nesterov)` | `lr: 0.01`, `momentum: 0`, `nesterov: false`, `weight_decay: 0`, `clipnorm: 0` |",
    "header": "| optimizer | arguments (defaults) |",
    "line": 456
  },
  {
    "section": "Optimizers",
    "names": [
      "adam"
    ],
    "text": "| `adam(lr, beta1, beta2, epsilon)` | `lr: 0.001`, `beta1: 0.9`, `beta2: 0.999`, `epsilon: 1e-7`, `clipnorm: 0` |",
    "header": "| optimizer | arguments (defaults) |",
    "line": 457
  },
  {
    "section": "Optimizers",
    "names": [
      "adamw"
    ],
    "text": "| `adamw(lr, weight_decay, beta1, beta2, epsilon)` | `lr: 0.001`, `weight_decay: 0.004`, `beta1: 0.9`, `beta2: 0.999`, `epsilon: 1e-7`, `clipnorm: 0` |",
    "header": "| optimizer | arguments (defaults) |",
    "line": 458
  },
  {
    "section": "Optimizers",
    "names": [
      "rmsprop"
    ],
    "text": "| `rmsprop(lr, rho, momentum, epsilon)` | `lr: 0.001`, `rho: 0.9`, `momentum: 0`, `epsilon: 1e-7`, `clipnorm: 0` |",
    "header": "| optimizer | arguments (defaults) |",
    "line": 459
  },
  {
    "section": "Data sources",
    "names": [
      "xor"
    ],
    "text": "| `xor(n, noise)` | `n: 200`, `noise: 0.1` | points `[2]` in 2 classes, generated from the seed |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 468
  },
  {
    "section": "Data sources",
    "names": [
      "moons"
    ],
    "text": "| `moons(n, noise)` | `n: 400`, `noise: 0.1` | two interleaved half circles: `[2]`, 2 classes |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 469
  },
  {
    "section": "Data sources",
    "names": [
      "spirals"
    ],
    "text": "| `spirals(n, classes, noise)` | `n: 400`, `classes: 2`, `noise: 0.1` | interleaved spirals: `[2]`, `classes` classes |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 470
  },
  {
    "section": "Data sources",
    "names": [
      "iris"
    ],
    "text": "| `iris(limit, offset)` | `limit: 150`, `offset: 0` | Fisher's 150 irises: `[4]`, 3 classes |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 471
  },
  {
    "section": "Data sources",
    "names": [
      "mnist"
    ],
    "text": "| `mnist(limit, offset)` | `limit: 10000` (at most 10000), `offset: 0` | handwritten digits `[28, 28, 1]`, 10 classes |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 472
  },
  {
    "section": "Data sources",
    "names": [
      "fashion_mnist"
    ],
    "text": "| `fashion_mnist(limit, offset)` | `limit: 10000` (at most 10000), `offset: 0` | clothing images `[28, 28, 1]`, 10 classes |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 473
  },
  {
    "section": "Data sources",
    "names": [
      "csv"
    ],
    "text": "| `csv(\"file.csv\", label: \"y\")` | the path; `label:` a column or a list of columns (default: the first) | a header row, then numbers: the other columns are the features |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 474
  },
  {
    "section": "Data sources",
    "names": [
      "idx"
    ],
    "text": "| `idx(images: \"...\", labels: \"...\", classes:)` | both paths required; `classes: 10` | the MNIST file format, plain or gzip |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 475
  },
  {
    "section": "Data sources",
    "names": [
      "npy"
    ],
    "text": "| `npy(x: \"...\", y: \"...\", classes:)` | both paths required; `classes: 10` | NumPy `.npy` arrays: features x `[count, ...]`, labels y |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 476
  },
  {
    "section": "Data sources",
    "names": [
      "npz"
    ],
    "text": "| `npz(\"file.npz\", x: \"...\", y: \"...\", classes:)` | the path and both keys required; `classes: 10` | two arrays of a NumPy `.npz` archive (`np.savez`, `np.savez_compressed`) |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 477
  },
  {
    "section": "Data sources",
    "names": [
      "text"
    ],
    "text": "| `text(\"file.csv\", text: \"...\", label: \"...\", vocab:, length:)` | the path and both columns required; `vocab: 10000`, `length: 100` | a csv column of text as `length` token ids `[length]`, labels as csv's |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 478
  },
  {
    "section": "Data sources",
    "names": [
      "spam_assassin"
    ],
    "text": "| `spam_assassin(vocab, length, limit, offset)` | `vocab: 10000`, `length: 100`, `limit: 6046`, `offset: 0` | 6,046 emails as token ids `[length]`: ham 0, spam 1 |",
    "header": "| source | arguments (defaults) | gives |",
    "line": 479
  }
];
