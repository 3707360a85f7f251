// transport.oauth for a machine client signing assertions (private_key_jwt) and
// a client ID metadata document URL: what the config accepts and refuses.
import t from 'tap';
import { parseServerConfig, type FieldError } from '../src/registry/server-config.js';

const PEM = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n';
const http = (oauth: Record<string, string>) => ({ name: 'remote', transport: { type: 'http', url: 'https://mcp.example.com/mcp', oauth } });

function refused(oauth: Record<string, string>): string[] {
  const result = parseServerConfig(http(oauth));
  if (result.ok) return [];
  return (result.error.details as { errors: FieldError[] }).errors.map((error) => `${error.field}: ${error.message}`);
}

t.test('private_key_jwt: a PEM key (line breaks and all) for client_credentials', async (t) => {
  t.same(refused({ client_id: 'machine', private_key: PEM, private_key_alg: 'ES256', grant_type: 'client_credentials' }), []);
  t.match(refused({ client_id: 'machine', private_key: 'not a key' }), [/private_key: must be a PKCS#8 PEM key/]);
  t.match(refused({ client_id: 'machine', private_key: PEM, private_key_alg: 'HS256' }), [/private_key_alg: must be one of/]);
  t.match(refused({ private_key: PEM }), [/private_key: needs client_id/]);
  t.match(refused({ client_id: 'machine', client_secret: 's', private_key: PEM }), [/not both/]);
  t.match(refused({ client_id: 'machine', grant_type: 'client_credentials' }), [/needs client_id and client_secret or private_key/]);
});

t.test('line breaks stay refused outside the key', async (t) => {
  t.match(refused({ client_id: 'a\nb' }), [/client_id: must not contain line breaks/]);
  t.match(refused({ client_id: 'a', client_secret: 'SECRET\r\n' }), [/client_secret: must not contain line breaks/]);
});

t.test('client_metadata_url: an https URL with a path', async (t) => {
  t.same(refused({ client_metadata_url: 'https://coffer.example.com/client.json' }), []);
  t.match(refused({ client_metadata_url: 'http://coffer.example.com/client.json' }), [/client_metadata_url: must be an https/]);
  t.match(refused({ client_metadata_url: 'https://coffer.example.com/' }), [/client_metadata_url: must be an https/]);
});
