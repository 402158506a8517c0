/** Index keys before the time: `[...prefix, ms, …]` (a trail's [ms, ordinal], or the filter index's [policyId, status, ms, fp]). */
export type KeyPrefix = readonly (string | number)[];

/**
 * Range options for a newest-first walk of the keys `[...prefix, ms, …]`, both time bounds inclusive.
 * Reversed, `start` is the upper bound (inclusive) and `end` the lower one (exclusive). The key [...prefix, t] sorts
 * before every [...prefix, t, …]: [floor(to) + 1] keeps every record of millisecond floor(to), [ceil(from)] every
 * record of millisecond ceil(from). With a prefix both bounds are set even when open (Unix ms lie between -1 and
 * MAX_SAFE_INTEGER), or the walk would run into the next prefix's keys.
 */
export function timeRange(
  from: number | undefined,
  to: number | undefined,
  prefix: KeyPrefix = [],
): { reverse: true; start?: (string | number)[]; end?: (string | number)[] } {
  const bounded = prefix.length > 0;
  return {
    reverse: true,
    ...(to === undefined && !bounded ? {} : { start: [...prefix, to === undefined ? Number.MAX_SAFE_INTEGER : Math.floor(to) + 1] }),
    ...(from === undefined && !bounded ? {} : { end: [...prefix, from === undefined ? -1 : Math.ceil(from)] }),
  };
}
