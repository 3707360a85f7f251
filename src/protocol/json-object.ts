// The one test for "a JSON object" (not null, not an array) that the actor and
// the main thread share. Pure.
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
