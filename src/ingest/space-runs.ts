// Runs of spaces in a value ("1850 €      HC") read as one space. The value parsers' regular
// expressions try a run of spaces from each of its characters, so their work grew with the
// square of its length: a 100-character run cost about 0.5 ms a value, 100-270 times an
// ordinary value (stop 60: a test bounding that ratio at 250 failed in CI). Squeezed first, it
// costs what an ordinary value does. A refusal's reason still shows the value as it was given.
import type { Parsed } from './parsed.js';

const SPACE_RUN = /\s{2,}/g;

export function spaceRunsSqueezed<T, A extends unknown[]>(
  read: (v: unknown, ...rest: A) => Parsed<T>,
  show: (v: unknown) => string,
  maxLength: number,
): (v: unknown, ...rest: A) => Parsed<T> {
  return (v, ...rest) => {
    // (A text over the cap is refused as it is: squeezed, it could pass under it.)
    if (typeof v !== 'string' || v.length > maxLength || !/\s\s/.test(v)) return read(v, ...rest);
    const squeezed = v.replace(SPACE_RUN, ' ');
    const parsed = read(squeezed, ...rest);
    return parsed.ok ? parsed : { ok: false, reason: parsed.reason.replace(show(squeezed), () => show(v)) };
  };
}
