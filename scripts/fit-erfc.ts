// Fits the polynomial that src/wasm/math.ts's erf uses above |x| = LO: R(x) = erfc(x) exp(x^2) on [LO, 4],
// by least squares on Chebyshev nodes, in double precision, against erfc from its continued fraction.
// Run: npx tsx scripts/fit-erfc.ts DEGREE LO  (prints the coefficients in u = (x - mid) / half, highest first, and the error)

/** erfc(x) for x >= 1, by the continued fraction erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))). */
function erfcScaled(x: number): number {
  // R(x) = erfc(x) exp(x^2) = 1/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
  let f = x;
  for (let k = 400; k >= 1; k--) f = x + k / 2 / f;
  return 1 / Math.sqrt(Math.PI) / f;
}

const degree = Number(process.argv[2] ?? 11);
const [lo, hi] = [Number(process.argv[3] ?? 1), 4];
const mid = (lo + hi) / 2;
const half = (hi - lo) / 2;
const nodes = 400;
// least squares in the basis of powers of u = (x - 2.5) / 1.5, by normal equations on Chebyshev nodes
const xs = Array.from({ length: nodes }, (_, i) => (lo + hi) / 2 + ((hi - lo) / 2) * Math.cos((Math.PI * (i + 0.5)) / nodes));
const us = xs.map((x) => (x - mid) / half);
const ys = xs.map(erfcScaled);
const m = degree + 1;
const A = Array.from({ length: m }, () => new Array(m + 1).fill(0));
for (let i = 0; i < nodes; i++) {
  const pow = Array.from({ length: m }, (_, j) => us[i] ** j);
  const w = 1 / (ys[i] * ys[i]); // relative error
  for (let r = 0; r < m; r++) {
    for (let c = 0; c < m; c++) A[r][c] += w * pow[r] * pow[c];
    A[r][m] += w * pow[r] * ys[i];
  }
}
for (let c = 0; c < m; c++) {
  let p = c;
  for (let r = c + 1; r < m; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
  [A[c], A[p]] = [A[p], A[c]];
  for (let r = 0; r < m; r++) {
    if (r === c) continue;
    const f = A[r][c] / A[c][c];
    for (let k = c; k <= m; k++) A[r][k] -= f * A[c][k];
  }
}
const coef = A.map((row, i) => row[m] / A[i][i]);
let worst = 0;
for (let i = 0; i <= 3000; i++) {
  const x = lo + ((hi - lo) * i) / 3000;
  const u = (x - mid) / half;
  const p = coef.reduceRight((acc, c) => acc * u + c, 0);
  worst = Math.max(worst, Math.abs(p / erfcScaled(x) - 1));
}
console.log(JSON.stringify(coef.slice().reverse().map((c) => Number(c.toPrecision(10)))));
console.log(`degree ${degree}: worst relative error ${worst.toExponential(2)}`);
