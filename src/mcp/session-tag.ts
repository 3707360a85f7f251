// What is published about a session: a short opaque tag, never its id. The id
// works as a bearer credential for the session; invocation rows, REST and the
// admin WebSocket only need to tell sessions apart. A keyed hash (the key lives
// and dies with the daemon, like the sessions) cannot be reversed or
// recomputed from outside.
import { createHmac, randomBytes } from 'node:crypto';

const TAG_HEX_CHARS = 12;

export class SessionTags {
  private readonly key = randomBytes(32);

  tag(sessionId: string): string {
    return createHmac('sha256', this.key).update(sessionId).digest('hex').slice(0, TAG_HEX_CHARS);
  }
}
