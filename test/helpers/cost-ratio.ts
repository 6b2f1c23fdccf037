// How many times longer `work` takes than `baseline`, ordinary work of the same functions:
// measured in alternate rounds (a machine busy for part of the test slows both alike), each at
// its fastest round (the least disturbed). It bounds hangs, such as a regular expression that
// backtracks on a run of spaces, by a ratio rather than by milliseconds: bounds in milliseconds
// failed on a busy machine (stop 59: 3.2 s against a bound of 2 s, the suite beside two busy
// loops and three other sessions).
export function costRatio(work: () => void, baseline: () => void, rounds = 5): number {
  work(); // warm-up
  baseline();
  let fastWork = Infinity;
  let fastBaseline = Infinity;
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    baseline();
    fastBaseline = Math.min(fastBaseline, performance.now() - t);
    t = performance.now();
    work();
    fastWork = Math.min(fastWork, performance.now() - t);
  }
  return fastWork / Math.max(fastBaseline, 0.001);
}
