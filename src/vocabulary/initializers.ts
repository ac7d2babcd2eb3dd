// Initialisers. Fans are computed from each member's own (unwidened) parameter shape.
export const initializers = ['glorot_uniform', 'glorot_normal', 'he_uniform', 'he_normal', 'lecun_normal', 'lecun_uniform', 'zeros', 'ones'] as const;
/**
 * What a parameter may be drawn from: the choices above, and Keras' RandomUniform(-0.05, 0.05), which no
 * `init:` argument names but embedding's tables start from (tf.layers.embedding's default, `randomUniform`)
 */
export type Initializer = (typeof initializers)[number] | 'random_uniform';
