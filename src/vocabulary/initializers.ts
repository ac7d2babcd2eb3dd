// Initialisers. Fans are computed from each member's own (unwidened) parameter shape.
export const initializers = ['glorot_uniform', 'glorot_normal', 'he_uniform', 'he_normal', 'lecun_normal', 'lecun_uniform', 'zeros', 'ones'] as const;
/**
 * Initialisers a layer kind draws its own parameters from, which a .net file cannot name: Keras'
 * RandomUniform(-0.05, 0.05) (`random_uniform`: tf.layers.embedding's default for its tables), `orthogonal`
 * (Keras' default for a recurrent kernel) and `unit_forget_bias` (an lstm's bias: zeros but the forget
 * gate's quarter, ones, as Keras' unit_forget_bias=True).
 */
export const kindInitializers = ['random_uniform', 'orthogonal', 'unit_forget_bias'] as const;
export type Initializer = (typeof initializers)[number] | (typeof kindInitializers)[number];
