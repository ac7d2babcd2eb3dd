// Activation functions a layer's `activation:` argument may name; each is also a layer of its own.
export const activations = ['linear', 'relu', 'sigmoid', 'tanh', 'softmax', 'gelu', 'elu', 'leaky_relu', 'swish'] as const;
export type Activation = (typeof activations)[number];
