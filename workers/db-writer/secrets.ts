// Secret config values (stdio env, http/sse headers and OAuth client) are sealed one by one with
// AES-256-GCM before they reach the database, so the file never holds them in clear;
// a stdio command's arguments (`--token=…`) are sealed too, as one value.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { withConfigDefaults, type ServerConfig, type TransportConfig } from '../../src/protocol/server-config.js';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_PREFIX = 'v1:';

/** Reads the key file, or creates it (0600) when missing. */
export function loadOrCreateKey(keyPath: string): Buffer {
  try {
    mkdirSync(dirname(keyPath), { recursive: true, mode: 0o700 });
    // 'wx': never overwrite a key another process just created.
    writeFileSync(keyPath, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = readFileSync(keyPath);
  if (key.length !== KEY_BYTES) throw new Error(`key file ${keyPath} must hold exactly ${KEY_BYTES} bytes, found ${key.length}`);
  return key;
}

/** Binds a sealed value to its place, so a value copied elsewhere in the file does not open. */
function aad(server: string, field: string, name: string): Buffer {
  return Buffer.from(`coffer\0${server}\0${field}\0${name}`, 'utf8');
}

function seal(key: Buffer, context: Buffer, plain: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(context);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** One value sealed for its place (`field` of `server`, under `name`). */
export function sealValue(key: Buffer, server: string, field: string, name: string, plain: string): string {
  return seal(key, aad(server, field, name), plain);
}

export function openValue(key: Buffer, server: string, field: string, name: string, sealed: string): string {
  return open(key, aad(server, field, name), sealed);
}

function open(key: Buffer, context: Buffer, sealed: string): string {
  if (!sealed.startsWith(SEALED_PREFIX)) throw new Error('not a sealed value');
  const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES)).setAAD(context);
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

function mapValues(map: Record<string, string>, fn: (name: string, value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, fn(name, value)]));
}

function mapSecrets(server: string, transport: TransportConfig, fn: (context: Buffer, value: string) => string): TransportConfig {
  if (transport.type === 'stdio') {
    return { ...transport, env: mapValues(transport.env, (name, value) => fn(aad(server, 'env', name), value)) };
  }
  const headers = mapValues(transport.headers, (name, value) => fn(aad(server, 'headers', name), value));
  if (!transport.oauth) return { ...transport, headers };
  return { ...transport, headers, oauth: mapValues(transport.oauth, (name, value) => fn(aad(server, 'oauth-client', name), value)) };
}

/** As stored: a stdio transport's args are one sealed string (an array: written before they were sealed). */
type StoredTransport = TransportConfig | (Omit<TransportConfig & { type: 'stdio' }, 'args'> & { args: string });

/** The text of mcp_servers.config: the config without its name (that is the row's), secrets sealed. */
export function sealConfig(key: Buffer, config: ServerConfig): string {
  const { name, ...rest } = config;
  const transport = mapSecrets(name, config.transport, (context, value) => seal(key, context, value));
  const stored: StoredTransport = transport.type === 'stdio' ? { ...transport, args: seal(key, aad(name, 'args', ''), JSON.stringify(transport.args)) } : transport;
  return JSON.stringify({ ...rest, transport: stored });
}

export function openConfig(key: Buffer, name: string, stored: string): ServerConfig {
  const rest = JSON.parse(stored) as Omit<ServerConfig, 'name' | 'transport'> & { transport: StoredTransport };
  try {
    const sealedArgs = rest.transport.type === 'stdio' && typeof rest.transport.args === 'string' ? rest.transport.args : null;
    const transport = (sealedArgs === null ? rest.transport : { ...rest.transport, args: JSON.parse(open(key, aad(name, 'args', ''), sealedArgs)) as string[] }) as TransportConfig;
    return withConfigDefaults({ name, ...rest, transport: mapSecrets(name, transport, (context, value) => open(key, context, value)) });
  } catch (error) {
    throw new Error(`cannot decrypt the secrets of server "${name}" (is the key file the one they were written with?): ${(error as Error).message}`);
  }
}
