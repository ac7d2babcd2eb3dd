// Initialisers. Fans are computed from each member's own (unwidened) parameter shape.
export const initializers = ['glorot_uniform', 'glorot_normal', 'he_uniform', 'he_normal', 'lecun_normal', 'lecun_uniform', 'zeros', 'ones'] as const;
export type Initializer = (typeof initializers)[number];
