// The one capability-kind table and the lookups derived from it: each surface
// (dispatcher, actor, CLI, REST, invocation log) reads these, so they must
// agree with the MCP methods and with each other.
import t from 'tap';
import {
  CAPABILITY_TYPES,
  KIND_BY_CALL_METHOD,
  KIND_BY_LIST_METHOD,
  KINDS,
  KINDS_CHANGED_BY,
  kindsChangedWith,
  kindsOfType,
  LIST_KINDS,
  PRIMARY_KINDS,
} from '../src/protocol/capabilities.js';

t.test('list and call methods route to their kind, and back', async (t) => {
  t.same([...KIND_BY_LIST_METHOD], [
    ['tools/list', 'tools'],
    ['resources/list', 'resources'],
    ['resources/templates/list', 'resourceTemplates'],
    ['prompts/list', 'prompts'],
  ]);
  t.same([...KIND_BY_CALL_METHOD], [
    ['tools/call', 'tools'],
    ['resources/read', 'resources'],
    ['prompts/get', 'prompts'],
  ]);
  for (const kind of LIST_KINDS) t.equal(KIND_BY_LIST_METHOD.get(KINDS[kind].listMethod), kind, `${kind}: its list method is its own`);
});

t.test('a resources/list_changed covers templates; the others only their own kind', async (t) => {
  t.same(KINDS_CHANGED_BY, {
    'notifications/tools/list_changed': ['tools'],
    'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
    'notifications/prompts/list_changed': ['prompts'],
  });
  t.same(kindsChangedWith('resources'), ['resources', 'resourceTemplates']);
  t.same(kindsChangedWith('resourceTemplates'), ['resources', 'resourceTemplates']);
  t.same(kindsChangedWith('tools'), ['tools']);
});

t.test('templates ride on resources: capability, preference type, announcement', async (t) => {
  t.same(PRIMARY_KINDS, ['tools', 'resources', 'prompts']);
  t.same(CAPABILITY_TYPES, ['tool', 'resource', 'prompt']);
  t.same(kindsOfType('resource'), ['resources', 'resourceTemplates']);
  t.equal(KINDS.resourceTemplates.capability, 'resources');
  t.equal(KINDS.resourceTemplates.identityField, 'uriTemplate');
  t.equal(KINDS.resourceTemplates.callMethod, undefined, 'a template is not read by itself');
});
