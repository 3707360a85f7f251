// What the writer worker posts on its events port (writer-handle listens).
import type { AuditEntry, RetentionTable } from '../../src/protocol/db.js';

export type WriterEvent =
  | { type: 'audit'; entry: AuditEntry }
  | { type: 'pruned'; pruned: Record<RetentionTable, number>; periodic: boolean }
  | { type: 'prune_failed'; message: string };
