/** A query string of the members that are set: numbers as decimals, Dates as ISO 8601 instants. */
export function queryOf(query: object): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query) as [string, string | number | Date | undefined][]) {
    if (value !== undefined) params.set(name, value instanceof Date ? value.toISOString() : String(value));
  }
  return params;
}
