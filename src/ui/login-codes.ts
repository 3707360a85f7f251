// One-time login codes for the web UI. `coffer ui` asks for one with the
// token; the page redeems it once for the token. Codes live only in daemon
// memory, are kept by their SHA-256 (a lookup reveals nothing through timing,
// and a heap dump holds no usable code) and expire after a short while. Each
// is bound to the token it was issued under: once that token is rotated away
// its codes redeem nothing, so an old token cannot be traded for the new one.
import { createHash, randomBytes } from 'node:crypto';

export interface LoginCodeOptions {
  /** How long a code may wait to be redeemed. Default 2 minutes. */
  ttlMs: number;
  /** Unredeemed codes kept at once; the oldest is dropped beyond it. Default 32. */
  maxOutstanding: number;
  now(): number;
}

const DEFAULT_LOGIN_CODE_OPTIONS: LoginCodeOptions = { ttlMs: 120_000, maxOutstanding: 32, now: Date.now };

export interface IssuedCode {
  code: string;
  expires_at: string;
}

const digest = (code: string, token: string): string => createHash('sha256').update(token).update('\0').update(code).digest('hex');

export class LoginCodes {
  private readonly options: LoginCodeOptions;
  /** digest → expiry (ms); insertion order is age order. */
  private readonly pending = new Map<string, number>();

  constructor(options: Partial<LoginCodeOptions> = {}) {
    this.options = { ...DEFAULT_LOGIN_CODE_OPTIONS, ...options };
  }

  /** A code redeemable while `token` is the daemon's token. */
  issue(token: string): IssuedCode {
    this.sweep();
    while (this.pending.size >= this.options.maxOutstanding) this.pending.delete(this.pending.keys().next().value!);
    const code = randomBytes(24).toString('base64url');
    const expiresAt = this.options.now() + this.options.ttlMs;
    this.pending.set(digest(code, token), expiresAt);
    return { code, expires_at: new Date(expiresAt).toISOString() };
  }

  /** True once per issued code, before it expires and while `token` is the one it was issued under; the code is spent either way. */
  redeem(code: string, token: string): boolean {
    const key = digest(code, token);
    const expiresAt = this.pending.get(key);
    this.pending.delete(key);
    return expiresAt !== undefined && expiresAt > this.options.now();
  }

  /** Unredeemed, unexpired codes (tests). */
  get outstanding(): number {
    this.sweep();
    return this.pending.size;
  }

  private sweep(): void {
    const now = this.options.now();
    for (const [key, expiresAt] of this.pending) if (expiresAt <= now) this.pending.delete(key);
  }
}
