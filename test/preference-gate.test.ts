// The preference snapshot while the DB writer is still reconciling a list: a
// resource or template key a live list shows governs the URIs it names at
// once, for the switches and for a toolset alike, so a read right after the
// first list is decided as every later one is. A held writer, no threads.
import t from 'tap';
import type { CapabilityType } from '../src/protocol/capabilities.js';
import type { PreferenceRow } from '../src/protocol/db.js';
import { Logger } from '../src/log.js';
import { PreferenceGate } from '../src/router/preference-gate.js';
import type { Upstream } from '../src/upstreams/upstream.js';
import { serverConfig } from './fixtures/fixture-servers.js';

const TEMPLATE = 'fixture://items/{id}';
const ITEM = 'fixture://items/7';

/** A writer whose reconcile answers only when the test releases it. */
function heldWriter() {
  const held: Array<() => void> = [];
  const writer = {
    reconcile: (server: string, type: CapabilityType, keys: string[], autoEnable: boolean) =>
      new Promise<{ ok: true; value: PreferenceRow[] }>((resolve) => {
        const at = new Date().toISOString();
        const rows = keys.map((key) => ({ server, capability_type: type, capability_key: key, enabled: autoEnable, first_seen_at: at, last_seen_at: at, own_name: null, own_description: null }));
        held.push(() => resolve({ ok: true, value: rows }));
      }),
  };
  return { writer, held };
}

function upstream(autoEnable: boolean): Upstream {
  const config = { ...serverConfig('r', { type: 'stdio', command: 'none', args: [], env: {}, cwd: null }), auto_enable_new_capabilities: autoEnable };
  return { name: 'r', config } as unknown as Upstream;
}

for (const autoEnable of [true, false]) {
  t.test(`a template a live list shows governs what it generates before its row is written (auto-enable ${autoEnable})`, async (t) => {
    const { writer, held } = heldWriter();
    const gate = new PreferenceGate(writer, () => autoEnable, new Logger(null, 'error'));
    const outsideSet = (key: string) => key !== TEMPLATE;
    t.equal(gate.resourceRule('r', ITEM, outsideSet), null, 'no key is known before the list');

    const reconciled = gate.observe(upstream(autoEnable), 'resourceTemplates', [{ uriTemplate: TEMPLATE, name: 'item' }], 1);
    t.equal(held.length, 1, 'the writer is still reconciling');
    t.same(gate.resourceRule('r', ITEM, outsideSet), { by: 'template', key: TEMPLATE, enabled: false }, 'a toolset without the template refuses what it generates');
    t.same(gate.resourceDecision('r', ITEM), { by: 'template', key: TEMPLATE, enabled: autoEnable }, "the switch is the template's, by the policy until its row is in");

    held[0]!();
    await reconciled;
    t.same(gate.resourceRule('r', ITEM, outsideSet), { by: 'template', key: TEMPLATE, enabled: false }, 'the same key governs once reconciled');
    t.same(gate.resourceDecision('r', ITEM), { by: 'template', key: TEMPLATE, enabled: autoEnable });

    gate.forget('r');
    t.equal(gate.resourceRule('r', ITEM, outsideSet), null, 'a forgotten server governs nothing');
  });
}

t.test('a reconcile that fails leaves the keys governing by the policy; a named kind adds no resource key', async (t) => {
  const writer = { reconcile: async () => ({ ok: false as const, error: { code: 'INTERNAL' as const, message: 'disk full' } }) };
  const logged: string[] = [];
  const log = { error: (message: string) => void logged.push(message) } as unknown as Logger;
  const gate = new PreferenceGate(writer, () => false, log);
  await gate.observe(upstream(false), 'tools', [{ name: 'fixture://items/{id}' }], 1);
  t.equal(gate.resourceRule('r', ITEM, () => true), null, "a tool's name is not a resource key");
  await gate.observe(upstream(false), 'resources', [{ uri: ITEM, name: 'seven' }], 1);
  t.same(gate.resourceDecision('r', ITEM), { by: 'resource', key: ITEM, enabled: false });
  t.same(logged, ['reconcile failed', 'reconcile failed'], 'each failure is logged');
});
