// The environment a stdio upstream starts with: only what a program needs to
// run (and find its tools, home and locale), never the daemon's secrets, plus
// the server's configured env. NODE_OPTIONS is left out on purpose: it would
// inject the daemon's node flags into every node-based upstream.

const INHERITED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LANGUAGE', 'TMPDIR', 'TZ'];

export function childEnv(parent: NodeJS.ProcessEnv, configured: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined || value.startsWith('()')) continue; // exported shell functions
    if (INHERITED.includes(key) || key.startsWith('LC_')) env[key] = value;
  }
  return { ...env, ...configured };
}
