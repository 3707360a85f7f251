/** Every stored timestamp: ISO-8601, UTC, milliseconds (sorts as text). */
export function now(): string {
  return new Date().toISOString();
}
