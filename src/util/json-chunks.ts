// JSON.stringify(value)'s text (no indent), piece by piece: a long array is written a few thousand elements
// at a time, and a LazyArray's elements are made as the writer comes to them, so that writing 100,000
// members' checkpoint manifest needs neither its whole text nor all its rows on the host at once.

/** An array whose elements are made when they are written (`at(i)`), one at a time. */
export class LazyArray<T> {
  constructor(
    readonly length: number,
    readonly at: (i: number) => T,
  ) {}
}

/** Elements of an array joined into one piece. */
const PIECE = 4096;

/**
 * The pieces of JSON.stringify(value): the same text, for the values JSON.stringify writes (plain objects,
 * arrays, typed values with toJSON), where a LazyArray is written as the array of its elements.
 */
export function* jsonChunks(value: unknown): Generator<string> {
  if (value instanceof LazyArray) {
    yield* arrayChunks(value.length, value.at);
    return;
  }
  if (Array.isArray(value) && value.length > PIECE) {
    yield* arrayChunks(value.length, (i) => value[i]);
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  let first = true;
  yield '{';
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* jsonChunks(v);
  }
  yield '}';
}

/** `[e0,e1,...]`, PIECE elements a piece, each as JSON.stringify writes an array's element (undefined: null). */
function* arrayChunks(length: number, at: (i: number) => unknown): Generator<string> {
  yield '[';
  for (let from = 0; from < length; from += PIECE) {
    const parts: string[] = [];
    for (let i = from; i < Math.min(length, from + PIECE); i++) {
      const e = at(i);
      parts.push(e !== null && typeof e === 'object' ? [...jsonChunks(e)].join('') : (JSON.stringify(e) ?? 'null'));
    }
    yield (from ? ',' : '') + parts.join(',');
  }
  yield ']';
}
