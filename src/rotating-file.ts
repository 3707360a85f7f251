// A log file that cannot grow without bound: appended through a Writable (so
// writers get backpressure), and once the next write would take it past
// maxBytes it is renamed to <file>.1 (the older ones shift up to <file>.<keep>,
// the oldest dropped) and a new one started. Disk use per log is at most about
// maxBytes × (keep + 1). A write the disk refuses (full, gone read-only) is
// dropped and counted, never fatal: the file is opened anew for the next one,
// and once one goes through, the loss is said first (`lossNote`). A write the
// file takes only in part is carried on with the rest; refused midway, the part
// is cut off again, so no half line is left.
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, renameSync, rmSync, write, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';

export interface RotationPolicy {
  /** Size at which the file is rotated. */
  maxBytes: number;
  /** Rotated generations kept beside the live file. */
  keep: number;
}

export const DEFAULT_ROTATION: RotationPolicy = { maxBytes: 10 * 1024 * 1024, keep: 3 };

/** COFFER_LOG_MAX_BYTES and COFFER_LOG_KEEP override the defaults; a value that is not a whole number is ignored. */
export function rotationFromEnv(env: NodeJS.ProcessEnv = process.env): RotationPolicy {
  const whole = (raw: string | undefined, min: number): number | undefined => {
    const value = raw === undefined ? NaN : Number(raw);
    return Number.isSafeInteger(value) && value >= min ? value : undefined;
  };
  return {
    maxBytes: whole(env.COFFER_LOG_MAX_BYTES, 1) ?? DEFAULT_ROTATION.maxBytes,
    keep: whole(env.COFFER_LOG_KEEP, 0) ?? DEFAULT_ROTATION.keep,
  };
}

/** <file>.<keep-1> → <file>.<keep> … <file> → <file>.1 (keep 0: the file is removed). Missing generations are skipped. */
export function rotateFiles(path: string, keep: number): void {
  const move = (from: string, to: string): void => {
    try {
      renameSync(from, to);
    } catch {
      // A generation not there (yet), or rotated away by another writer meanwhile.
    }
  };
  if (keep === 0) {
    rmSync(path, { force: true });
    return;
  }
  for (let generation = keep - 1; generation >= 1; generation--) move(`${path}.${generation}`, `${path}.${generation + 1}`);
  move(path, `${path}.1`);
}

/** The line a file writes before its next one when lines were lost: how many, and the error code why. */
export type LossNote = (lost: number, cause: string) => string;

const NEWLINE = 0x0a;

function lineCount(data: Buffer): number {
  let lines = 0;
  for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, at + 1)) lines++;
  return lines;
}

/** Lines the disk refused since the last write that went through, and why: the next write that goes through says so first. */
export class LossTally {
  private lost = 0;
  private because = '';

  constructor(private readonly lossNote?: LossNote) {}

  /** What goes before the next write: the note of the lines lost, if any were. */
  note(): string {
    return this.lost > 0 && this.lossNote ? this.lossNote(this.lost, this.because) : '';
  }

  /** A write (and its note) went through. */
  said(): void {
    this.lost = 0;
  }

  refused(lines: number, error: unknown): void {
    this.lost += lines;
    this.because = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  }
}

/** A write that took no byte and gave no error: it would be retried for ever. */
function tookNothing(): NodeJS.ErrnoException {
  return Object.assign(new Error('the file took nothing'), { code: 'EIO' });
}

export class RotatingFile extends Writable {
  private fd = -1;
  private size = 0;
  private readonly losses: LossTally;
  /** The file ends in part of a line (a write cut short that could not be undone). */
  private torn = false;

  constructor(
    private readonly path: string,
    private readonly policy: RotationPolicy = rotationFromEnv(),
    lossNote?: LossNote,
  ) {
    super();
    this.losses = new LossTally(lossNote);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.open();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.appendAll([chunk]).then(() => callback(), callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.appendAll(chunks.map(({ chunk }) => chunk)).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.closeFd(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.closeFd(() => callback(error));
  }

  /** Buffered writes go out in as few appends as fit before the next rotation. */
  private async appendAll(chunks: Buffer[]): Promise<void> {
    let group: Buffer[] = [];
    let groupBytes = 0;
    for (const chunk of chunks) {
      if (group.length > 0 && this.size + groupBytes + chunk.length > this.policy.maxBytes) {
        await this.append(Buffer.concat(group));
        group = [];
        groupBytes = 0;
      }
      group.push(chunk);
      groupBytes += chunk.length;
    }
    await this.append(group.length === 1 ? group[0]! : Buffer.concat(group));
  }

  private append(data: Buffer): Promise<void> {
    try {
      if (this.fd < 0) this.open();
      else if (this.size > 0 && this.size + data.length > this.policy.maxBytes) this.rotate();
    } catch (error) {
      this.refused(data, error as NodeJS.ErrnoException);
      return Promise.resolve();
    }
    const head = `${this.torn ? '\n' : ''}${this.losses.note()}`;
    const payload = head === '' ? data : Buffer.concat([Buffer.from(head), data]);
    const before = this.size;
    return this.writeAll(payload).then(({ written, error }) => {
      if (error === undefined) {
        this.size += written;
        this.losses.said();
        this.torn = false;
      } else {
        // What the file took of it would be a half line: it is cut off again, or else the next write starts a new line.
        if (written > 0 && !this.cutBack(before)) this.torn = true;
        this.refused(data, error);
      }
    });
  }

  /** A write the file takes only in part (its size limit, a disk filling up) goes on with the rest until done or refused. */
  private writeAll(payload: Buffer): Promise<{ written: number; error?: NodeJS.ErrnoException }> {
    return new Promise((resolve) => {
      const from = (done: number): void => {
        if (done === payload.length) return resolve({ written: done });
        write(this.fd, payload, done, payload.length - done, null, (error, written) => {
          if (error) resolve({ written: done, error });
          else if (written === 0) resolve({ written: done, error: tookNothing() });
          else from(done + written);
        });
      };
      from(0);
    });
  }

  private cutBack(size: number): boolean {
    try {
      ftruncateSync(this.fd, size);
      return true;
    } catch {
      return false;
    }
  }

  /** The lines of `data` are lost; the file is opened anew for the next write (the disk may have room by then). */
  private refused(data: Buffer, error: NodeJS.ErrnoException): void {
    this.losses.refused(lineCount(data), error);
    this.closeFd(() => undefined);
  }

  private open(): void {
    this.fd = openSync(this.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  /** Sync, and rare (once per maxBytes): a few renames and an open, between two writes. */
  private rotate(): void {
    this.closeFd(() => undefined);
    rotateFiles(this.path, this.policy.keep);
    this.open();
  }

  private closeFd(callback: () => void): void {
    if (this.fd >= 0) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = -1;
    }
    callback();
  }
}

/**
 * One synchronous append for a log several processes write by name (each shim
 * a client starts): rotated first if this line would take it past maxBytes.
 * Two writers rotating at once lose at most a generation, never the live file.
 * A line the file takes only in part is cut off again while it is still the
 * file's end (no other writer appended since), so the next line does not run
 * on from half of it; then the write's error is thrown.
 */
export function appendRotating(path: string, text: string, policy: RotationPolicy = rotationFromEnv()): void {
  const data = Buffer.from(text);
  let fd = openSync(path, 'a', 0o600);
  try {
    // One stat: the size decides the rotation, and is where a line cut short is cut back to.
    let before = fstatSync(fd).size;
    if (before > 0 && before + data.length > policy.maxBytes) {
      closeSync(fd);
      fd = -1;
      rotateFiles(path, policy.keep);
      fd = openSync(path, 'a', 0o600);
      before = fstatSync(fd).size;
    }
    let done = 0;
    try {
      while (done < data.length) {
        const written = writeSync(fd, data, done);
        if (written === 0) throw tookNothing();
        done += written;
      }
    } catch (error) {
      if (done > 0 && fstatSync(fd).size === before + done) ftruncateSync(fd, before);
      throw error;
    }
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
