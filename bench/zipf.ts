/**
 * Zipf's law (s = 1), the distribution every varied mix draws its requests from: the variant of
 * rank k (1-based) has probability (1/k) / H(n).
 */

/** Cumulative Zipf (s = 1) probabilities of ranks 1..n, scaled to 1e9 (the last is exactly 1e9). */
export function zipfCumulative(n: number): number[] {
  let harmonic = 0;
  for (let k = 1; k <= n; k++) harmonic += 1 / k;
  const out: number[] = [];
  let sum = 0;
  for (let k = 1; k <= n; k++) {
    sum += 1 / k / harmonic;
    out.push(k === n ? 1e9 : Math.min(1e9, Math.ceil(sum * 1e9)));
  }
  return out;
}

/** The expected share of requests that repeat an earlier one (a cache that never evicts): 1 - distinct/requests. */
export function zipfRepeatShare(n: number, requests: number): number {
  let harmonic = 0;
  for (let k = 1; k <= n; k++) harmonic += 1 / k;
  let distinct = 0;
  for (let k = 1; k <= n; k++) distinct += 1 - Math.pow(1 - 1 / k / harmonic, requests);
  return 1 - distinct / requests;
}
