// The search-quality corpus: real servers' tool lists as captured by capture.ts.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface CorpusTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface CorpusServer {
  server: string;
  package: string;
  version: string;
  tools: CorpusTool[];
}

/** In the source tree (dist/bench/search → bench/search), so a capture is committed with the code. */
export const CORPUS_FILE = fileURLToPath(new URL('../../../bench/search/real-tools.json', import.meta.url));

export function loadCorpus(): CorpusServer[] {
  return (JSON.parse(readFileSync(CORPUS_FILE, 'utf8')) as { servers: CorpusServer[] }).servers;
}
