// Toolsets wired into the daemon: the service, what each session sees of the
// lists, and list_changed per view; a change is published on the event bus and
// a client's new binding closes its sessions (they were opened on the old view).
import type { EventBus } from '../daemon/event-bus.js';
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { McpAuth } from '../http/mcp-auth.js';
import type { Logger } from '../log.js';
import type { SessionRegistry } from '../mcp/sessions.js';
import type { ServerDirectory } from '../router/namespaces.js';
import type { Router } from '../router/router.js';
import { ViewNotifier } from './notifier.js';
import { Toolsets } from './toolsets.js';
import { ViewLists } from './view-lists.js';

export interface ToolsetDeps {
  writer: DbWriterCalls;
  servers: ServerDirectory;
  router: Router;
  bus: EventBus;
  log: Logger;
  /** Created after the toolsets: asked only once changes flow. */
  sessions: () => Pick<SessionRegistry, 'broadcast' | 'closeCredential'>;
  auth: () => McpAuth;
}

export interface ToolsetParts {
  toolsets: Toolsets;
  views: ViewLists;
  notifier: ViewNotifier;
}

export function setupToolsets({ writer, servers, router, bus, log, sessions, auth }: ToolsetDeps): ToolsetParts {
  const at = () => new Date().toISOString();
  const toolsets: Toolsets = new Toolsets(writer, servers, {
    toolsetChanged: (toolset, action) => {
      bus.publish({ type: 'toolset', action, toolset, at: at() });
      notifier.toolsetChanged();
    },
    clientBound: (client) => {
      sessions().closeCredential(auth().rebound(client));
      bus.publish({ type: 'client_bound', client: client.name, toolset: client.toolset, at: at() });
    },
  });
  const views = new ViewLists(router, (name) => toolsets.viewOf(name), (kind) => notifier.listedAcrossChange(kind));
  const notifier = new ViewNotifier(views, (notification, to) => sessions().broadcast(notification, to), log);
  return { toolsets, views, notifier };
}
