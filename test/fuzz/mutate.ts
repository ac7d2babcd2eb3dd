// Seeded mutations of .net sources: character and token deletions, duplications and replacements.
import { netLexer } from '../../src/syntax/tokens.js';

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const noise = ['(', ')', '{', '}', '[', ']', ':', ',', '=', '.', '"', '#', '-', '0', '9', 'e', 'x', ' ', '\n', '@', '\t', 'é', '\\'];

interface Piece {
  start: number;
  end: number;
}

function tokenPieces(source: string): Piece[] {
  return netLexer.tokenize(source).tokens.map((t) => ({ start: t.startOffset, end: t.startOffset + t.image.length }));
}

/** Applies 1 to 3 random mutations; `vocabulary` holds token images to draw replacements from. */
export function mutate(source: string, random: () => number, vocabulary: string[]): string {
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  let s = source;
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i++) {
    const tokens = tokenPieces(s);
    const at = Math.floor(random() * (s.length + 1));
    const splice = (start: number, end: number, text: string) => (s = s.slice(0, start) + text + s.slice(end));
    switch (Math.floor(random() * 7)) {
      case 0: // delete a few characters
        splice(at, at + 1 + Math.floor(random() * 4), '');
        break;
      case 1: // duplicate a few characters
        splice(at, at, s.slice(at, at + 1 + Math.floor(random() * 6)));
        break;
      case 2: // replace a character
        splice(at, at + 1, pick(noise));
        break;
      case 3: // delete a token
        if (tokens.length) {
          const t = pick(tokens);
          splice(t.start, t.end, '');
        }
        break;
      case 4: // duplicate a token
        if (tokens.length) {
          const t = pick(tokens);
          splice(t.end, t.end, ' ' + s.slice(t.start, t.end));
        }
        break;
      case 5: // replace a token with another from the vocabulary
        if (tokens.length) {
          const t = pick(tokens);
          splice(t.start, t.end, pick(vocabulary));
        }
        break;
      case 6: // swap two tokens
        if (tokens.length > 1) {
          const [a, b] = [pick(tokens), pick(tokens)].sort((x, y) => x.start - y.start);
          if (a.end <= b.start) s = s.slice(0, a.start) + s.slice(b.start, b.end) + s.slice(a.end, b.start) + s.slice(a.start, a.end) + s.slice(b.end);
        }
        break;
    }
  }
  return s;
}

export function vocabularyOf(sources: string[]): string[] {
  const images = new Set<string>();
  for (const src of sources) for (const t of netLexer.tokenize(src).tokens) images.add(t.image);
  return [...images, '0', '-1', '1e9', '0.0', '""', 'conv2d', 'add', 'vary', 'schedule', 'from', 'input'];
}
