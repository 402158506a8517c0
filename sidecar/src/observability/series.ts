/**
 * A series of `/metrics` as data: its name, its help and how to read it at each scrape. The series of what a process
 * opened by choice (a storage engine's, the signing threads') are declared where that is, and registered by metrics.ts:
 * a gauge each, or a counter for a name ending in `_total` (a running total the source keeps, set as it is).
 */

/** null: absent at this scrape (a gauge keeps no value of its own, a counter the last one it had). */
export type ScrapedSeries = readonly [name: string, help: string, read: () => number | null];

/** Series each read from one snapshot; `stats()` null: none of them at this scrape. */
export function snapshotSeries<S>(
  stats: () => S | null,
  series: readonly (readonly [name: string, help: string, read: (s: S) => number])[],
): ScrapedSeries[] {
  return series.map(([name, help, read]) => [
    name,
    help,
    () => {
      const now = stats();
      return now === null ? null : read(now);
    },
  ]);
}
