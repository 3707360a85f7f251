// Shapes of the REST answers the views read: the daemon's own types (type-only imports; nothing of the server is bundled).
import type { ClientCredential, PreferenceRow } from '../../src/protocol/db.js';
import type { ToolsetRecord } from '../../src/protocol/toolsets.js';
export type { OwnWords } from '../../src/protocol/db.js';

export type { CapabilitiesView, CapabilityItem, CapabilityType, KindView } from '../../src/protocol/capabilities.js';
export type { SessionMode, TransportConfig } from '../../src/protocol/server-config.js';
/** One entry of details.errors of CONFIG_INVALID: a field path and what is wrong with it. */
export type { FieldError } from '../../src/registry/server-config.js';
/** GET /servers/{name}: the config (secrets shown as "[redacted]") with its health. */
export type { ServerHealth, ServerView } from '../../src/registry/registry.js';
export type { CofferEvent, InvocationRecord } from '../../src/protocol/events.js';

/** One known key in the details of a 503/504 capabilities answer (R6): name, switch, last seen. */
export type KnownKey = Omit<PreferenceRow, 'server' | 'first_seen_at'>;

export type { InvocationRow } from '../../src/protocol/db.js';
export type { TestConnectionReport as TestReport } from '../../src/protocol/jobs.js';
/** GET/POST /servers/{name}/oauth: how the server's last sign-in went (never a token). */
export type { SignInStatus } from '../../src/oauth/sign-ins.js';
export type { ProtocolSetting } from '../../src/protocol/server-config.js';
export type { ToolsetServerRule } from '../../src/protocol/toolsets.js';
/** GET /toolsets: each toolset with its endpoint and the clients bound to it. */
export type ToolsetInfo = ToolsetRecord & { endpoint: string; clients: string[] };
/** GET /clients: a client credential (never its token) and the toolset it is held to (null: the whole surface). */
export type ClientInfo = Pick<ClientCredential, 'name' | 'created_at' | 'toolset'>;
